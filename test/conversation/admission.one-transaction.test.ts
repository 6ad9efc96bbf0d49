import { env, evictDurableObject, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { contextObjectName } from "../../src/storage/ids";
import { withAgent } from "../support/agent-override";
import { rpc, send, sleep, userMessage } from "../support/helpers";

type Json = Record<string, unknown>;

const stubOf = (contextId: string) =>
  env.EDGELINK_CONTEXT.get(env.EDGELINK_CONTEXT.idFromName(contextObjectName("", contextId)));

/** A conversation whose live object runs `handler` (a new instance has the demo agent). */
async function conversationWith(handler: (ctx: Json) => unknown): Promise<string> {
  const { contextId } = (await send("start")) as { contextId: string };
  await withAgent(stubOf(contextId), () => ({ handler }));
  return contextId;
}

/**
 * Counts the object's transactions and the 0 ms timers it sets while `fn` runs (white-box:
 * the object's storage and the isolate's setTimeout, put back after).
 */
async function counting<T>(contextId: string, fn: () => Promise<T>) {
  const stub = stubOf(contextId);
  const counts = { transactions: 0, zeroTimers: 0 };
  await runInDurableObject(stub, (_i, state) => {
    const transactionSync = state.storage.transactionSync.bind(state.storage);
    Object.defineProperty(state.storage, "transactionSync", {
      configurable: true,
      value: <R>(f: () => R): R => {
        counts.transactions += 1;
        return transactionSync(f);
      },
    });
  });
  const setTimeoutBefore = globalThis.setTimeout;
  globalThis.setTimeout = ((handler: () => void, ms?: number) => {
    if (!ms) counts.zeroTimers += 1;
    return setTimeoutBefore(handler, ms);
  }) as typeof setTimeout;
  try {
    const result = await fn();
    return { result, counts };
  } finally {
    globalThis.setTimeout = setTimeoutBefore;
    await runInDurableObject(stub, (_i, state) => {
      delete (state.storage as unknown as Record<string, unknown>).transactionSync;
    });
  }
}

async function blocking(contextId: string, text: string) {
  return rpc("SendMessage", { message: userMessage(text, { contextId }) });
}

describe("a message to a handler that answers at once is one transaction", () => {
  it("B6: a new task, its message, its answer and its completion are written in one transaction, with no turn-end timer; a fresh object reads them all back", async () => {
    const contextId = await conversationWith((ctx) => {
      const parts = (ctx.message as { parts: { content?: unknown }[] }).parts;
      return `echo: ${String(parts[0]?.content ?? "")}`;
    });
    await blocking(contextId, "warm"); // the index's window is open now, as in a busy conversation
    const { result, counts } = await counting(contextId, () => blocking(contextId, "hello"));
    const task = (result.body.result as { task: Json }).task;
    expect(task).toMatchObject({
      status: { state: "TASK_STATE_COMPLETED" },
      artifacts: [{ parts: [{ text: "echo: hello" }] }],
    });
    expect(counts).toEqual({ transactions: 1, zeroTimers: 0 });

    // What was written, read by a new instance of the object.
    await evictDurableObject(stubOf(contextId));
    const { body } = await rpc("GetTask", { id: task.id });
    expect(body.result).toMatchObject({
      id: task.id,
      status: { state: "TASK_STATE_COMPLETED" },
      artifacts: [{ parts: [{ text: "echo: hello" }] }],
      history: [{ parts: [{ text: "hello" }] }],
    });
  });

  it("B6: a handler that awaits has its task stored before its first await returns, and ends in a transaction of its own", async () => {
    let release: (() => void) | null = null;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const contextId = await conversationWith(async () => {
      await gate;
      return "later";
    });
    const { result, counts } = await counting(contextId, async () => {
      const answer = blocking(contextId, "wait");
      // The handler waits: its task is in SQLite already, working.
      let stored: string[] = [];
      for (let i = 0; i < 200 && !stored.includes("working"); i++) {
        await sleep(5);
        stored = await statesOf(contextId);
      }
      expect(stored.filter((s) => s === "working")).toHaveLength(1);
      (release as unknown as () => void)();
      return answer;
    });
    expect((result.body.result as { task: Json }).task).toMatchObject({
      status: { state: "TASK_STATE_COMPLETED" },
      artifacts: [{ parts: [{ text: "later" }] }],
    });
    // The admission, the held events written at its turn's end, the answer.
    expect(counts.transactions).toBe(3);
    expect(counts.zeroTimers).toBe(1);
  });

  it("B6: a write that fails inside the handler's first step rolls the whole message back, even when the handler catches the error: no task, no message kept", async () => {
    let caught: unknown = null;
    const contextId = await conversationWith((ctx) => {
      const run = ctx as { record(items: Json[]): void; message: { parts: Json[] } };
      if (run.message.parts[0]?.content !== "partial") return "fine";
      try {
        // The first item is written, then the second is refused (over 4 MB): a partial write.
        run.record([
          { type: "message", role: "assistant", content: ["kept?"] },
          { type: "message", role: "assistant", content: ["x".repeat(4_300_000)] },
        ]);
      } catch (error) {
        caught = error;
      }
      return "answered anyway";
    });
    const before = await historyOf(contextId);
    const { result } = await counting(contextId, () => blocking(contextId, "partial"));
    expect(String(caught)).toMatch(/exceeds the limit/);
    expect(result.status).toBe(200);
    expect(result.body.error).toMatchObject({ code: -32602 });
    expect(String((result.body.error as Json).message)).toMatch(/exceeds the limit/);
    // Nothing of the message stayed: not its item, not the recorded one, not a task.
    expect(await historyOf(contextId)).toEqual(before);
    const { body } = await rpc("ListTasks", { contextId });
    expect((body.result as { tasks: Json[] }).tasks).toHaveLength(1);
    // The conversation goes on.
    const next = await blocking(contextId, "next");
    expect((next.body.result as { task: Json }).task).toMatchObject({
      status: { state: "TASK_STATE_COMPLETED" },
    });
  });
});

/** The states of the conversation's tasks, read in the object. */
function statesOf(contextId: string): Promise<string[]> {
  return runInDurableObject(stubOf(contextId), (_i, state) =>
    state.storage.sql
      .exec<{ state: string }>("SELECT state FROM tasks")
      .toArray()
      .map((r) => r.state),
  );
}

/** The history's item ids, read in the object. */
function historyOf(contextId: string): Promise<string[]> {
  return runInDurableObject(stubOf(contextId), (_i, state) =>
    state.storage.sql
      .exec<{ id: string }>("SELECT id FROM history_items ORDER BY seq")
      .toArray()
      .map((r) => r.id),
  );
}
