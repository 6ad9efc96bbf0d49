import { env, runInDurableObject, SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { DEFAULT_LIMITS } from "../../../src/agent/limits";
import { EventHub } from "../../../src/conversation/runs/event-hub";
import { DROPPED_COMMENT, TaskStreams } from "../../../src/conversation/runs/task-stream";
import type { TaskStore } from "../../../src/conversation/tasks/task-store";
import { A2AError } from "../../../src/protocol/errors";
import type { LoggedEvent } from "../../../src/protocol/events";
import type { StreamFormat } from "../../../src/protocol/wire/stream";
import { contextObjectName } from "../../../src/storage/ids";
import { defineAgent } from "../../../src/worker/app/define-agent";
import { withAgent, withLimits } from "../../support/agent-override";
import { BASE, parseSse, rest, rpc, send, sleep, userMessage } from "../../support/helpers";
import { taskFixture } from "../../support/task-fixture";

type Json = Record<string, unknown>;

const stubOf = (contextId: string) =>
  env.EDGELINK_CONTEXT.get(env.EDGELINK_CONTEXT.idFromName(contextObjectName("", contextId)));

/** The per-task cap's error, naming this limit: the ErrorInfo and its `limit`. */
const info = { reason: "UNSUPPORTED_OPERATION", metadata: expect.objectContaining({ limit: "2" }) };
const restRefusal = {
  code: 400,
  status: "FAILED_PRECONDITION",
  message: expect.stringMatching(/limits\.maxStreamsPerConversation/),
  details: [expect.objectContaining(info)],
};

const REFUSED =
  /^This conversation already has 2 open streams, the limit \(limits\.maxStreamsPerConversation\)/;

/** A live stream: its first chunk read (the task), the rest left for later. */
async function opened(response: Response) {
  expect(response.headers.get("Content-Type")).toContain("text/event-stream");
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const first = parseSse(new TextDecoder().decode((await reader.read()).value))[0]?.data as Json;
  const task = ((first.result as Json | undefined)?.task ?? first.task) as Json;
  return { taskId: task.id as string, reader };
}

function post(path: string, body: Json, version: string | null = "1.0") {
  const headers: Record<string, string> = { "Content-Type": "application/json" };
  if (version) headers["A2A-Version"] = version;
  return SELF.fetch(`${BASE}${path}`, { method: "POST", headers, body: JSON.stringify(body) });
}

const rpcStream = (message: Json) =>
  post("/", { jsonrpc: "2.0", id: 1, method: "SendStreamingMessage", params: { message } });

async function taskIds(contextId: string): Promise<string[]> {
  const { body } = await rpc("ListTasks", { contextId });
  return (body.result as { tasks: Json[] }).tasks.map((t) => t.id as string);
}

/** Counts the transactions the conversation's object runs from now until it is called. */
async function countTransactions(contextId: string): Promise<() => Promise<number>> {
  let count = 0;
  await runInDurableObject(stubOf(contextId), (_i, state) => {
    const transactionSync = state.storage.transactionSync.bind(state.storage);
    Object.defineProperty(state.storage, "transactionSync", {
      configurable: true,
      value: <R>(fn: () => R): R => {
        count += 1;
        return transactionSync(fn);
      },
    });
  });
  return async () => {
    await runInDurableObject(stubOf(contextId), (_i, state) => {
      delete (state.storage as unknown as Record<string, unknown>).transactionSync;
    });
    return count;
  };
}

describe("open streams per conversation", () => {
  it("the limit is 64 unless set; defineAgent refuses a bad value naming the field", () => {
    expect(DEFAULT_LIMITS.maxStreamsPerConversation).toBe(64);
    const define = (value: unknown) => () =>
      defineAgent({
        card: { name: "limits", description: "" },
        handler: () => "ok",
        limits: { maxStreamsPerConversation: value as number },
      });
    expect(define(8)).not.toThrow();
    for (const bad of [0, -1, 2.5, "8", Number.NaN]) {
      expect(define(bad)).toThrow(/limits\.maxStreamsPerConversation must be a positive integer/);
    }
  });

  it("past limits.maxStreamsPerConversation a stream is refused over every binding and version before anything is stored; one that ends gives its place back", async () => {
    const { contextId } = (await send("warm")) as { contextId: string };
    await withLimits(stubOf(contextId), { maxStreamsPerConversation: 2 });
    const a = await opened(await rpcStream(userMessage("count 30", { contextId })));
    const b = await opened(
      await post("/message:stream", { message: userMessage("count 30", { contextId }) }),
    );
    const before = await taskIds(contextId);
    expect(before).toHaveLength(3);

    // The same message each time: that it is accepted later shows it was not stored now.
    const message = userMessage("count 1", { contextId });
    const v03 = {
      kind: "message",
      messageId: `${message.messageId}-v03`,
      role: "user",
      contextId,
      parts: [{ kind: "text", text: "count 1" }],
    };
    const transactions = await countTransactions(contextId);
    const jsonRpc = (await (await rpcStream(message)).json()) as Json;
    expect(jsonRpc.error).toMatchObject({
      code: -32004,
      message: expect.stringMatching(REFUSED),
      data: [expect.objectContaining(info)],
    });
    const v03Rpc = (await (
      await post(
        "/",
        { jsonrpc: "2.0", id: 2, method: "message/stream", params: { message: v03 } },
        null,
      )
    ).json()) as Json;
    expect(v03Rpc.error).toMatchObject({ code: -32004, message: expect.stringMatching(REFUSED) });
    for (const [body, version] of [
      [{ message }, "1.0"],
      [{ message: v03 }, "0.3"],
    ] as const) {
      const response = await post("/message:stream", body, version);
      expect(response.status).toBe(400);
      expect(((await response.json()) as Json).error).toMatchObject(restRefusal);
    }
    // A subscription, on a task with room of its own, and the chat endpoint's two routes.
    const subscribed = await rpc("SubscribeToTask", { id: a.taskId });
    expect(subscribed.body.error).toMatchObject({
      code: -32004,
      message: expect.stringMatching(REFUSED),
    });
    const chat = await post("/chat", { message: "count 1", sessionId: contextId });
    expect(chat.status).toBe(400);
    expect(((await chat.json()) as Json).error).toMatchObject(restRefusal);
    const resumed = await rest("GET", `/chat/${encodeURIComponent(b.taskId)}`);
    expect(resumed.status).toBe(400);
    expect(resumed.body.error).toMatchObject(restRefusal);
    // Nothing was written: no transaction, no task.
    expect(await transactions()).toBe(0);
    expect(await taskIds(contextId)).toEqual(before);

    // A stream that ends (its task canceled) gives its place back at once.
    await rpc("CancelTask", { id: a.taskId });
    while (!(await a.reader.read()).done) {}
    const c = await opened(await rpcStream(message));
    expect(before).not.toContain(c.taskId);
    expect(await taskIds(contextId)).toHaveLength(4);

    // So does one whose client left (its cancel reaches the object a moment later).
    await c.reader.cancel();
    let again: Response | null = null;
    for (let i = 0; i < 100 && again === null; i++) {
      const response = await post("/chat", { message: "echo", sessionId: contextId });
      if (response.status === 200) again = response;
      else await sleep(20);
    }
    expect(again?.status).toBe(200);
    await (again as Response).text();
    await b.reader.cancel();
    await rpc("CancelTask", { id: b.taskId });
    await rpc("CancelTask", { id: c.taskId });
  });

  it("a stream opened inside a message's write that rolls back gives its place back", async () => {
    const { contextId } = (await send("warm")) as { contextId: string };
    await withLimits(stubOf(contextId), { maxStreamsPerConversation: 1 });
    await withAgent(stubOf(contextId), () => ({
      handler: async (ctx: { record(items: Json[]): void; message: { parts: Json[] } }) => {
        if (ctx.message.parts[0]?.content !== "partial") return "fine";
        try {
          // The first item is written, the second refused (over 4 MB), after the stream
          // opened: the whole message rolls back.
          ctx.record([
            { type: "message", role: "assistant", content: ["kept?"] },
            { type: "message", role: "assistant", content: ["x".repeat(4_300_000)] },
          ]);
        } catch {}
        // Still running when its write rolls back: no final event will close the stream.
        await sleep(50);
        return "answered later";
      },
    }));
    const failed = (await (await rpcStream(userMessage("partial", { contextId }))).json()) as Json;
    expect(failed.error).toMatchObject({ code: -32602 });
    const next = await rpcStream(userMessage("next", { contextId }));
    const events = parseSse(await next.text());
    expect(events.at(-1)?.data).toMatchObject({
      result: { statusUpdate: { status: { state: "TASK_STATE_COMPLETED" } } },
    });
  });
});

describe("TaskStreams counts the conversation's open streams", () => {
  const format = { version: "1.0", binding: "rest" } as StreamFormat;
  const setUp = () => {
    const hub = new EventHub();
    const limits = { ...DEFAULT_LIMITS, maxStreamsPerConversation: 2, streamBufferBytes: 64 };
    const streams = new TaskStreams(
      {} as TaskStore,
      hub,
      () => ({ limits, keepAliveMs: 60_000 }),
      (id) => {
        throw new A2AError("TaskNotFound", `Task ${id} not found`);
      },
    );
    const open = (taskId: string) =>
      streams.open(taskId, format, { snapshot: true }, { task: taskFixture(taskId), seq: 1 });
    const refused = () => {
      expect(() => open("t")).toThrow(/limits\.maxStreamsPerConversation/);
    };
    return { hub, streams, open, refused, limits };
  };
  const status = (taskId: string, final: boolean): LoggedEvent => ({
    seq: 2,
    event: {
      kind: "status-update",
      taskId,
      contextId: "c",
      status: {
        state: final ? "completed" : "working",
        message: null,
        timestamp: "2026-12-08T00:00:00.000Z",
      },
      final,
    },
  });

  it("across tasks; a finished, a cancelled and a dropped stream each give their place back", async () => {
    const { hub, open, refused } = setUp();
    const finished = open("t1");
    const cancelled = open("t2");
    refused();
    // Read as it comes, so its last event finds room.
    const finishedText = new Response(finished).text();
    await sleep(0);
    hub.emit("t1", [status("t1", true)]);
    expect(await finishedText).toMatch(/TASK_STATE_COMPLETED/);
    const slow = open("t3");
    refused();
    await cancelled.cancel();
    const next = open("t4");
    refused();
    // Nobody reads t3: its snapshot filled its 64 bytes, so the next event drops it.
    await sleep(0);
    hub.emit("t3", [status("t3", false)]);
    expect((await new Response(slow).text()).endsWith(DROPPED_COMMENT)).toBe(true);
    const last = open("t5");
    refused();
    await next.cancel();
    await last.cancel();
  });

  it("a stream that ends while opening, fails to open or fails to read its backlog holds no place", async () => {
    const { streams, open, limits } = setUp();
    const ended = streams.open(
      "t1",
      format,
      { snapshot: true, retry: true },
      {
        task: {
          ...taskFixture("t1"),
          status: { state: "completed", message: null, timestamp: "2026-12-08T00:00:00.000Z" },
        },
        seq: 1,
      },
    );
    expect(await new Response(ended).text()).toMatch(/TASK_STATE_COMPLETED/);
    // workerd hands back a stream that errors where the standard throws: either way, refused.
    const gone = await (async () =>
      new Response(streams.open("gone", format, { snapshot: true })).text())().catch(
      (error: unknown) => String(error),
    );
    expect(gone).toMatch(/Task gone not found/);
    // A resumed stream whose next backlog page fails to read, as the client reads.
    let pages = 0;
    const failing = new TaskStreams(
      {
        events: {
          after: () => {
            pages += 1;
            if (pages > 1) throw new Error("the page could not be read");
            return [status("t1", false)];
          },
        },
      } as unknown as TaskStore,
      new EventHub(),
      () => ({ limits: { ...limits, backlogPageSize: 1 }, keepAliveMs: 60_000 }),
      () => taskFixture("t1"),
    );
    const resumed = failing.open("t1", format, { snapshot: false, afterSeq: 1 });
    const other = failing.open(
      "t2",
      format,
      { snapshot: true },
      { task: taskFixture("t2"), seq: 1 },
    );
    expect(() => failing.open("t3", format, { snapshot: true })).toThrow(
      /maxStreamsPerConversation/,
    );
    await expect(new Response(resumed).text()).rejects.toThrow(/could not be read/);
    const after = failing.open(
      "t3",
      format,
      { snapshot: true },
      { task: taskFixture("t3"), seq: 1 },
    );
    const kept = [other, after, open("t2"), open("t3")];
    expect(() => open("t4")).toThrow(/limits\.maxStreamsPerConversation/);
    for (const stream of kept) await stream.cancel();
  });
});
