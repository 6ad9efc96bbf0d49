import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { MEMORY_SCHEMA } from "../../src/memory/object/memory-schema";
import { CONTEXT_SCHEMA, INDEX_SCHEMA, REGISTRY_SCHEMA } from "../../src/storage/schema";
import {
  createFromBaseline,
  createSchema,
  type Schema,
  schemaVersion,
} from "../../src/storage/schema-version";

type Row = Record<string, SqlStorageValue>;

const SCHEMAS = [
  ["conversation", CONTEXT_SCHEMA],
  ["index", INDEX_SCHEMA],
  ["registry", REGISTRY_SCHEMA],
  ["memory", MEMORY_SCHEMA],
] as const;

/** SQL text with its whitespace collapsed (as the upgrade tests compare it). */
function normalized(text: SqlStorageValue | undefined): SqlStorageValue | undefined {
  return typeof text === "string" ? text.replace(/\s+/g, " ").trim() : text;
}

/**
 * Everything a database's schema is, in a comparable form: every object of `sqlite_schema`
 * (tables, indexes, triggers, with their SQL), each table's columns (name, type, NOT NULL,
 * default, key) and each index's columns, and every row (the `meta` rows, seeded rows).
 */
function described(sql: SqlStorage) {
  const objects = sql
    .exec<{ type: string; name: string; tbl_name: string; sql: string | null }>(
      "SELECT type, name, tbl_name, sql FROM sqlite_schema WHERE name NOT GLOB '_cf_*' ORDER BY type, name",
    )
    .toArray()
    .map((o) => ({ ...o, sql: normalized(o.sql) }));
  const tables = objects.filter((o) => o.type === "table").map((o) => o.name);
  const columns = Object.fromEntries(
    tables.map((t) => [t, sql.exec<Row>(`SELECT * FROM pragma_table_xinfo('${t}')`).toArray()]),
  );
  const indexes = Object.fromEntries(
    tables.map((t) => [
      t,
      sql
        .exec<Row>(`SELECT name, "unique", origin, partial FROM pragma_index_list('${t}')`)
        .toArray()
        .sort((a, b) => String(a.name).localeCompare(String(b.name)))
        .map((i) => ({
          ...i,
          columns: sql.exec<Row>(`SELECT * FROM pragma_index_xinfo('${i.name}')`).toArray(),
        })),
    ]),
  );
  // Full-text shadow tables hold their configuration as rows; the others hold seeded rows.
  const rows = Object.fromEntries(
    tables
      .filter((t) => !/^\w+_fts$/.test(t))
      .map((t) => [t, sql.exec<Row>(`SELECT * FROM "${t}" ORDER BY 1`).toArray()]),
  );
  return { objects, columns, indexes, rows };
}

/** A new object to hold a database (any class's SQLite will do). */
function scratch(name: string): DurableObjectStub {
  const ns = env.EDGELINK_CONTEXT;
  return ns.get(ns.idFromName(`schema-current-${name}-${crypto.randomUUID()}`));
}

/** The database made the old way (baseline, every migration) and the current script alone. */
async function bothWays(kind: string, schema: Schema) {
  const migrated = await runInDurableObject(scratch(kind), (_i, state) => {
    createFromBaseline(state.storage, schema);
    return described(state.storage.sql);
  });
  const current = await runInDurableObject(scratch(kind), (_i, state) => {
    state.storage.transactionSync(() => state.storage.sql.exec(schema.current.sql));
    return described(state.storage.sql);
  });
  return { migrated, current };
}

describe("a new object gets the current schema in one step, the same as the baseline and every migration make", () => {
  for (const [kind, schema] of SCHEMAS) {
    it(`B1: ${kind}: the current schema is at the newest migration's version (a migration added must be written into the current schema too)`, () => {
      expect(
        schema.current.version,
        `${kind}: migrations reach version ${schemaVersion(schema)} but the current schema is written at ${schema.current.version}: write the new migration into its current schema (src/storage/schema-current.ts, or memory-schema.ts) and raise its version`,
      ).toBe(schemaVersion(schema));
    });

    it(`B1: ${kind}: baseline + migrations and the current schema build the same sqlite_schema, columns, indexes, triggers and rows (meta's version included)`, async () => {
      const { migrated, current } = await bothWays(kind, schema);
      expect(migrated.rows.meta).toEqual([
        { key: "storage_version", value: String(schemaVersion(schema)) },
      ]);
      expect(current.objects, `${kind}: sqlite_schema`).toEqual(migrated.objects);
      expect(current.columns, `${kind}: columns`).toEqual(migrated.columns);
      expect(current.indexes, `${kind}: indexes`).toEqual(migrated.indexes);
      expect(current.rows, `${kind}: rows`).toEqual(migrated.rows);
    });
  }

  it("B1: several statements run in one sql.exec (no bindings), its cursor the last one's", async () => {
    const got = await runInDurableObject(scratch("multi"), (_i, state) => {
      const rows = state.storage.sql
        .exec<{ n: number }>(
          "CREATE TABLE a (x INTEGER);\nCREATE TABLE b (y TEXT); INSERT INTO a VALUES (1); INSERT INTO a VALUES (2); SELECT count(*) AS n FROM a",
        )
        .toArray();
      const names = state.storage.sql
        .exec<{ name: string }>(
          "SELECT name FROM sqlite_schema WHERE name IN ('a', 'b') ORDER BY name",
        )
        .toArray();
      return { rows, names: names.map((r) => r.name) };
    });
    expect(got).toEqual({ rows: [{ n: 2 }], names: ["a", "b"] });
  });

  it("B1: createSchema makes the current schema; a migration newer than it still runs on top, and a schema cut short of it is made from its baseline", async () => {
    const later: Schema = {
      ...CONTEXT_SCHEMA,
      migrations: [
        ...CONTEXT_SCHEMA.migrations,
        ["ALTER TABLE tasks ADD COLUMN later INTEGER NOT NULL DEFAULT 0"],
      ],
    };
    const shorter: Schema = {
      ...CONTEXT_SCHEMA,
      migrations: CONTEXT_SCHEMA.migrations.slice(0, 2),
    };
    const made = async (schema: Schema, how: typeof createSchema) =>
      runInDurableObject(scratch("made"), (_i, state) => {
        how(state.storage, schema);
        return described(state.storage.sql);
      });
    for (const schema of [CONTEXT_SCHEMA, later, shorter]) {
      const created = await made(schema, createSchema);
      expect(created).toEqual(await made(schema, createFromBaseline));
      expect(created.rows.meta).toEqual([
        { key: "storage_version", value: String(schemaVersion(schema)) },
      ]);
    }
  });
});
