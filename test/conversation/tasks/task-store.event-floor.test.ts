import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { HistoryStore } from "../../../src/conversation/history/history-store";
import { TaskStore } from "../../../src/conversation/tasks/task-store";
import { CONTEXT_SCHEMA } from "../../../src/storage/schema";
import { createSchema, ensureSchema, openSchema } from "../../../src/storage/schema-version";
import { taskFixture } from "../../support/task-fixture";

/** A new object of the context namespace, white-box (any class's SQLite will do). */
function scratch(): DurableObjectStub {
  const ns = env.EDGELINK_CONTEXT;
  return ns.get(ns.idFromName(`event-floor-${crypto.randomUUID()}`));
}

/** What a task's event reads answer: the seqs `after` pages through, and `lastSeq`. */
function readsOf(store: TaskStore, taskId: string) {
  return {
    all: store.events.after(taskId, 0).map((e) => e.seq),
    afterFirst: store.events
      .after(taskId, store.events.after(taskId, 0)[0]?.seq ?? 0)
      .map((e) => e.seq),
    firstPage: store.events.after(taskId, 0, 1).map((e) => e.seq),
    last: store.events.lastSeq(taskId),
  };
}

describe("the event log is read by task between the task's floor and ceiling, not through an index", () => {
  it("interleaved tasks each read exactly their own events; a task's floor is its first event's seq, an ended task's ceiling its final event's", async () => {
    const result = await runInDurableObject(scratch(), (_i, state) => {
      ensureSchema(state.storage, CONTEXT_SCHEMA);
      const store = new TaskStore(state.storage, new HistoryStore(state.storage));
      store.create(taskFixture("a"), true); // seq 1
      store.create(taskFixture("b"), true); // seq 2
      store.transition("a", "input-required"); // seq 3
      store.transition("b", "completed"); // seq 4
      store.transition("a", "canceled"); // seq 5
      store.create(taskFixture("c"), true); // seq 6, past both ceilings
      const sql = state.storage.sql;
      // The plans of the statements the log's reads really run (every sql.exec recorded).
      const ran: { query: string; args: SqlStorageValue[] }[] = [];
      const exec = sql.exec.bind(sql);
      Object.defineProperty(sql, "exec", {
        configurable: true,
        value: (query: string, ...args: SqlStorageValue[]) => {
          ran.push({ query, args });
          return exec(query, ...args);
        },
      });
      store.events.after("a", 0);
      store.events.lastSeq("a");
      Object.defineProperty(sql, "exec", { configurable: true, value: exec });
      const plans = ran.map(({ query, args }) =>
        exec<{ detail: string }>(`EXPLAIN QUERY PLAN ${query}`, ...args)
          .toArray()
          .map((r) => r.detail)
          .join("; "),
      );
      return {
        a: readsOf(store, "a"),
        b: readsOf(store, "b"),
        c: readsOf(store, "c"),
        missing: readsOf(store, "nope"),
        floors: sql.exec("SELECT id, event_floor, event_ceiling FROM tasks ORDER BY id").toArray(),
        // A task's page of the log is a range of its key, not a scan of the table.
        plans,
        indexes: sql
          .exec<{ name: string }>(
            "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'events'",
          )
          .toArray(),
      };
    });
    expect(result.a).toEqual({ all: [1, 3, 5], afterFirst: [3, 5], firstPage: [1], last: 5 });
    expect(result.b).toEqual({ all: [2, 4], afterFirst: [4], firstPage: [2], last: 4 });
    expect(result.c).toEqual({ all: [6], afterFirst: [], firstPage: [6], last: 6 });
    expect(result.missing).toEqual({ all: [], afterFirst: [], firstPage: [], last: 0 });
    expect(result.floors).toEqual([
      { id: "a", event_floor: 1, event_ceiling: 5 },
      { id: "b", event_floor: 2, event_ceiling: 4 },
      { id: "c", event_floor: 6, event_ceiling: null },
    ]);
    expect(result.plans).toHaveLength(2);
    for (const plan of result.plans) {
      expect(plan).toMatch(/^SEARCH events USING INTEGER PRIMARY KEY \(rowid>\? AND rowid<\?\)/);
    }
    // The point of it: an event is one row in one B-tree.
    expect(result.indexes).toEqual([]);
  });

  it("a conversation made at version 1 migrates: its index by task is dropped, its tasks keep every event (floor 0), new tasks get their floor", async () => {
    const result = await runInDurableObject(scratch(), (_i, state) => {
      // Version 1: the baseline alone, with the log's index by task.
      createSchema(state.storage, { ...CONTEXT_SCHEMA, migrations: [] });
      const sql = state.storage.sql;
      const hadIndex = sql
        .exec("SELECT name FROM sqlite_master WHERE name = 'events_by_task'")
        .toArray().length;
      // Version 1's writer did not know the column: its rows are written as it wrote them.
      sql.exec(
        `INSERT INTO tasks (id, context_id, state, status_timestamp, created_at, updated_at)
         VALUES ('old', 'c', 'working', 'x', 'x', 'x')`,
      );
      sql.exec(
        `INSERT INTO events (seq, task_id, body) VALUES (1, 'old', '{}'), (2, 'other', '{}'), (3, 'old', '{}')`,
      );
      const opened = openSchema(state.storage, CONTEXT_SCHEMA);
      const store = new TaskStore(state.storage, new HistoryStore(state.storage));
      store.create(taskFixture("new"), true); // seq 4
      return {
        hadIndex,
        refused: opened.refused,
        index: sql.exec("SELECT name FROM sqlite_master WHERE name = 'events_by_task'").toArray()
          .length,
        old: readsOf(store, "old"),
        fresh: readsOf(store, "new"),
        floors: sql.exec("SELECT id, event_floor, event_ceiling FROM tasks ORDER BY id").toArray(),
      };
    });
    expect(result.hadIndex).toBe(1);
    expect(result.refused).toBeNull();
    expect(result.index).toBe(0);
    expect(result.old).toEqual({ all: [1, 3], afterFirst: [3], firstPage: [1], last: 3 });
    expect(result.fresh).toEqual({ all: [4], afterFirst: [], firstPage: [4], last: 4 });
    expect(result.floors).toEqual([
      { id: "new", event_floor: 4, event_ceiling: null },
      { id: "old", event_floor: 0, event_ceiling: null },
    ]);
  });
});
