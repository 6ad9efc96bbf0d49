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
    expect(replayed.triggers).toHaveLength(3);
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
