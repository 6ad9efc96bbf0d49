import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { IndexObject, IndexRow } from "../../src/index/index-object";
import { countedStorage } from "../support/counted-storage";
import { paramCount, treesWritten } from "../support/sql-plans";

/**
 * What an index upsert writes and how each hot query finds its rows, counted: statements
 * per call, the B-trees a statement opens for writing (EXPLAIN), and query plans.
 */

const scratch = () =>
  env.EDGELINK_INDEX.get(env.EDGELINK_INDEX.idFromName(`index-trees-${crypto.randomUUID()}`));

const at = (n: number) => new Date(Date.UTC(2026, 0, 1) + n * 1000).toISOString();
const rows = (from: number, count: number, second: number): IndexRow[] =>
  Array.from({ length: count }, (_, i) => ({
    taskId: `task-${from + i}-${"x".repeat(80)}`,
    contextId: "ctx",
    state: "working",
    createdAt: at(0),
    updatedAt: at(second + i),
  }));

function plan(sql: SqlStorage, query: string, arg: SqlStorageValue): string {
  return sql
    .exec<{ detail: string }>(
      `EXPLAIN QUERY PLAN ${query}`,
      ...Array.from({ length: paramCount(query) }, () => arg),
    )
    .toArray()
    .map((r) => r.detail)
    .join("; ");
}

/** The shard's own object, its statements counted (white-box: its storage swapped). */
function countedIndex(instance: unknown, state: DurableObjectState) {
  const counted = countedStorage(state.storage);
  const index = instance as IndexObject;
  Object.defineProperty(index, "ctx", { value: { storage: counted.proxy }, configurable: true });
  return { index, counted };
}

describe("what an index upsert writes: statements and B-trees, counted", () => {
  it("B12: a call is one statement (24 new rows or 24 moves alike); a new row enters 2 B-trees (the row keyed by its id, the listing index), a move also its list_moves row, nothing else", async () => {
    const result = await runInDurableObject(scratch(), async (instance, state) => {
      const { index, counted } = countedIndex(instance, state);
      await index.upsert(rows(0, 24, 0)); // the schema and the clock's first read
      const fresh = counted.measure();
      await index.upsert(rows(100, 24, 100));
      const freshRun = fresh();
      const movesAfterFresh = state.storage.sql
        .exec<{ n: number }>("SELECT COUNT(*) AS n FROM list_moves")
        .one().n;
      const moved = counted.measure();
      await index.upsert(rows(100, 24, 200));
      const movedRun = moved();
      const sql = state.storage.sql;
      return {
        fresh: freshRun.queries,
        moved: movedRun.queries,
        trees: [...new Set(freshRun.queries.flatMap((q) => treesWritten(sql, q)))].sort(),
        triggers: sql
          .exec<{ name: string; sql: string }>(
            "SELECT name, sql FROM sqlite_master WHERE type = 'trigger' ORDER BY name",
          )
          .toArray(),
        indexes: sql
          .exec<{ name: string }>(
            "SELECT name FROM sqlite_master WHERE type = 'index' ORDER BY name",
          )
          .toArray()
          .map((r) => r.name),
        movesAfterFresh,
        moves: sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM list_moves").one().n,
        plans: freshRun.queries.map((q) => plan(sql, q, "t")),
      };
    });
    expect(result.fresh).toHaveLength(1);
    expect(result.moved).toEqual(result.fresh);
    // EXPLAIN lists the trigger's program too: list_moves is opened, and written on a move only.
    expect(result.trees).toEqual(["list_moves", "task_index", "task_index_by_update"]);
    expect(result.movesAfterFresh).toBe(0);
    // The only trigger on the rows records a move, and writes nothing but list_moves.
    expect(result.triggers.map((t) => t.name)).toEqual(["task_index_moved"]);
    expect(result.triggers[0]?.sql).toMatch(/AFTER UPDATE OF row_seq ON task_index/);
    expect(result.triggers[0]?.sql.match(/INSERT INTO (\w+)/g)).toEqual(["INSERT INTO list_moves"]);
    expect(result.triggers[0]?.sql).not.toMatch(/DELETE|UPDATE (?!OF)/);
    expect(result.moves).toBe(24);
    // No id index beside the rows (they are kept in their primary key), no index of the moves.
    expect(result.indexes).toEqual(["sqlite_autoindex_meta_1", "task_index_by_update"]);
    // The rows come from the call's JSON value; each task is found by its primary key.
    expect(result.plans.join("\n")).not.toMatch(/\bSCAN (task_index|list_moves)\b/);
  });

  it("B12: each hot read searches the index meant for it: the listing walks task_index_by_update, a move finds its task by its primary key", async () => {
    const plans = await runInDurableObject(scratch(), async (instance, state) => {
      const { index, counted } = countedIndex(instance, state);
      await index.upsert(rows(0, 30, 0));
      const first = await index.query({ pageSize: 5, after: null, snapshot: null, marks: true });
      if (!first.ok || !("value" in first)) throw new Error("no first page");
      await index.upsert(rows(0, 3, 100));
      const last = first.value.rows.at(-1);
      if (!last) throw new Error("an empty first page");
      const done = counted.measure();
      const second = await index.query({
        pageSize: 5,
        after: { updatedAt: last.updatedAt, taskId: last.taskId },
        snapshot: first.value.snapshot,
        state: "working",
      });
      if (!second.ok || !("value" in second)) throw new Error("no second page");
      return done()
        .queries // The total is a count: it reads the smallest index whole, by design.
        .filter((q) => !q.includes("COUNT(*)"))
        .map((q) => plan(state.storage.sql, q, "t"));
    });
    const all = plans.join("\n");
    expect(all).not.toMatch(/\bSCAN (task_index|list_moves|t|m)\b(?! USING)/);
    expect(all).toMatch(
      /SEARCH t USING INDEX task_index_by_update \(updated_at<\?\)|SCAN t USING INDEX task_index_by_update/,
    );
    expect(all).toMatch(/SEARCH m USING INTEGER PRIMARY KEY \(rowid>\?\)/);
    expect(all).toMatch(/SEARCH t USING PRIMARY KEY \(task_id=\?\)/);
  });
});
