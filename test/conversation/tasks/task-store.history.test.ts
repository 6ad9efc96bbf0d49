import { env, evictDurableObject, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { DEFAULT_LIMITS, resolveLimits } from "../../../src/agent/limits";
import { HistoryStore } from "../../../src/conversation/history/history-store";
import { TaskStore } from "../../../src/conversation/tasks/task-store";
import { Item } from "../../../src/history/items";
import { Artifact } from "../../../src/protocol/artifact";
import { type Message, Messages } from "../../../src/protocol/message";
import type { Task } from "../../../src/protocol/task";
import { contextObjectName } from "../../../src/storage/ids";
import { CONTEXT_SCHEMA } from "../../../src/storage/schema";
import { ensureSchema } from "../../../src/storage/schema-version";
import { countedStorage } from "../../support/counted-storage";
import { rest, rpc, send } from "../../support/helpers";
import { createKeyed, taskFixture } from "../../support/task-fixture";

type Json = Record<string, unknown>;

function stubOf(contextId: string) {
  const ns = env.EDGELINK_CONTEXT;
  return ns.get(ns.idFromName(contextObjectName("", contextId)));
}

const named = (id: string, message: Message): Message => ({ ...message, messageId: id });
const ids = (task: Task | null) => task?.history.map((m) => m.messageId);
const wireIds = (task: Json) =>
  ((task.history as Json[] | undefined) ?? []).map((m) => m.messageId);

/**
 * What a read should carry, worked out from every row SQLite holds for the task: its
 * messages newest first while they fit `taskHistory` and `taskHistoryChars` (the newest
 * always).
 */
function expectedIds(
  history: HistoryStore<Item>,
  taskId: string,
  bounds: { taskHistory: number; taskHistoryChars: number },
): string[] {
  const all = history.ofTask(taskId).flatMap((r) => (r.item.type === "message" ? [r.item] : []));
  const kept: string[] = [];
  let chars = 0;
  for (const item of all.reverse()) {
    const size = JSON.stringify(item).length;
    if (
      kept.length > 0 &&
      (kept.length >= bounds.taskHistory || chars + size > bounds.taskHistoryChars)
    )
      break;
    chars += size;
    kept.unshift((item.extra.a2a as { messageId: string }).messageId);
  }
  return kept;
}

describe("a task read carries a bounded history (issue 10, A2A §3.2.4)", () => {
  it("limits.taskHistory: the newest n messages; historyLength above it is clamped, below it honoured, 0 gives none; the same after a restart", async () => {
    const result = await runInDurableObject(stubOf("history-count"), (_i, state) => {
      ensureSchema(state.storage, CONTEXT_SCHEMA); // white-box: the schema a first write makes
      const bounds = { taskHistory: 5, taskHistoryChars: DEFAULT_LIMITS.taskHistoryChars };
      const fresh = () =>
        new TaskStore(state.storage, new HistoryStore<Item>(state.storage), null, bounds);
      const store = fresh();
      store.create(taskFixture("t"), true);
      for (let i = 1; i <= 11; i++)
        store.appendMessage("t", named(`m${i}`, Messages.agent(`${i}`)));
      const reads = (s: () => TaskStore) => ({
        none: ids(s().read("t")),
        above: ids(s().read("t", { historyLength: 50 })),
        below: ids(s().read("t", { historyLength: 3 })),
        zero: ids(s().read("t", { historyLength: 0 })),
      });
      // Each reload on a store of its own: nothing the previous read kept in memory.
      return { memory: reads(() => store), reloaded: reads(fresh) };
    });
    expect(result.memory).toEqual({
      none: ["m7", "m8", "m9", "m10", "m11"],
      above: ["m7", "m8", "m9", "m10", "m11"],
      below: ["m9", "m10", "m11"],
      zero: [],
    });
    expect(result.reloaded).toEqual(result.memory);
  });

  it("limits.taskHistoryChars: older large messages are cut, the newest is always kept; memory equals a reload after every write", async () => {
    const outcome = await runInDurableObject(stubOf("history-chars"), (_i, state) => {
      ensureSchema(state.storage, CONTEXT_SCHEMA); // white-box: the schema a first write makes
      const bounds = { taskHistory: 8, taskHistoryChars: 20_000 };
      const history = new HistoryStore<Item>(state.storage);
      const store = new TaskStore(state.storage, history, null, bounds);
      const reload = () =>
        new TaskStore(state.storage, new HistoryStore<Item>(state.storage), null, bounds).read("t");
      store.create(taskFixture("t"), true);
      store.transition("t", "input-required");
      // Sizes around the budget, one alone over it, one kept across chunk rows (256 Ki).
      const lengths = [
        10, 3000, 9000, 40, 12_000, 30_000, 5, 300_000, 7, 8000, 8000, 1, 2, 3, 4, 5, 6, 7, 8, 9,
      ];
      const steps: { memory?: string[]; reloaded?: string[]; expected: string[] }[] = [];
      let n = 0;
      for (const length of lengths) {
        n += 1;
        const text = "x".repeat(length);
        const way = n % 4;
        if (way === 0) store.appendMessage("t", named(`u${n}`, Messages.user(text)));
        else if (way === 1) store.statusMessage("t", named(`s${n}`, Messages.agent(text)));
        else if (way === 2) {
          // A tool call is no message: it never counts.
          const call = Item.parse({ type: "function_call", name: "search", arguments: "{}" });
          const message = Messages.agent(text);
          const item = Item.parse({
            type: "message",
            role: "assistant",
            content: [text],
            extra: { a2a: named(`r${n}`, message) },
          });
          store.recordItems("t", [call, item]);
        } else {
          store.transition("t", "working");
          store.transition("t", "input-required", {
            message: named(`q${n}`, Messages.agent(text)),
          });
        }
        steps.push({
          memory: ids(store.read("t")),
          reloaded: ids(reload()),
          expected: expectedIds(history, "t", bounds),
        });
      }
      const task = store.read("t") as Task;
      return { steps, whole: { memory: task, reloaded: reload() } };
    });
    for (const [i, step] of outcome.steps.entries()) {
      expect(step.memory, `step ${i}`).toEqual(step.expected);
      expect(step.reloaded, `step ${i}`).toEqual(step.expected);
      expect(step.expected.length).toBeGreaterThanOrEqual(1);
      expect(step.expected.length).toBeLessThanOrEqual(8);
    }
    // Alone over the budget: only the newest (30,000 and then 300,000 characters).
    expect(outcome.steps[5]?.expected).toEqual(["r6"]);
    expect(outcome.steps[7]?.expected).toEqual(["u8"]);
    // The small ones after the 300,000: the big one no longer fits beside them.
    expect(outcome.steps[8]?.expected).toEqual(["s9"]);
    // Eight small ones fit: the count stops them.
    expect(outcome.steps.at(-1)?.expected).toHaveLength(8);
    expect(outcome.whole.reloaded).toEqual(outcome.whole.memory);
  });

  it("a read of a task with 2,000 messages reads about limits.taskHistory rows, not all of them", async () => {
    const rowsRead = await runInDurableObject(stubOf("history-rows"), (_i, state) => {
      ensureSchema(state.storage, CONTEXT_SCHEMA); // white-box: the schema a first write makes
      const writer = new TaskStore(state.storage, new HistoryStore<Item>(state.storage));
      // Created as admission does: a task id names its row.
      const t = createKeyed(writer, "t");
      writer.atomic(() => {
        for (let i = 0; i < 2000; i++) writer.appendMessage(t, Messages.agent(`m${i}`));
      });
      const counted = countedStorage(state.storage);
      const store = new TaskStore(counted.proxy, new HistoryStore<Item>(counted.proxy));
      const done = counted.measure();
      const task = store.read(t);
      return { rows: done().rowsRead, messages: task?.history.length, last: task?.history.at(-1) };
    });
    expect(rowsRead.messages).toBe(DEFAULT_LIMITS.taskHistory);
    expect(rowsRead.last?.parts).toEqual([{ type: "text", content: "m1999" }]);
    expect(rowsRead.rows).toBeLessThanOrEqual(DEFAULT_LIMITS.taskHistory + 10);
  });

  it("a resumed run finds the newest user message with a bounded read (recover, lastUserMessage)", async () => {
    const result = await runInDurableObject(stubOf("history-recover"), (_i, state) => {
      ensureSchema(state.storage, CONTEXT_SCHEMA); // white-box: the schema a first write makes
      const writer = new TaskStore(state.storage, new HistoryStore<Item>(state.storage));
      writer.create(taskFixture("t"), true);
      writer.atomic(() => {
        for (let i = 0; i < 2000; i++) writer.appendMessage("t", Messages.user(`old ${i}`));
        writer.appendMessage("t", named("question", Messages.user("resume from me")));
        for (let i = 0; i < 3; i++) writer.appendMessage("t", Messages.agent(`progress ${i}`));
      });
      const counted = countedStorage(state.storage);
      const store = new TaskStore(counted.proxy, new HistoryStore<Item>(counted.proxy));
      const done = counted.measure();
      const message = store.lastUserMessage("t");
      return {
        rows: done().rowsRead,
        id: message?.messageId,
        none: store.lastUserMessage("nothing"),
      };
    });
    expect(result.id).toBe("question");
    expect(result.none).toBeNull();
    expect(result.rows).toBeLessThan(20);
  });

  it("limits.taskHistory and limits.taskHistoryChars are positive integers; the budget is at most 8 Mi", () => {
    expect(resolveLimits({}).taskHistory).toBe(100);
    expect(resolveLimits({}).taskHistoryChars).toBe(1024 * 1024);
    expect(resolveLimits({ taskHistoryChars: 8 * 1024 * 1024 }).taskHistoryChars).toBe(
      8 * 1024 * 1024,
    );
    expect(() => resolveLimits({ taskHistoryChars: 8 * 1024 * 1024 + 1 })).toThrow(
      /limits.taskHistoryChars must be at most 8388608/,
    );
    expect(() => resolveLimits({ taskHistory: 0 })).toThrow(/limits.taskHistory /);
    expect(() => resolveLimits({ taskHistory: 1.5 })).toThrow(/limits.taskHistory /);
  });
});

describe("GetTask, ListTasks and SendMessage carry the bounded history (issue 10)", () => {
  /** Messages written into a task the Worker issued, through the object's own store. */
  async function grow(task: Json, messages: Message[]) {
    await runInDurableObject(stubOf(task.contextId as string), (instance) => {
      const store = (instance as unknown as { store: TaskStore }).store;
      store.atomic(() => {
        for (const m of messages) store.appendMessage(task.id as string, m);
      });
    });
  }

  it("a task held in input-required with 150 more messages: the newest 100, whatever historyLength asks; the same after a restart", async () => {
    const asked = await send("hello");
    expect((asked.status as Json).state).toBe("TASK_STATE_INPUT_REQUIRED");
    const extra = Array.from({ length: 150 }, (_, i) => named(`extra-${i}`, Messages.user(`${i}`)));
    await grow(asked, extra);
    const get = async (params: Json = {}) =>
      (await rpc("GetTask", { id: asked.id, ...params })).body.result as Json;
    const newest = extra.slice(-100).map((m) => m.messageId);
    expect(wireIds(await get())).toEqual(newest);
    expect(wireIds(await get({ historyLength: 1000 }))).toEqual(newest);
    expect(wireIds(await get({ historyLength: 7 }))).toEqual(newest.slice(-7));
    expect((await get({ historyLength: 0 })).history).toBeUndefined();
    const listed = await rest("GET", `/tasks?contextId=${asked.contextId}`);
    const inList = (listed.body.tasks as Json[]).find((t) => t.id === asked.id) as Json;
    expect(wireIds(inList)).toEqual(newest);

    // The answer joins; SendMessage's task, memory and a reload agree.
    const answered = await send("Ada", { contextId: asked.contextId, taskId: asked.id });
    const answer = (answered.history as Json[]).at(-1) as Json;
    expect(answer.parts).toEqual([{ text: "Ada" }]);
    expect(wireIds(answered)).toEqual([...newest.slice(1), answer.messageId]);
    expect(await get()).toEqual(answered);
    await evictDurableObject(stubOf(asked.contextId as string));
    expect(await get()).toEqual(answered);
  });

  it("large messages: a read carries at most limits.taskHistoryChars of them, the newest always", async () => {
    const asked = await send("hello");
    // Each about 400 Ki characters stored (its text twice: the item's and the A2A message's).
    const big = (n: number) => named(`big-${n}`, Messages.user(String(n).repeat(200 * 1024)));
    await grow(asked, [Messages.user("small"), big(1), big(2), big(3)]);
    const get = async () => (await rpc("GetTask", { id: asked.id })).body.result as Json;
    expect(wireIds(await get())).toEqual(["big-2", "big-3"]);
    await evictDurableObject(stubOf(asked.contextId as string));
    expect(wireIds(await get())).toEqual(["big-2", "big-3"]);
  });

  it("limits.liveTaskChars: tasks kept in memory are bounded in characters across tasks; the one being written stays", async () => {
    const outcome = await runInDurableObject(stubOf("history-live"), (_i, state) => {
      ensureSchema(state.storage, CONTEXT_SCHEMA); // white-box: the schema a first write makes
      const counted = countedStorage(state.storage);
      const bounds = { liveTaskChars: 70_000 };
      const store = new TaskStore(
        counted.proxy,
        new HistoryStore<Item>(counted.proxy),
        null,
        bounds,
      );
      const big = "y".repeat(20_000);
      // Six tasks: a message of 20k characters is about 40k stored (its text twice), an
      // artifact about 20k: 180k in all, so only the last two (60k) fit.
      for (let i = 1; i <= 6; i++) {
        store.create(taskFixture(`t${i}`), true);
        if (i % 2) store.appendMessage(`t${i}`, named(`m${i}`, Messages.agent(big)));
        else {
          store.putArtifact(
            `t${i}`,
            Artifact.parse({ artifactId: `a${i}`, parts: [{ type: "text", content: big }] }),
            { append: false, lastChunk: true },
          );
        }
      }
      const rowsReading = (taskId: string) => {
        const rows = counted.measure();
        store.read(taskId);
        return rows().rowsRead;
      };
      // The newest two fit the budget and come from memory; the older ones are read again.
      const recent = [rowsReading("t6"), rowsReading("t5")];
      const old = [rowsReading("t1"), rowsReading("t2")];
      // One task over the budget alone, while it is written, stays: its chunks read no more
      // rows than with no budget at all (no read of the task per chunk).
      const appendRows = (target: TaskStore, taskId: string) => {
        target.create(taskFixture(taskId), true);
        const chunk = (append: boolean, lastChunk: boolean) =>
          target.putArtifact(
            taskId,
            Artifact.parse({ artifactId: "h", parts: [{ type: "text", content: big }] }),
            { append, lastChunk },
          );
        chunk(false, false);
        const rows = counted.measure();
        for (let i = 0; i < 5; i++) chunk(true, i === 4);
        return { rows: rows().rowsRead, parts: target.read(taskId)?.artifacts[0]?.parts.length };
      };
      const unbounded = new TaskStore(counted.proxy, new HistoryStore<Item>(counted.proxy));
      return {
        recent,
        old,
        bounded: appendRows(store, "huge"),
        unbounded: appendRows(unbounded, "huge-unbounded"),
      };
    });
    expect(outcome.recent).toEqual([0, 0]);
    expect(outcome.old.every((rows) => rows > 0)).toBe(true);
    expect(outcome.bounded).toEqual(outcome.unbounded);
    expect(outcome.bounded.parts).toBe(6);
  });
});
