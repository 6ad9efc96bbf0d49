/**
 * The chat endpoint (N1–N7) over a real socket, read the way a browser's EventSource
 * reads it: `event:`/`data:`/`id:` lines parsed as they arrive, and after a dropped
 * connection a reconnect to the task's chat URL with `Last-Event-ID`.
 *
 * Catalogue IDs: /work/shared/spec/features.md.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DemoAgent, startDemoAgent } from "./support/worker";

let agent: DemoAgent;

beforeAll(async () => {
  agent = await startDemoAgent(40);
});

afterAll(async () => {
  await agent?.stop();
});

interface Frame {
  id: string | null;
  event: string;
  data: Record<string, unknown>;
}

/**
 * A minimal EventSource over fetch (EventSource itself cannot POST): yields frames as
 * their blank line arrives and remembers the last event id, as the browser does.
 */
class ChatSource {
  lastEventId: string | null = null;

  async *read(response: Response): AsyncGenerator<Frame> {
    expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      for (let end = buffer.indexOf("\n\n"); end >= 0; end = buffer.indexOf("\n\n")) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        let event = "message";
        let data = "";
        let id: string | null = null;
        for (const line of block.split("\n")) {
          if (line.startsWith(":")) continue;
          const colon = line.indexOf(":");
          const field = line.slice(0, colon);
          const text = line.slice(colon + 1).replace(/^ /, "");
          if (field === "event") event = text;
          else if (field === "data") data += text;
          else if (field === "id") id = text;
        }
        if (id !== null) this.lastEventId = id;
        if (data) yield { id, event, data: JSON.parse(data) };
      }
    }
  }
}

describe("chat endpoint over a real socket (N1–N7)", () => {
  it("N7: a client dropped mid-answer reconnects with Last-Event-ID and gets exactly the rest", async () => {
    const words = "alpha beta gamma delta epsilon zeta eta theta iota kappa";
    const source = new ChatSource();
    const abort = new AbortController();
    const first = await fetch(`${agent.baseUrl}/chat`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ message: words }),
      signal: abort.signal,
    });
    const seen: Frame[] = [];
    for await (const frame of source.read(first)) {
      seen.push(frame);
      if (seen.filter((f) => f.event === "chunk").length === 3) break;
    }
    abort.abort(); // the connection drops mid-answer
    expect(seen[0]?.event).toBe("start");
    const taskId = seen[0]?.data.taskId as string;

    const again = await fetch(`${agent.baseUrl}/chat/${encodeURIComponent(taskId)}`, {
      headers: { "Last-Event-ID": source.lastEventId ?? "" },
    });
    const rest: Frame[] = [];
    for await (const frame of source.read(again)) rest.push(frame);

    const all = [...seen, ...rest];
    expect(rest.some((f) => f.event === "start")).toBe(false);
    expect(all.filter((f) => f.event === "done")).toHaveLength(1);
    expect(all.at(-1)?.event).toBe("done");
    const answer = all.filter((f) => f.event === "chunk").map((f) => f.data.content);
    expect(answer.join("")).toBe(`You said: ${words}`);
    // Ids only grow: nothing was sent twice.
    const ids = all.map((f) => Number(f.id));
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort((a, b) => a - b)).toEqual(ids);

    // The same task over A2A.
    const task = await fetch(`${agent.baseUrl}/tasks/${encodeURIComponent(taskId)}`, {
      headers: { "A2A-Version": "1.0" },
    });
    expect(((await task.json()) as { status: { state: string } }).status.state).toBe(
      "TASK_STATE_COMPLETED",
    );
  });

  it("N3 N4 N6: tool work and failures over the socket", async () => {
    const source = new ChatSource();
    const tools = await fetch(`${agent.baseUrl}/chat`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({
        message: {
          messageId: "e2e-chat-tool",
          role: "ROLE_USER",
          parts: [
            {
              data: { toolName: "reverse", args: { text: "abc" }, callId: "r1" },
              metadata: { "edgelink/part": "tool_call" },
            },
          ],
        },
      }),
    });
    const frames: Frame[] = [];
    for await (const frame of source.read(tools)) frames.push(frame);
    expect(frames.map((f) => f.event)).toEqual(["start", "tool_call", "tool_result", "done"]);
    expect(frames[2]?.data).toMatchObject({ tool: "reverse", toolCallId: "r1", isError: false });

    const failing = await fetch(`${agent.baseUrl}/chat`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ message: "fail" }),
    });
    const ended: Frame[] = [];
    for await (const frame of source.read(failing)) ended.push(frame);
    expect(ended.map((f) => f.event)).toEqual(["start", "error"]);
  });
});
