import { env, evictDurableObject, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { IndexRow } from "../../../src/index/index-object";
import { type IndexScope, listIndex } from "../../../src/index/index-shards";
import type { TaskState } from "../../../src/protocol/task-state";
import { indexObjectName } from "../../../src/storage/ids";
import { INDEX_SCHEMA } from "../../../src/storage/schema";
import { createSchema, inspectSchema, schemaVersion } from "../../../src/storage/schema-version";
import recorded from "./index-v1.json";

/**
 * A tenant index shard as index schema version 1 wrote it (`index-v1.json`: recorded by
 * running that release), restored into a new shard statement by statement, then woken:
 * the shard migrates itself to this release's version.
 */

type Page = {
  ids: { taskId: string; contextId: string }[];
  totalSize: number;
  nextPageToken: string;
};
type Upsert = { upsert(rows: IndexRow[]): Promise<void> };
const reads = recorded.reads as Record<string, Page>;

const stubOf = (scope: IndexScope) =>
  env.EDGELINK_INDEX.get(
    env.EDGELINK_INDEX.idFromName(indexObjectName(scope.tenant, scope.owner, 0, 1)),
  );

/** Every object of the database but the runtime's and SQLite's own, as SQL text. */
const master = (sql: SqlStorage) =>
  sql
    .exec<{ type: string; name: string; sql: string | null }>(
      "SELECT type, name, sql FROM sqlite_master WHERE name NOT GLOB '_*' ORDER BY type, name",
    )
    .toArray();

/** A new shard holding the recorded database, not yet woken by this release. */
async function restored(): Promise<IndexScope> {
  // A tenant of its own per test: the recorded one's name, made unique.
  const scope = { ...recorded.scope, tenant: `${recorded.scope.tenant}-${crypto.randomUUID()}` };
  const stub = stubOf(scope);
  await runInDurableObject(stub, (_i, state) => {
    const sql = state.storage.sql;
    state.storage.transactionSync(() => {
      for (const o of recorded.schema) if (o.sql) sql.exec(o.sql);
      for (const [table, rows] of Object.entries(recorded.rows)) {
        const columns = (recorded.columns as Record<string, string[]>)[table] ?? [];
        const marks = columns.map(() => "?").join(", ");
        sql.exec(`DELETE FROM ${table}`); // the baseline's own rows (the listing clock)
        for (const row of rows as SqlStorageValue[][]) {
          sql.exec(`INSERT INTO ${table} (${columns.join(", ")}) VALUES (${marks})`, ...row);
        }
      }
    });
  });
  await evictDurableObject(stub);
  return scope;
}

async function page(
  scope: IndexScope,
  q: { pageSize: number; pageToken?: string; state?: string; statusTimestampAfter?: string },
  sendRows?: (contextIds: string[]) => Promise<void>,
): Promise<Page> {
  const p = await listIndex(
    env.EDGELINK_INDEX,
    scope,
    { ...q, state: q.state as TaskState | undefined },
    sendRows,
  );
  return { ids: p.rows, totalSize: p.totalSize, nextPageToken: p.nextPageToken };
}

const at = (s: number) => new Date(Date.UTC(2026, 11, 1, 9, 0, s)).toISOString();

describe("a tenant index shard written at index schema version 1 answers the same after the upgrade", () => {
  it("B1: every listing (order, totalSize, filters, the page tokens it issues) answers what version 1 answered, and the schema becomes a new shard's", async () => {
    const scope = await restored();
    const now = {
      listAll: await page(scope, { pageSize: 100 }),
      byState: await page(scope, { pageSize: 100, state: "TASK_STATE_COMPLETED" }),
      byStateRaw: await page(scope, { pageSize: 100, state: "completed" }),
      since: await page(scope, { pageSize: 100, statusTimestampAfter: at(20) }),
    };
    for (const [name, answer] of Object.entries(now)) expect(answer, name).toEqual(reads[name]);
    const fresh = stubOf({
      tenant: `upgrade-index-fresh-${crypto.randomUUID()}`,
      owner: "",
      shards: 1,
    });
    const wanted = await runInDurableObject(fresh, (_i, state) => {
      createSchema(state.storage, INDEX_SCHEMA);
      return master(state.storage.sql);
    });
    const migrated = await runInDurableObject(stubOf(scope), (_i, state) => ({
      found: inspectSchema(state.storage.sql, INDEX_SCHEMA),
      master: master(state.storage.sql),
      rows: state.storage.sql.exec("SELECT COUNT(*) AS n FROM task_index").one().n,
    }));
    expect(migrated.found).toEqual({
      state: "current",
      version: schemaVersion(INDEX_SCHEMA),
      behind: false,
    });
    expect(schemaVersion(INDEX_SCHEMA)).toBe(2);
    expect(migrated.master).toEqual(wanted);
    expect(migrated.rows).toBe(recorded.rows.task_index.length);
  });

  it("B1: page tokens issued before the upgrade read the same next pages, across the moves made before and after it", async () => {
    const scope = await restored();
    // Pages of a listing whose first page was read before moves, all before the upgrade.
    const second = await page(scope, { pageSize: 3, pageToken: reads.listFirst?.nextPageToken });
    expect(second).toEqual(reads.listSecond);
    const third = await page(scope, { pageSize: 3, pageToken: second.nextPageToken });
    expect(third).toEqual(reads.listThird);
    expect(await page(scope, { pageSize: 20, pageToken: third.nextPageToken })).toEqual(
      reads.listFourth,
    );
    // After the upgrade the tasks of that page move to the top (the trigger records their
    // old places), a new task arrives: the token still reads the page its snapshot had.
    const next = reads.pendingNext as Page;
    await (stubOf(scope) as unknown as Upsert).upsert([
      ...next.ids.map((r, i) => ({
        taskId: r.taskId,
        contextId: r.contextId,
        state: "completed",
        createdAt: at(0),
        updatedAt: at(50 + i),
      })),
      {
        taskId: "after-upgrade",
        contextId: "ctx-0",
        state: "working",
        createdAt: at(60),
        updatedAt: at(60),
      },
    ]);
    const moved = await page(scope, { pageSize: 4, pageToken: reads.pending?.nextPageToken });
    expect(moved.ids).toEqual(next.ids);
    // totalSize counts the task that arrived since; the listing itself is the snapshot's.
    expect(moved.totalSize).toBe(next.totalSize + 1);
    const fresh = await page(scope, { pageSize: 6 });
    expect(fresh.ids.map((r) => r.taskId)).toEqual([
      "after-upgrade",
      ...next.ids.map((r) => r.taskId).reverse(),
      reads.listAll?.ids[0]?.taskId,
    ]);
  });

  it("B1: the conversations marked before the upgrade are still asked for their rows", async () => {
    const scope = await restored();
    const asked: string[][] = [];
    await page(scope, { pageSize: 1 }, async (ids) => {
      asked.push(ids);
    });
    const marked = recorded.rows.meta
      .filter((r) => String(r[0]).startsWith("mark:"))
      .sort((a, b) => (String(a[1]) < String(b[1]) ? -1 : 1))
      .map((r) => String(r[0]).slice("mark:".length));
    expect(marked).toEqual(["ctx-marked", "ctx-2"]);
    expect(asked).toEqual([marked]);
  });
});
