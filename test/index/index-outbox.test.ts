import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { IndexMark, IndexRow } from "../../src/index/index-object";
import {
  INDEX_BACKSTOP_MS,
  INDEX_BATCH_ROWS,
  type IndexEntry,
  IndexOutbox,
  type PendingIndexRows,
} from "../../src/index/index-outbox";
import { rpc, sleep } from "../support/helpers";
import {
  contextStub,
  countUpserts,
  indexRow,
  indexStub,
  issuedIn,
  newTenant,
  sendIn,
  until,
  withLimits,
} from "../support/index-probe";

type Json = Record<string, unknown>;

describe("tenant index: later changes batched off the answer's path (issue 10)", () => {
  it("a continued task's change reaches the index after its answer, within limits.indexFlushMs (the lag bound)", async () => {
    const tenant = newTenant();
    const contextId = await issuedIn(tenant);
    await withLimits(tenant, contextId, { indexFlushMs: 600 });
    const asked = await sendIn(tenant, contextId, "hello");
    // A new task is in the index at its answer (read-your-writes) ...
    expect((await indexRow(tenant, contextId, asked.id as string))?.state).toBe("input-required");
    // The window its change opened closes (with nothing left to send) before the next.
    await sleep(700);
    const sent = Date.now();
    const task = await sendIn(tenant, contextId, "Ada", asked.id as string);
    expect((task.status as Json).state).toBe("TASK_STATE_COMPLETED");
    // ... its later change is answered before the index hears of it: not on the path.
    expect((await indexRow(tenant, contextId, task.id as string))?.state).toBe("input-required");
    const row = await until(
      () => indexRow(tenant, contextId, task.id as string),
      (r) => r?.state === "completed",
    );
    expect(row?.state).toBe("completed");
    // Not before the window closed; well within it plus the call's time otherwise.
    expect(Date.now() - sent).toBeGreaterThanOrEqual(590);
    const listed = await rpc("ListTasks", { tenant, status: "TASK_STATE_COMPLETED" });
    expect((listed.body.result as { tasks: Json[] }).tasks.map((t) => t.id)).toEqual([task.id]);
  });

  it("one window's later changes reach the index in one call, each task as its latest row", async () => {
    const tenant = newTenant();
    const contextId = await issuedIn(tenant);
    // Wide enough for the four continuations on a loaded machine (1.5 s once closed between
    // a task's working and completed rows, and sent two calls).
    await withLimits(tenant, contextId, { indexFlushMs: 4000 });
    const asked: Json[] = [];
    for (let i = 0; i < 4; i++) asked.push(await sendIn(tenant, contextId, "hello"));
    const calls = await countUpserts(tenant, contextId);
    const tasks = await Promise.all(
      asked.map((t) => sendIn(tenant, contextId, "Ada", t.id as string)),
    );
    await until(calls, (c) => c.length > 0);
    await sleep(100);
    const seen = await calls();
    // 4 tasks continued to completion: one call, 4 rows, all completed.
    expect(seen).toHaveLength(1);
    expect(seen[0]?.map((r) => r.taskId).sort()).toEqual(tasks.map((t) => t.id).sort());
    expect(seen[0]?.every((r) => r.state === "completed" && r.contextId === contextId)).toBe(true);
  });

  it("an older row never overwrites a newer one (flushes may arrive out of order)", async () => {
    const tenant = newTenant();
    const index = indexStub(tenant, "c") as unknown as {
      upsert(rows: IndexRow[]): Promise<void>;
    };
    const row = (state: string, updatedAt: string): IndexRow => ({
      taskId: "t",
      contextId: "c",
      state,
      createdAt: "2026-01-01T00:00:00.000Z",
      updatedAt,
    });
    await index.upsert([row("completed", "2026-01-01T00:00:02.000Z")]);
    await index.upsert([row("working", "2026-01-01T00:00:01.000Z")]);
    expect(await indexRow(tenant, "c", "t")).toEqual({
      state: "completed",
      updated_at: "2026-01-01T00:00:02.000Z",
    });
  });

  it("rows pending when the object restarts are covered by the backstop alarm (no row lost)", async () => {
    const tenant = newTenant();
    const contextId = await issuedIn(tenant);
    const stub = contextStub(tenant, contextId);
    // A window that will not close by itself during the test.
    await withLimits(tenant, contextId, { indexFlushMs: 30_000 });
    // A task continued to completion: its new state waits for the window (a new task's
    // row went with its answer).
    const asked = await sendIn(tenant, contextId, "hello");
    const task = await sendIn(tenant, contextId, "Ada", asked.id as string);
    const pendingOf = (s: DurableObjectState) =>
      s.storage.sql
        .exec<{ n: number }>("SELECT index_pending AS n FROM tasks WHERE id = ?", task.id as string)
        .one().n;
    const before = await runInDurableObject(stub, async (_i, state) => ({
      pending: pendingOf(state),
      alarm: await state.storage.getAlarm(),
    }));
    expect(before.pending).toBe(1);
    // The durable backstop: an alarm at most the window plus INDEX_BACKSTOP_MS away (the
    // retention alarm a finished task arms is 60 s away: not this one).
    expect(before.alarm).not.toBeNull();
    expect((before.alarm as number) - Date.now()).toBeLessThanOrEqual(30_000 + INDEX_BACKSTOP_MS);
    await runInDurableObject(stub, (_i, state) => state.abort("simulated restart")).catch(() => {});
    expect((await indexRow(tenant, contextId, task.id as string))?.state).toBe("input-required");

    // A stub of a reset object is broken: the next call gets a fresh one, as the Worker would.
    const fresh = contextStub(tenant, contextId);
    expect(await runDurableObjectAlarm(fresh)).toBe(true);
    expect((await indexRow(tenant, contextId, task.id as string))?.state).toBe("completed");
    expect(await runInDurableObject(fresh, (_i, state) => pendingOf(state))).toBe(0);
  });

  it("once the index has a quiet conversation's rows, the backstop alarm goes: none is left for a task waiting on input", async () => {
    const tenant = newTenant();
    const contextId = await issuedIn(tenant);
    // The window's length is not what this checks: a short one, so its flush comes soon.
    await withLimits(tenant, contextId, { indexFlushMs: 100 });
    const stub = contextStub(tenant, contextId);
    const task = await sendIn(tenant, contextId, "hello");
    expect((task.status as Json).state).toBe("TASK_STATE_INPUT_REQUIRED");
    await until(
      () => indexRow(tenant, contextId, task.id as string),
      (row) => row !== null,
    );
    // Nothing else asked for the alarm (no push, nothing finished): it is deleted, so the
    // object is not woken 10 s later for nothing.
    const alarm = await until(
      () => runInDurableObject(stub, (_i, state) => state.storage.getAlarm()),
      (at) => at === null,
    );
    expect(alarm).toBeNull();
  });

  it("an alarm an earlier run of the object set is kept when the backstop goes (its reason is not this run's to know)", async () => {
    const tenant = newTenant();
    const contextId = await issuedIn(tenant);
    await sendIn(tenant, contextId, "hello");
    const later = Date.now() + 3_600_000;
    const stub = contextStub(tenant, contextId);
    await runInDurableObject(stub, (_i, state) => state.storage.setAlarm(later));
    await runInDurableObject(stub, (_i, state) => state.abort("simulated restart")).catch(() => {});
    // A fresh object (as after a restart) takes a message: its backstop comes first, then goes.
    const fresh = contextStub(tenant, contextId);
    const task = await sendIn(tenant, contextId, "hello again");
    await until(
      () => indexRow(tenant, contextId, task.id as string),
      (row) => row !== null,
    );
    const alarm = await until(
      () => runInDurableObject(fresh, (_i, state) => state.storage.getAlarm()),
      (at) => at === later,
    );
    expect(alarm).toBe(later);
  });

  it("once the index has a quiet conversation's rows, its alarm waits for retention: when its oldest finished task ages out (limits.retainFinishedMs)", async () => {
    const tenant = newTenant();
    const contextId = await issuedIn(tenant);
    // The window's length is not what this checks: a short one, so its flush comes soon.
    await withLimits(tenant, contextId, { indexFlushMs: 100 });
    const stub = contextStub(tenant, contextId);
    const task = await sendIn(tenant, contextId, "task 1");
    expect((task.status as Json).state).toBe("TASK_STATE_COMPLETED");
    await until(
      () => indexRow(tenant, contextId, task.id as string),
      (row) => row !== null,
    );
    const finishedAt = Date.parse((task.status as Json).timestamp as string);
    const thirtyDays = 30 * 24 * 60 * 60 * 1000;
    const alarm = await until(
      () => runInDurableObject(stub, (_i, state) => state.storage.getAlarm()),
      (at) => at !== null && at > Date.now() + INDEX_BACKSTOP_MS * 2,
    );
    expect(alarm).toBe(finishedAt + thirtyDays);
    // The alarm, when it comes, prunes the task that aged out.
    await withLimits(tenant, contextId, { retainFinishedMs: 1 });
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect((await rpc("GetTask", { tenant, id: task.id })).body.error).toMatchObject({
      code: -32001,
    });
    // The prune's removals reach the index (a window, then its flush), and nothing is left
    // to wake the object for.
    const left = await until(
      () => runInDurableObject(stub, (_i, state) => state.storage.getAlarm()),
      (at) => at === null,
    );
    expect(left).toBeNull();
  });

  it("while the index lags, a state filter never shows a task in a state it left", async () => {
    const tenant = newTenant();
    const contextId = await issuedIn(tenant);
    const stub = contextStub(tenant, contextId);
    const asked = await sendIn(tenant, contextId, "hello");
    expect((asked.status as Json).state).toBe("TASK_STATE_INPUT_REQUIRED");
    await until(
      () => indexRow(tenant, contextId, asked.id as string),
      (r) => r?.state === "input-required",
    );
    await withLimits(tenant, contextId, { indexFlushMs: 60_000 });
    const done = await sendIn(tenant, contextId, "Ada", asked.id as string);
    expect((done.status as Json).state).toBe("TASK_STATE_COMPLETED");
    // The index still says input-required; the conversation's object knows better.
    expect((await indexRow(tenant, contextId, asked.id as string))?.state).toBe("input-required");
    const waiting = await rpc("ListTasks", { tenant, status: "TASK_STATE_INPUT_REQUIRED" });
    expect((waiting.body.result as { tasks: Json[] }).tasks).toEqual([]);

    await runDurableObjectAlarm(stub);
    const completed = await rpc("ListTasks", { tenant, status: "TASK_STATE_COMPLETED" });
    const tasks = (completed.body.result as { tasks: Json[] }).tasks;
    expect(tasks.map((t) => [t.id, (t.status as Json).state])).toEqual([
      [asked.id, "TASK_STATE_COMPLETED"],
    ]);
  });

  it("a backlog goes to the index in bounded calls (INDEX_BATCH_ROWS rows each)", async () => {
    const pending = new Map<string, IndexEntry>();
    for (let i = 0; i < 2 * INDEX_BATCH_ROWS + 7; i++) {
      const at = new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString();
      pending.set(`t${i}`, { taskId: `t${i}`, state: "completed", createdAt: at, updatedAt: at });
    }
    // White-box: the store's outbox surface over a plain map.
    const store = {
      outbox: () => [...pending.values()],
      removals: () => [],
      acknowledge: (rows: readonly IndexEntry[]) => {
        for (const r of rows) pending.delete(r.taskId);
      },
      removed: () => {},
    } as unknown as PendingIndexRows;
    const calls: number[] = [];
    const outbox = new IndexOutbox(
      store,
      {
        target: () => ({
          contextId: "c",
          index: {
            upsert: async (rows: IndexRow[]) => {
              calls.push(rows.length);
            },
          } as never,
        }),
        keepAlive: () => {},
        wakeAt: async () => {},
        settled: () => {
          settled += 1;
        },
      },
      () => 1000,
    );
    let settled = 0;
    await outbox.flush();
    expect(calls).toEqual([INDEX_BATCH_ROWS, INDEX_BATCH_ROWS, 7]);
    expect(pending.size).toBe(0);
    // Everything sent, no window open: the backstop alarm is no longer needed.
    expect(settled).toBe(1);
  });

  it("a conversation's mark is cleared by the last call of a backlog, with the last rows it covered", async () => {
    const pending = new Map<string, IndexEntry>();
    for (let i = 0; i < INDEX_BATCH_ROWS + 3; i++) {
      const at = new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString();
      pending.set(`t${i}`, { taskId: `t${i}`, state: "completed", createdAt: at, updatedAt: at });
    }
    const store = {
      outbox: () => [...pending.values()],
      removals: () => [],
      acknowledge: (rows: readonly IndexEntry[]) => {
        for (const r of rows) pending.delete(r.taskId);
      },
      removed: () => {},
    } as unknown as PendingIndexRows;
    const calls: [number, IndexMark | undefined][] = [];
    const outbox = new IndexOutbox(
      store,
      {
        target: () => ({
          contextId: "c",
          index: {
            upsert: async (rows: IndexRow[], mark?: IndexMark) => {
              calls.push([rows.length, mark]);
            },
          } as never,
        }),
        keepAlive: () => {},
        wakeAt: async () => {},
        settled: () => {},
      },
      () => 1000,
    );
    // White-box: the conversation is marked and its window just closed with no answer
    // relying on the mark (what the window's timer leaves).
    Object.assign(outbox, { marked: true, windowClosed: true });
    await outbox.flush();
    expect(calls).toEqual([
      [INDEX_BATCH_ROWS, undefined],
      [3, { contextId: "c", on: false }],
    ]);
  });
});
