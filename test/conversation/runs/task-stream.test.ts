import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import {
  BASE,
  parseSse,
  readEvents,
  rpc,
  send,
  userMessage,
  waitForState,
} from "../../support/helpers";

type Json = Record<string, unknown>;

function post(body: Json, headers: Record<string, string> = { "A2A-Version": "1.0" }) {
  return SELF.fetch(`${BASE}/`, {
    method: "POST",
    headers: { "Content-Type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
}

function streamRequest(text: string, extra: Json = {}, id: number | string = 7) {
  return post({
    jsonrpc: "2.0",
    id,
    method: "SendStreamingMessage",
    params: { message: userMessage(text, extra) },
  });
}

function subscribeRequest(taskId: string, headers: Record<string, string> = {}) {
  return post(
    { jsonrpc: "2.0", id: 9, method: "SubscribeToTask", params: { id: taskId } },
    { "A2A-Version": "1.0", ...headers },
  );
}

const results = (events: { data: Json }[]) => events.map((e) => e.data.result as Json);
const stateOf = (r: Json) => ((r.statusUpdate as Json)?.status as Json)?.state;

describe("SendStreamingMessage", () => {
  it("streams the task, then status and artifact chunks, then closes at completed (D4)", async () => {
    const response = await streamRequest("one two three");
    expect(response.headers.get("Content-Type")).toContain("text/event-stream");
    const events = parseSse(await response.text());
    for (const e of events) expect(e.data).toMatchObject({ jsonrpc: "2.0", id: 7 });
    const ids = events.map((e) => e.id as number);
    expect(ids.every((id) => Number.isInteger(id))).toBe(true);
    expect([...ids].sort((a, b) => a - b)).toEqual(ids);

    const [first, ...rest] = results(events);
    expect((((first as Json).task as Json).status as Json).state).toBe("TASK_STATE_SUBMITTED");
    expect(stateOf(rest[0] as Json)).toBe("TASK_STATE_WORKING");
    const chunks = rest.filter((r) => r.artifactUpdate).map((r) => r.artifactUpdate as Json);
    expect(chunks.map((c) => ((c.artifact as Json).parts as Json[])[0]?.text).join("")).toBe(
      "You said: one two three",
    );
    expect(chunks[0]?.append).toBeUndefined();
    expect(chunks.slice(1).every((c) => c.append === true)).toBe(true);
    expect(chunks.at(-1)?.lastChunk).toBe(true);
    expect(stateOf(rest.at(-1) as Json)).toBe("TASK_STATE_COMPLETED");
  });

  it("closes at an interrupted state; the reply streams on the same task", async () => {
    const first = results(parseSse(await (await streamRequest("hello")).text()));
    expect(stateOf(first.at(-1) as Json)).toBe("TASK_STATE_INPUT_REQUIRED");
    const taskId = ((first[0] as Json).task as Json).id as string;
    const second = results(parseSse(await (await streamRequest("Lin", { taskId })).text()));
    expect(((second[0] as Json).task as Json).id).toBe(taskId);
    expect(stateOf(second.at(-1) as Json)).toBe("TASK_STATE_COMPLETED");
  });

  it("the HTTP+JSON binding streams bare StreamResponse objects", async () => {
    const response = await SELF.fetch(`${BASE}/message:stream`, {
      method: "POST",
      headers: { "Content-Type": "application/json", "A2A-Version": "1.0" },
      body: JSON.stringify({ message: userMessage("rest stream") }),
    });
    const events = parseSse(await response.text());
    expect(events[0]?.data.task).toBeDefined();
    expect(events[0]?.data.jsonrpc).toBeUndefined();
    expect(stateOf(events.at(-1)?.data as Json)).toBe("TASK_STATE_COMPLETED");
  });

  it("v0.3 message/stream sends kind-tagged events with final on the last", async () => {
    const response = await post(
      {
        jsonrpc: "2.0",
        id: "s",
        method: "message/stream",
        params: {
          message: {
            kind: "message",
            messageId: "v03s",
            role: "user",
            parts: [{ kind: "text", text: "echo v03" }],
          },
        },
      },
      {},
    );
    const events = results(parseSse(await response.text()));
    expect(events[0]?.kind).toBe("task");
    expect(events.some((e) => e.kind === "artifact-update")).toBe(true);
    const last = events.at(-1) as Json;
    expect(last).toMatchObject({ kind: "status-update", final: true });
    expect((last.status as Json).state).toBe("completed");
  });

  it("a bad request gets a JSON-RPC error, not a stream", async () => {
    const response = await post({
      jsonrpc: "2.0",
      id: 1,
      method: "SendStreamingMessage",
      params: { message: { role: "ROLE_USER", parts: [{ text: "x" }] } },
    });
    expect(response.headers.get("Content-Type")).toContain("application/json");
    expect(((await response.json()) as Json).error).toMatchObject({ code: -32602 });
  });
});

describe("SubscribeToTask", () => {
  it("starts with the current task, follows it to the end, then closes", async () => {
    const task = await send("count 2", {}, { returnImmediately: true });
    const events = results(parseSse(await (await subscribeRequest(task.id as string)).text()));
    expect(((events[0] as Json).task as Json).id).toBe(task.id);
    const texts = events
      .map((r) => ((r.statusUpdate as Json)?.status as Json)?.message as Json | undefined)
      .filter(Boolean)
      .map((m) => ((m as Json).parts as Json[])[0]?.text);
    expect(texts).toEqual(["1…", "2…"]);
    expect(stateOf(events.at(-1) as Json)).toBe("TASK_STATE_COMPLETED");
  });

  it("concurrent subscribers receive the same events in the same order", async () => {
    const task = await send("count 1", {}, { returnImmediately: true });
    const [a, b] = await Promise.all([
      subscribeRequest(task.id as string).then((r) => r.text()),
      subscribeRequest(task.id as string).then((r) => r.text()),
    ]);
    const strip = (text: string) => parseSse(text).slice(1);
    expect(strip(a).length).toBeGreaterThanOrEqual(3);
    expect(strip(a)).toEqual(strip(b));
  });

  it("a client disconnecting does not stop the task", async () => {
    const response = await streamRequest("count 1");
    const { events, reader } = await readEvents(response, 1);
    expect(events[0]?.data.result).toBeDefined();
    await reader.cancel();
    const taskId = (((events[0] as { data: Json }).data.result as Json).task as Json).id as string;
    const done = await waitForState(taskId, "TASK_STATE_COMPLETED");
    expect((done.artifacts as Json[]).length).toBe(1);
  });

  it("Last-Event-ID resumes right after the last event the client saw", async () => {
    const response = await streamRequest("count 1");
    const { events, reader } = await readEvents(response, 2);
    await reader.cancel();
    const taskId = (((events[0] as { data: Json }).data.result as Json).task as Json).id as string;
    const seen = events[1]?.id as number;
    await waitForState(taskId, "TASK_STATE_COMPLETED");

    const resumed = parseSse(
      await (await subscribeRequest(taskId, { "Last-Event-ID": String(seen) })).text(),
    );
    expect(resumed.length).toBeGreaterThan(0);
    expect(resumed.every((e) => (e.id as number) > seen)).toBe(true);
    expect(results(resumed).some((r) => r.task)).toBe(false);
    expect(stateOf(results(resumed).at(-1) as Json)).toBe("TASK_STATE_COMPLETED");

    const full = parseSse(await (await subscribeRequest(taskId, { "Last-Event-ID": "0" })).text());
    expect(full.map((e) => e.id)).toEqual([
      ...events.slice(1).map((e) => e.id),
      ...resumed.map((e) => e.id),
    ]);
  });

  it("a Last-Event-ID past every event the conversation sent is refused naming it; the last one sent resumes", async () => {
    const sent = parseSse(await (await streamRequest("one two")).text());
    const taskId = ((results(sent)[0] as Json).task as Json).id as string;
    const last = sent.at(-1)?.id as number;
    const resumed = await subscribeRequest(taskId, { "Last-Event-ID": String(last) });
    expect(resumed.headers.get("Content-Type")).toContain("text/event-stream");
    expect(parseSse(await resumed.text())).toEqual([]);
    const future = await subscribeRequest(taskId, { "Last-Event-ID": String(last + 1000) });
    const body = (await future.json()) as Json;
    expect(body.error).toMatchObject({ code: -32600 });
    expect(JSON.stringify(body.error)).toContain('"field":"Last-Event-ID"');
  });

  it("N7: a streamed artifact's chunks resumed with Last-Event-ID read back as they were sent, byte for byte", async () => {
    const sent = parseSse(await (await streamRequest("one two three four five six")).text());
    const taskId = ((results(sent)[0] as Json).task as Json).id as string;
    const chunks = sent.filter((e) => (e.data.result as Json).artifactUpdate);
    expect(chunks.length).toBeGreaterThan(5);
    // Resumed after the second chunk: the chunks after it, and the task's end.
    const seen = chunks[1]?.id as number;
    const resumed = parseSse(
      await (await subscribeRequest(taskId, { "Last-Event-ID": String(seen) })).text(),
    );
    const after = sent.filter((e) => (e.id as number) > seen);
    expect(resumed.map((e) => e.id)).toEqual(after.map((e) => e.id));
    const appended = resumed.filter(
      (e) => ((e.data.result as Json).artifactUpdate as Json)?.append,
    );
    expect(appended.length).toBeGreaterThan(3);
    expect(resumed.map((e) => JSON.stringify(e.data.result))).toEqual(
      after.map((e) => JSON.stringify(e.data.result)),
    );
  });

  it("subscribing to a finished task is UnsupportedOperation (-32004); unknown is -32001", async () => {
    const task = await send("finished");
    const body = (await (await subscribeRequest(task.id as string)).json()) as Json;
    expect(body.error).toMatchObject({ code: -32004 });
    const missing = (await (await subscribeRequest("nope")).json()) as Json;
    expect(missing.error).toMatchObject({ code: -32001 });
    const bad = (await (
      await subscribeRequest(task.id as string, { "Last-Event-ID": "x" })
    ).json()) as Json;
    expect(bad.error).toMatchObject({ code: -32600 });
  });

  it("the HTTP+JSON binding subscribes with GET and POST", async () => {
    // Both subscribe to one task while it counts: one count's wait, not one per method.
    const task = await send("count 1", {}, { returnImmediately: true });
    const streams = await Promise.all(
      ["GET", "POST"].map(async (method) => {
        const response = await SELF.fetch(`${BASE}/tasks/${task.id}:subscribe`, {
          method,
          headers: { "A2A-Version": "1.0" },
        });
        return parseSse(await response.text());
      }),
    );
    for (const events of streams) {
      expect(events[0]?.data.task).toBeDefined();
      expect(stateOf(events.at(-1)?.data as Json)).toBe("TASK_STATE_COMPLETED");
    }
  });
});

describe("rpc sanity", () => {
  it("GetTask after a stream shows the same final state", async () => {
    const events = results(parseSse(await (await streamRequest("final check")).text()));
    const taskId = ((events[0] as Json).task as Json).id;
    const { body } = await rpc("GetTask", { id: taskId });
    expect(((body.result as Json).status as Json).state).toBe("TASK_STATE_COMPLETED");
  });
});
