import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import {
  CONTEXT_FRESH,
  CONTEXT_MIGRATIONS,
  INDEX_FRESH,
  INDEX_MIGRATIONS,
  type Migration,
  migrate,
} from "../../src/durable/schema";

type Row = Record<string, SqlStorageValue>;

/** Everything about a database's schema that code can observe, and its bookkeeping rows. */
function describeSchema(sql: SqlStorage) {
  const rows = (query: string, ...args: SqlStorageValue[]) =>
    sql.exec<Row>(query, ...args).toArray();
  const normalized = (text: SqlStorageValue) =>
    String(text)
      .replace(/IF NOT EXISTS /g, "")
      .replace(/\s+/g, " ")
      .replace(/\( /g, "(")
      .trim();
  const objects = sql
    .exec<{ type: string; name: string; tbl_name: string; sql: string | null }>(
      "SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name",
    )
    .toArray();
  return {
    objects: objects.map((o) => `${o.type} ${o.name} on ${o.tbl_name}`),
    tables: objects
      .filter((o) => o.type === "table")
      .map((o) => ({
        table: o.name,
        columns: rows("SELECT * FROM pragma_table_xinfo(?)", o.name),
      })),
    indexes: objects
      .filter((o) => o.type === "index")
      .map((o) => ({
        index: o.name,
        sql: o.sql === null ? null : normalized(o.sql),
        columns: rows("SELECT * FROM pragma_index_xinfo(?)", o.name),
        flags: rows(
          'SELECT "unique", origin, partial FROM pragma_index_list(?) WHERE name = ?',
          o.tbl_name,
          o.name,
        ),
      })),
    triggers: objects.filter((o) => o.type === "trigger").map((o) => normalized(o.sql)),
    meta: rows("SELECT key, value FROM meta ORDER BY key"),
    clock: objects.some((o) => o.name === "list_clock") ? rows("SELECT * FROM list_clock") : [],
  };
}

async function built(
  ns: DurableObjectNamespace,
  migrations: readonly Migration[],
  fresh?: readonly string[],
) {
  const stub = ns.get(ns.idFromName(`schema-fresh-${crypto.randomUUID()}`));
  return runInDurableObject(stub, (_instance, state) => {
    migrate(state.storage, migrations, fresh);
    // A second run finds the version and changes nothing.
    migrate(state.storage, migrations, fresh);
    return describeSchema(state.storage.sql);
  });
}

describe("a new database gets its schema in one step (issue 10: a new conversation's first message)", () => {
  it("the conversation's fresh schema is exactly what replaying every migration builds", async () => {
    const replayed = await built(env.EDGELINK_CONTEXT, CONTEXT_MIGRATIONS);
    const fresh = await built(env.EDGELINK_CONTEXT, CONTEXT_MIGRATIONS, CONTEXT_FRESH);
    expect(fresh).toEqual(replayed);
    expect(replayed.objects).toContain("table events on events");
    expect(replayed.meta).toContainEqual({
      key: "schema_version",
      value: String(CONTEXT_MIGRATIONS.length),
    });
  });

  it("the index shard's fresh schema is exactly what replaying every migration builds", async () => {
    const replayed = await built(env.EDGELINK_INDEX, INDEX_MIGRATIONS);
    const fresh = await built(env.EDGELINK_INDEX, INDEX_MIGRATIONS, INDEX_FRESH);
    expect(fresh).toEqual(replayed);
    // Since v3 the index's writer keeps the listing; only the delete trigger is left.
    expect(replayed.triggers).toEqual([
      expect.stringMatching(/^CREATE TRIGGER task_index_unlisted AFTER DELETE ON task_index/),
    ]);
  });

  it("an index shard of v2 (the listing triggers) migrates to v3 with its rows, moves and clock", async () => {
    const ns = env.EDGELINK_INDEX;
    const stub = ns.get(ns.idFromName(`schema-fresh-${crypto.randomUUID()}`));
    const after = await runInDurableObject(stub, (_instance, state) => {
      const sql = state.storage.sql;
      migrate(state.storage, INDEX_MIGRATIONS.slice(0, 2));
      // Written by v2's triggers: two rows (clock 1, 2), then the first one moved (clock 3).
      sql.exec(
        `INSERT INTO task_index (task_id, context_id, state, created_at, updated_at)
         VALUES ('a', 'c', 'working', 't0', 't1'), ('b', 'c', 'working', 't0', 't2')`,
      );
      sql.exec("UPDATE task_index SET updated_at = 't3' WHERE task_id = 'a'");
      migrate(state.storage, INDEX_MIGRATIONS, INDEX_FRESH);
      return {
        rows: sql
          .exec("SELECT task_id, updated_at, row_seq FROM task_index ORDER BY task_id")
          .toArray(),
        moves: sql.exec("SELECT seq, prev_seq, task_id, old_updated_at FROM list_moves").toArray(),
        schema: describeSchema(sql),
      };
    });
    expect(after.rows).toEqual([
      { task_id: "a", updated_at: "t3", row_seq: 3 },
      { task_id: "b", updated_at: "t2", row_seq: 2 },
    ]);
    expect(after.moves).toEqual([{ seq: 3, prev_seq: 1, task_id: "a", old_updated_at: "t1" }]);
    expect(after.schema.clock).toEqual([{ id: 1, seq: 3 }]);
    const replayed = await built(ns, INDEX_MIGRATIONS);
    expect({ ...after.schema, clock: [], meta: [] }).toEqual({ ...replayed, clock: [], meta: [] });
  });

  it("a database a migration behind is migrated step by step, not rebuilt (its rows kept)", async () => {
    const ns = env.EDGELINK_CONTEXT;
    const stub = ns.get(ns.idFromName(`schema-fresh-${crypto.randomUUID()}`));
    const after = await runInDurableObject(stub, (_instance, state) => {
      migrate(state.storage, CONTEXT_MIGRATIONS.slice(0, 12));
      state.storage.sql.exec("INSERT INTO events (task_id, body) VALUES ('t', '{}')");
      migrate(state.storage, CONTEXT_MIGRATIONS, CONTEXT_FRESH);
      return {
        events: state.storage.sql.exec("SELECT seq, task_id FROM events").toArray(),
        schema: describeSchema(state.storage.sql),
      };
    });
    expect(after.events).toEqual([{ seq: 1, task_id: "t" }]);
    const replayed = await built(ns, CONTEXT_MIGRATIONS);
    expect({ ...after.schema, meta: [] }).toEqual({ ...replayed, meta: [] });
  });
});
