import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { parseChat } from "../../support/chat-sse";
import { BASE, rpc } from "../../support/helpers";

type Json = Record<string, unknown>;

async function chat(body: unknown, path = "/chat") {
  const response = await SELF.fetch(`${BASE}${path}`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  return { response, frames: response.ok ? parseChat(await response.text()) : [] };
}

describe("chat endpoint (N1–N7) on a handler-based agent", () => {
  it("N1 N2 N5: start, chunks that concatenate to the answer, then exactly one done; every frame has an id", async () => {
    const { response, frames } = await chat({ message: "streams are fun" });
    expect(response.headers.get("content-type")).toMatch(/text\/event-stream/);
    expect(frames[0]?.event).toBe("start");
    const { taskId, sessionId, model } = (frames[0]?.data ?? {}) as Json;
    expect(typeof taskId).toBe("string");
    expect(typeof sessionId).toBe("string");
    expect(model).toBeNull(); // the demo has no model
    const chunks = frames.filter((f) => f.event === "chunk");
    expect(chunks.length).toBeGreaterThan(1);
    expect(chunks.map((f) => f.data.content).join("")).toBe("You said: streams are fun");
    expect(frames.filter((f) => f.event === "done")).toHaveLength(1);
    expect(frames.at(-1)).toMatchObject({
      event: "done",
      data: { taskId, sessionId, state: "completed", hasThinking: false },
    });
    expect(typeof frames.at(-1)?.data.totalTimeMs).toBe("number");
    const ids = frames.map((f) => f.id as number);
    expect(ids.every((id) => Number.isInteger(id))).toBe(true);
    expect([...ids].sort((a, b) => a - b)).toEqual(ids);

    // The same task, over A2A.
    const task = (await rpc("GetTask", { id: taskId })).body.result as Json;
    expect((task.status as Json).state).toBe("TASK_STATE_COMPLETED");
    expect(task.contextId).toBe(sessionId);
  });

  it("N3 N4: tool_call parts run by the default execution show as tool_call then tool_result", async () => {
    const { frames } = await chat({
      message: {
        messageId: "chat-tool-1",
        role: "ROLE_USER",
        parts: [
          {
            data: { toolName: "add", args: { a: 2, b: 40 }, callId: "c1" },
            metadata: { "edgelink/part": "tool_call" },
          },
        ],
      },
    });
    expect(frames.map((f) => f.event)).toEqual(["start", "tool_call", "tool_result", "done"]);
    expect(frames[1]?.data).toEqual({ tool: "add", arguments: { a: 2, b: 40 }, toolCallId: "c1" });
    expect(frames[2]?.data).toEqual({
      tool: "add",
      content: "42",
      toolCallId: "c1",
      isError: false,
    });
  });

  it("N6: a failing task ends with one error event and no done", async () => {
    const { frames } = await chat({ message: "fail" });
    expect(frames.at(-1)).toEqual({
      id: expect.any(Number),
      event: "error",
      data: { error: "You asked me to fail, so I did." },
    });
    expect(frames.some((f) => f.event === "done")).toBe(false);
  });

  it("N5: sessionId continues a conversation; input-required ends the turn with the question and done", async () => {
    const first = await chat({ message: "hello" });
    const { sessionId, taskId } = (first.frames[0]?.data ?? {}) as Json;
    expect(first.frames.slice(1).map((f) => [f.event, f.data.content ?? f.data.state])).toEqual([
      ["chunk", "Hi! What's your name?"],
      ["done", "input-required"],
    ]);
    const answer = await chat({
      message: { messageId: "chat-ada", role: "ROLE_USER", taskId, parts: [{ text: "Ada" }] },
      sessionId,
    });
    expect(answer.frames[0]?.data).toMatchObject({ taskId, sessionId });
    expect(answer.frames.at(-1)).toMatchObject({ event: "done", data: { state: "completed" } });

    // A replay from the start shows both turns, each closed by its own done.
    const replay = parseChat(await (await SELF.fetch(`${BASE}/chat/${taskId}`)).text());
    expect(replay.filter((f) => f.event === "start")).toHaveLength(1);
    expect(replay.filter((f) => f.event === "done").map((f) => f.data.state)).toEqual([
      "input-required",
      "completed",
    ]);
    expect(replay.at(-1)?.event).toBe("done");
  });

  it("N7: GET /chat/{taskId} with Last-Event-ID resumes right after that event; without it replays the task", async () => {
    const { frames } = await chat({ message: "one two three four" });
    const { taskId } = (frames[0]?.data ?? {}) as Json;
    const firstChunk = frames.find((f) => f.event === "chunk");
    const after = await SELF.fetch(`${BASE}/chat/${taskId}`, {
      headers: { "Last-Event-ID": String(firstChunk?.id) },
    });
    const resumed = parseChat(await after.text());
    const rest = frames.slice(frames.indexOf(firstChunk as never) + 1);
    expect(resumed).toEqual(rest);
    expect(resumed.some((f) => f.event === "start")).toBe(false);

    const replay = parseChat(await (await SELF.fetch(`${BASE}/chat/${taskId}`)).text());
    expect(replay[0]?.event).toBe("start");
    expect(
      replay
        .filter((f) => f.event === "chunk")
        .map((f) => f.data.content)
        .join(""),
    ).toBe("You said: one two three four");
    expect(replay.at(-1)?.event).toBe("done");
  });

  it("N1: works under a tenant, isolated from other tenants", async () => {
    const { frames } = await chat({ message: "tenant talk" }, "/acme/chat");
    const { taskId } = (frames[0]?.data ?? {}) as Json;
    expect(frames.at(-1)?.event).toBe("done");
    const own = await SELF.fetch(`${BASE}/acme/chat/${taskId}`);
    expect(parseChat(await own.text()).at(-1)?.event).toBe("done");
    const other = await SELF.fetch(`${BASE}/chat/${taskId}`);
    expect(other.status).toBe(404);
  });

  it("bad requests are 4xx naming the field, and store nothing", async () => {
    for (const [body, field] of [
      [{}, "message"],
      [{ message: "" }, "message"],
      [{ message: 42 }, "message"],
      [{ message: "hi", sessionId: 7 }, "sessionId"],
      [[1], "body"],
    ] as const) {
      const { response } = await chat(body);
      expect(response.status).toBe(400);
      const error = ((await response.json()) as { error: Json }).error;
      expect(String(error.message)).toContain(field);
    }
    // A sessionId the agent did not issue is refused naming sessionId, the field the
    // client sent (client-chosen ids are refused by default; a forged issued-shape one always).
    for (const sessionId of [`mine-${crypto.randomUUID()}`, `c.${"A".repeat(32)}`]) {
      const { response } = await chat({ message: "hi", sessionId });
      expect(response.status, sessionId).toBe(400);
      const error = ((await response.json()) as { error: Json }).error;
      expect(String(error.message), sessionId).toContain("sessionId");
      expect(JSON.stringify(error), sessionId).not.toContain("params.message.contextId");
    }
    const own = await chat({
      message: {
        messageId: "chat-own",
        role: "ROLE_USER",
        parts: [{ text: "hi" }],
        contextId: "mine",
      },
    });
    expect(own.response.status).toBe(400);
    expect(String(((await own.response.json()) as { error: Json }).error.message)).toContain(
      "message.contextId",
    );
    const bad = await SELF.fetch(`${BASE}/chat`, { method: "POST", body: "hi" });
    expect(bad.status).toBe(415);
    const unknown = await SELF.fetch(`${BASE}/chat/nope`);
    expect(unknown.status).toBe(404);
    const badId = await SELF.fetch(`${BASE}/chat/nope`, { headers: { "Last-Event-ID": "x" } });
    expect(badId.status).toBe(400);
  });
});
