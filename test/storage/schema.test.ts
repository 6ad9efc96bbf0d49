import { env, evictDurableObject, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { ContextRpc } from "../../src/conversation/context-object";
import type { IndexObject } from "../../src/index/index-object";
import { contextObjectName, idKeys, sealedTaskId } from "../../src/storage/ids";
import { CONTEXT_SCHEMA, INDEX_SCHEMA, REGISTRY_SCHEMA } from "../../src/storage/schema";
import {
  createSchema,
  inspectSchema,
  openSchema,
  type Schema,
  type StorageReport,
  schemaVersion,
} from "../../src/storage/schema-version";
import { BASE, rest, rpc, send, userMessage } from "../support/helpers";
import { type MasterRow, SCHEMA_0X } from "../support/schema-0x";

type Json = Record<string, unknown>;
type Row = Record<string, SqlStorageValue>;

/** SQL text as the fixture keeps it: no `IF NOT EXISTS`, whitespace collapsed. */
function normalizedSql(text: string | null): string | null {
  if (text === null) return null;
  return text
    .replace(/IF NOT EXISTS /g, "")
    .replace(/\s+/g, " ")
    .replace(/\( /g, "(")
    .replace(/ \)/g, ")")
    .replace(/ ,/g, ",")
    .trim();
}

/** sqlite_master without the platform's own tables, as SCHEMA_0X records it. */
function master(sql: SqlStorage): MasterRow[] {
  return sql
    .exec<{ type: string; name: string; tbl_name: string; sql: string | null }>(
      "SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name NOT GLOB '_cf_*' ORDER BY type, name",
    )
    .toArray()
    .map((o) => ({ ...o, sql: normalizedSql(o.sql) }));
}

function meta(sql: SqlStorage): Row[] {
  return sql.exec<Row>("SELECT key, value FROM meta ORDER BY key").toArray();
}

/** A new object of the context namespace, to hold a schema (any class's SQLite will do). */
function scratch(): DurableObjectStub {
  const ns = env.EDGELINK_CONTEXT;
  return ns.get(ns.idFromName(`schema-baseline-${crypto.randomUUID()}`));
}

/** The inspector's task steps (version 3): their table and the trigger that drops a task's row. */
const TASK_STEPS: MasterRow[] = [
  {
    type: "index",
    name: "sqlite_autoindex_task_steps_1",
    tbl_name: "task_steps",
    sql: null,
  },
  {
    type: "table",
    name: "task_steps",
    tbl_name: "task_steps",
    sql: normalizedSql(`CREATE TABLE task_steps (
        task_id TEXT PRIMARY KEY,
        delegations TEXT NOT NULL DEFAULT '[]',
        push_attempts TEXT NOT NULL DEFAULT '[]'
      , approvals TEXT NOT NULL DEFAULT '[]')`),
  },
  {
    type: "trigger",
    name: "task_steps_gone",
    tbl_name: "tasks",
    sql: normalizedSql(`CREATE TRIGGER task_steps_gone AFTER DELETE ON tasks
         BEGIN DELETE FROM task_steps WHERE task_id = old.id; END`),
  },
];

/**
 * Calls held for a person (version 5): their table, its index of deadlines, its trigger;
 * the relayed call's origin (version 6).
 */
const APPROVALS: MasterRow[] = [
  {
    type: "index",
    name: "approvals_due",
    tbl_name: "approvals",
    sql: normalizedSql("CREATE INDEX approvals_due ON approvals (deadline) WHERE verdict IS NULL"),
  },
  { type: "index", name: "sqlite_autoindex_approvals_1", tbl_name: "approvals", sql: null },
  {
    type: "table",
    name: "approvals",
    tbl_name: "approvals",
    sql: normalizedSql(`CREATE TABLE approvals (
        task_id TEXT NOT NULL,
        call_id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        tool TEXT NOT NULL,
        arguments TEXT NOT NULL,
        kind TEXT NOT NULL,
        origin TEXT NOT NULL,
        reason TEXT,
        choices TEXT,
        deadline INTEGER,
        on_timeout TEXT NOT NULL,
        verdict TEXT,
        decided_arguments TEXT,
        decided_reason TEXT,
        decided_by TEXT,
        decided_at INTEGER,
        message_id TEXT, relay TEXT,
        PRIMARY KEY (task_id, call_id)
      )`),
  },
  {
    type: "trigger",
    name: "approvals_gone",
    tbl_name: "tasks",
    sql: normalizedSql(`CREATE TRIGGER approvals_gone AFTER DELETE ON tasks
         BEGIN DELETE FROM approvals WHERE task_id = old.id; END`),
  },
];

/**
 * Version 4's tables, rebuilt (their names quoted, as SQLite writes a renamed table): the
 * tasks keyed by a conversation-local integer and listed by `row_seq`, with their history
 * bounds; the artifact rows keyed by that integer, in their primary key.
 */
const VERSION_4: MasterRow[] = [
  {
    type: "table",
    name: "tasks",
    tbl_name: "tasks",
    sql: "CREATE TABLE \"tasks\" (key INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, row_seq INTEGER NOT NULL, context_id TEXT NOT NULL, state TEXT NOT NULL, status_message TEXT, status_timestamp TEXT NOT NULL, metadata TEXT NOT NULL DEFAULT '{}', created_at TEXT NOT NULL, updated_at TEXT NOT NULL, state_history TEXT NOT NULL DEFAULT '[]', index_pending INTEGER NOT NULL DEFAULT 0, trace TEXT, event_floor INTEGER NOT NULL DEFAULT 0, event_ceiling INTEGER, history_floor REAL NOT NULL, history_ceiling REAL)",
  },
  {
    type: "index",
    name: "tasks_by_seq",
    tbl_name: "tasks",
    sql: "CREATE INDEX tasks_by_seq ON tasks (row_seq)",
  },
  {
    type: "table",
    name: "artifacts",
    tbl_name: "artifacts",
    sql: 'CREATE TABLE "artifacts" (task_key INTEGER NOT NULL, artifact_id TEXT NOT NULL, seq INTEGER NOT NULL, header TEXT NOT NULL, parts TEXT, PRIMARY KEY (task_key, artifact_id)) WITHOUT ROWID',
  },
  {
    type: "table",
    name: "artifact_parts",
    tbl_name: "artifact_parts",
    sql: 'CREATE TABLE "artifact_parts" (task_key INTEGER NOT NULL, artifact_id TEXT NOT NULL, idx INTEGER NOT NULL, body TEXT NOT NULL, PRIMARY KEY (task_key, artifact_id, idx)) WITHOUT ROWID',
  },
];

/** Version 7: the task row holds its first artifact while it is small and written whole. */
const VERSION_7: MasterRow = {
  type: "table",
  name: "tasks",
  tbl_name: "tasks",
  sql: "CREATE TABLE \"tasks\" (key INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, row_seq INTEGER NOT NULL, context_id TEXT NOT NULL, state TEXT NOT NULL, status_message TEXT, status_timestamp TEXT NOT NULL, metadata TEXT NOT NULL DEFAULT '{}', created_at TEXT NOT NULL, updated_at TEXT NOT NULL, state_history TEXT NOT NULL DEFAULT '[]', index_pending INTEGER NOT NULL DEFAULT 0, trace TEXT, event_floor INTEGER NOT NULL DEFAULT 0, event_ceiling INTEGER, history_floor REAL NOT NULL, history_ceiling REAL, first_artifact TEXT, first_artifact_parts TEXT)",
};

/**
 * Index version 2: `task_index` kept in its primary key (rebuilt, so its name is quoted),
 * its moves recorded by a trigger, and no index of the moves by task nor trigger using it.
 */
const INDEX_VERSION_2: MasterRow[] = [
  {
    type: "table",
    name: "task_index",
    tbl_name: "task_index",
    sql: 'CREATE TABLE "task_index" (task_id TEXT PRIMARY KEY, context_id TEXT NOT NULL, state TEXT NOT NULL, created_at TEXT NOT NULL, updated_at TEXT NOT NULL, row_seq INTEGER NOT NULL DEFAULT 0) WITHOUT ROWID',
  },
  {
    type: "trigger",
    name: "task_index_moved",
    tbl_name: "task_index",
    sql: "CREATE TRIGGER task_index_moved AFTER UPDATE OF row_seq ON task_index WHEN new.row_seq <> old.row_seq BEGIN INSERT INTO list_moves (seq, prev_seq, task_id, old_updated_at) VALUES (new.row_seq, old.row_seq, old.task_id, old.updated_at); END",
  },
];
const INDEX_DROPPED_IN_2 = new Set([
  "task_index",
  "sqlite_autoindex_task_index_1",
  "list_moves_by_task",
  "task_index_unlisted",
]);
/**
 * Version 8: a task's id names its row (its key after a `.`), so `tasks` has no index of
 * ids; the keys of ids issued before are in `task_ids`.
 */
const VERSION_8: MasterRow[] = [
  {
    ...VERSION_7,
    sql: (VERSION_7.sql as string).replace("id TEXT NOT NULL UNIQUE", "id TEXT NOT NULL"),
  },
  {
    type: "table",
    name: "task_ids",
    tbl_name: "task_ids",
    sql: "CREATE TABLE task_ids (id TEXT PRIMARY KEY, key INTEGER NOT NULL) WITHOUT ROWID",
  },
  {
    type: "trigger",
    name: "task_ids_gone",
    tbl_name: "tasks",
    sql: "CREATE TRIGGER task_ids_gone AFTER DELETE ON tasks WHEN instr(old.id, '.') = 0 BEGIN DELETE FROM task_ids WHERE id = old.id; END",
  },
];

/**
 * Version 9: whether a history row is pinned is stored in it, and the partial index of
 * pinned rows reads that flag instead of each row's JSON.
 */
const VERSION_9: MasterRow[] = [
  {
    type: "table",
    name: "history_items",
    tbl_name: "history_items",
    sql: "CREATE TABLE history_items (id TEXT PRIMARY KEY, seq REAL NOT NULL, task_id TEXT, type TEXT NOT NULL, body TEXT, chunks INTEGER NOT NULL DEFAULT 0, pinned INTEGER NOT NULL DEFAULT 0)",
  },
  {
    type: "index",
    name: "history_pinned",
    tbl_name: "history_items",
    sql: "CREATE INDEX history_pinned ON history_items (seq) WHERE pinned = 1",
  },
];
const REPLACED_IN_9 = new Set(VERSION_9.map((r) => r.name));

/** What version 4 drops: indexes no query needs any more, and the rebuilt tables' own. */
const DROPPED_IN_4 = new Set([
  "tasks_by_update",
  "history_by_task",
  "sqlite_autoindex_artifacts_1",
  "sqlite_autoindex_artifact_parts_1",
]);

/**
 * What this release's schema holds: a development build's, plus the column added to the baseline before
 * it was released (`trace`), then a conversation's migration to version 2 (the tasks'
 * `event_floor` and `event_ceiling` instead of the event log's index by task), to
 * version 3 (the inspector's task steps), to version 4 (`VERSION_4`), to version 5
 * (calls held for approval, and the decisions in the task steps), to version 6 (a
 * held call relayed from a delegated agent), to version 7 (a task's first artifact in
 * its own row: `VERSION_7`), to version 8 (no index of task ids: `VERSION_8`) and to version
 * 9 (a history row's pinned flag stored: `VERSION_9`); an index
 * shard's, migrated to version 2 (`INDEX_VERSION_2`).
 */
function expected(kind: keyof typeof SCHEMA_0X): MasterRow[] {
  const order = (r: MasterRow) => `${r.type}\u0000${r.name}`;
  if (kind === "index") {
    return [
      ...SCHEMA_0X.index.filter((row) => !INDEX_DROPPED_IN_2.has(row.name)),
      ...INDEX_VERSION_2,
    ].sort((a, b) => (order(a) < order(b) ? -1 : 1));
  }
  if (kind !== "conversation") return SCHEMA_0X[kind];
  const rebuilt = new Set(VERSION_4.map((r) => r.name));
  const rows = SCHEMA_0X.conversation.filter(
    (row) =>
      row.name !== "events_by_task" &&
      !DROPPED_IN_4.has(row.name) &&
      row.name !== "sqlite_autoindex_tasks_1" && // version 8: no index of task ids
      !REPLACED_IN_9.has(row.name) &&
      !(row.type === "table" && rebuilt.has(row.name)),
  );
  const tasks = (r: MasterRow) => r.type === "table" && r.name === "tasks";
  return [
    ...rows,
    ...TASK_STEPS,
    ...VERSION_4.filter((r) => !tasks(r)),
    ...VERSION_8,
    ...VERSION_9,
    ...APPROVALS,
  ].sort((a, b) => (order(a) < order(b) ? -1 : 1));
}

/** The version each kind's schema reaches. */
const VERSIONS = { conversation: "9", index: "2", registry: "1" } as const;

const built = (schema: Schema) =>
  runInDurableObject(scratch(), (_i, state) => {
    createSchema(state.storage, schema);
    return { master: master(state.storage.sql), meta: meta(state.storage.sql) };
  });

describe("one baseline schema per object kind, versioned", () => {
  it("the baseline and its migrations build exactly the schema the development builds built for a new object (sqlite_master), plus the task's trace column, the task's event floor instead of the log's index by task (conversation, version 2) and the inspector's task steps (version 3)", async () => {
    for (const [kind, schema] of [
      ["conversation", CONTEXT_SCHEMA],
      ["index", INDEX_SCHEMA],
      ["registry", REGISTRY_SCHEMA],
    ] as const) {
      const made = await built(schema);
      expect(made.master, kind).toEqual(expected(kind));
      expect(made.meta, kind).toEqual([{ key: "storage_version", value: VERSIONS[kind] }]);
    }
  });

  it("a conversation's first message makes exactly the baseline (no other table, no development-build version key)", async () => {
    const task = await send("baseline");
    const stub = env.EDGELINK_CONTEXT.get(
      env.EDGELINK_CONTEXT.idFromName(contextObjectName("", task.contextId as string)),
    );
    const made = await runInDurableObject(stub, (_i, state) => ({
      master: master(state.storage.sql),
      version: state.storage.sql
        .exec<Row>("SELECT key, value FROM meta WHERE key LIKE '%version'")
        .toArray(),
    }));
    expect(made.master).toEqual(expected("conversation"));
    expect(made.version).toEqual([{ key: "storage_version", value: VERSIONS.conversation }]);
  });

  it("a future migration on top of the baseline applies once, keeps the rows, and equals a new object's schema", async () => {
    let ran = 0;
    const future: Schema = {
      ...CONTEXT_SCHEMA,
      migrations: [
        ...CONTEXT_SCHEMA.migrations,
        ["ALTER TABLE tasks ADD COLUMN priority INTEGER NOT NULL DEFAULT 0"],
        [
          () => {
            ran += 1;
          },
          "CREATE INDEX tasks_by_priority ON tasks (priority)",
        ],
      ],
    };
    const next = String(schemaVersion(CONTEXT_SCHEMA) + 2);
    expect(schemaVersion(future)).toBe(Number(next));
    const log = vi.spyOn(console, "error").mockImplementation(() => {});
    const migrated = await runInDurableObject(scratch(), (_i, state) => {
      const sql = state.storage.sql;
      createSchema(state.storage, CONTEXT_SCHEMA);
      sql.exec(
        `INSERT INTO tasks (key, row_seq, history_floor, id, context_id, state, status_timestamp, created_at, updated_at)
         VALUES (1, 1, 1, 't', 'c', 'working', 'x', 'x', 'x')`,
      );
      const first = openSchema(state.storage, future);
      const second = openSchema(state.storage, future);
      return {
        opened: [first.vacant, first.refused, second.vacant, second.refused],
        rows: sql.exec("SELECT id, priority FROM tasks").toArray(),
        master: master(sql),
        meta: meta(sql),
        found: inspectSchema(sql, future),
        // This release, on storage a later one migrated: refused, not read.
        older: openSchema(state.storage, CONTEXT_SCHEMA).refused?.toData(),
      };
    });
    expect(migrated.opened).toEqual([false, null, false, null]);
    expect(ran).toBe(1);
    expect(migrated.rows).toEqual([{ id: "t", priority: 0 }]);
    expect(migrated.meta).toEqual([{ key: "storage_version", value: next }]);
    expect(migrated.found).toEqual({ state: "current", version: Number(next), behind: false });
    expect(migrated.older).toMatchObject({
      kind: "StorageOutdated",
      metadata: { object: "conversation", found: `version ${next}` },
    });
    expect(migrated.older?.message).toContain(
      `newer than this Edgelink knows (${VERSIONS.conversation})`,
    );
    // A new object gets the baseline and then the same migrations.
    const fresh = await built(future);
    expect(ran).toBe(2);
    expect(fresh.master).toEqual(migrated.master);
    expect(fresh.master.map((o) => o.name)).toContain("tasks_by_priority");
    log.mockRestore();
  });

  it("a version 2 conversation migrates to the inspector's task steps; its tasks stay as they were, old step metadata included", async () => {
    const v2: Schema = { ...CONTEXT_SCHEMA, migrations: CONTEXT_SCHEMA.migrations.slice(0, 1) };
    const migrated = await runInDurableObject(scratch(), (_i, state) => {
      const sql = state.storage.sql;
      createSchema(state.storage, v2);
      const metadata = JSON.stringify({ delegations: [{ key: "1", at: 1 }], pushAttempts: [] });
      sql.exec(
        `INSERT INTO tasks (id, context_id, state, status_timestamp, created_at, updated_at, metadata)
         VALUES ('t', 'c', 'completed', 'x', 'x', 'x', ?)`,
        metadata,
      );
      const opened = openSchema(state.storage, CONTEXT_SCHEMA);
      return {
        opened: [opened.vacant, opened.refused],
        master: master(sql),
        meta: meta(sql),
        metadata: sql.exec<{ m: string }>("SELECT metadata AS m FROM tasks").one().m,
        steps: sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM task_steps").one().n,
      };
    });
    expect(migrated.opened).toEqual([false, null]);
    expect(migrated.master).toEqual(expected("conversation"));
    expect(migrated.meta).toEqual([{ key: "storage_version", value: VERSIONS.conversation }]);
    expect(JSON.parse(migrated.metadata)).toEqual({
      delegations: [{ key: "1", at: 1 }],
      pushAttempts: [],
    });
    expect(migrated.steps).toBe(0);
  });

  it("a read on objects never written creates nothing: conversation, index shard, their storage reports", async () => {
    const contextId = `never-${crypto.randomUUID()}`;
    const stub = env.EDGELINK_CONTEXT.get(
      env.EDGELINK_CONTEXT.idFromName(contextObjectName("", contextId)),
    );
    const rpc = stub as unknown as ContextRpc & { storageReport(): Promise<StorageReport> };
    const scope = { tenant: "", contextId, owner: "" };
    expect((await rpc.getTask(scope, "t")).ok).toBe(false);
    expect((await rpc.listTasks(scope, { pageSize: 10 } as never)).ok).toBe(true);
    expect((await rpc.getHistory(scope, { limit: 10 })).ok).toBe(false);
    expect(await rpc.storageReport()).toEqual({
      sqlite: true,
      jsonb: true,
      detail: null,
      refused: null,
    });
    const shard = env.EDGELINK_INDEX.get(
      env.EDGELINK_INDEX.idFromName(`index/never-${crypto.randomUUID()}`),
    ) as unknown as DurableObjectStub<IndexObject>;
    const page = await shard.query({ pageSize: 10, after: null, snapshot: null } as never);
    expect(page).toEqual({ ok: true, value: { rows: [], totalSize: 0, snapshot: 0 } });
    for (const s of [stub, shard]) {
      const state = await runInDurableObject(s as DurableObjectStub, (_i, st) =>
        inspectSchema(st.storage.sql, CONTEXT_SCHEMA),
      );
      expect(state).toEqual({ state: "none" });
    }
  });
});

describe("the runtime's own tables are not the object's (restarts)", () => {
  it("B1: an object only read before a restart (wrangler dev's __miniflare_do_name and the platform's _cf_KV its only tables) stays vacant, and a written one answers after it", async () => {
    const task = await send("before the restart");
    const contextId = String(task.contextId);
    const stub = env.EDGELINK_CONTEXT.get(
      env.EDGELINK_CONTEXT.idFromName(contextObjectName("", contextId)),
    );
    // What wrangler 4.164 adds to every named object's SQLite, as a restart finds it.
    await runInDurableObject(stub, (_i, state) => {
      state.storage.sql.exec("CREATE TABLE __miniflare_do_name (name TEXT PRIMARY KEY)");
      state.storage.sql.exec("INSERT INTO __miniflare_do_name VALUES ('x')");
    });
    await evictDurableObject(stub);
    const got = await rest("GET", `/tasks/${String(task.id)}`);
    expect(got.status).toBe(200);
    expect(got.body.id).toBe(task.id);
    expect((await send("after the restart", { contextId })).contextId).toBe(contextId);

    const found = await runInDurableObject(scratch(), async (_i, state) => {
      state.storage.sql.exec("CREATE TABLE __miniflare_do_name (name TEXT PRIMARY KEY)");
      await state.storage.put("platform", "kv"); // the platform's _cf_KV
      return openSchema(state.storage, CONTEXT_SCHEMA);
    });
    expect(found).toEqual({ vacant: true, refused: null });
  });
});

/**
 * A conversation database as a development build left it (its last migration, 14), written out
 * here with a development build's own statements: not derived from today's code.
 */
function write0xConversation(sql: SqlStorage, contextId: string): void {
  sql.exec("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)");
  sql.exec(`CREATE TABLE IF NOT EXISTS tasks (
    id TEXT PRIMARY KEY, context_id TEXT NOT NULL, state TEXT NOT NULL, status_message TEXT,
    status_timestamp TEXT NOT NULL, metadata TEXT NOT NULL DEFAULT '{}',
    created_at TEXT NOT NULL, updated_at TEXT NOT NULL,
    state_history TEXT NOT NULL DEFAULT '[]', index_pending INTEGER NOT NULL DEFAULT 0,
    row_seq INTEGER NOT NULL DEFAULT 0)`);
  sql.exec(`CREATE TABLE IF NOT EXISTS history_items (
    id TEXT PRIMARY KEY, seq REAL NOT NULL, task_id TEXT, type TEXT NOT NULL, body TEXT,
    chunks INTEGER NOT NULL DEFAULT 0)`);
  sql.exec(
    "CREATE TABLE IF NOT EXISTS events (seq INTEGER PRIMARY KEY, task_id TEXT NOT NULL, body TEXT NOT NULL)",
  );
  sql.exec(
    `INSERT INTO tasks (id, context_id, state, status_timestamp, created_at, updated_at, index_pending)
     VALUES ('old-task', ?, 'working', '2025-06-01T00:00:00Z', '2025-06-01T00:00:00Z', '2025-06-01T00:00:00Z', 1)`,
    contextId,
  );
  sql.exec(
    "INSERT INTO meta (key, value) VALUES ('schema_version', '14'), ('tenant', ''), ('context_id', ?), ('owner', '')",
    contextId,
  );
}

/** Everything in a database, to show that nothing was written. */
function everything(sql: SqlStorage) {
  return {
    master: master(sql),
    meta: meta(sql),
    tasks: sql.exec("SELECT * FROM tasks").toArray(),
  };
}

describe("storage made by a development build is refused, not migrated", () => {
  afterEach(() => vi.restoreAllMocks());

  it("a development build's conversation answers every call with StorageOutdated (503) naming what to do, and is left as it was", async () => {
    const contextId = `old-${crypto.randomUUID()}`;
    const stub = env.EDGELINK_CONTEXT.get(
      env.EDGELINK_CONTEXT.idFromName(contextObjectName("", contextId)),
    );
    const before = await runInDurableObject(stub, (_i, state) => {
      write0xConversation(state.storage.sql, contextId);
      return everything(state.storage.sql);
    });
    await evictDurableObject(stub); // woken again, it finds the development build's tables
    const log = vi.spyOn(console, "error").mockImplementation(() => {});
    const taskId = await sealedTaskId(
      await idKeys(env, BASE),
      { tenant: "", owner: "" },
      contextId,
    );
    const got = await rest("GET", `/tasks/${taskId}`);
    expect(got.status).toBe(503);
    const error = got.body.error as Json;
    expect((error.details as Json[])[0]).toMatchObject({
      reason: "STORAGE_OUTDATED",
      metadata: {
        object: "conversation",
        found: "an unversioned development build's schema, migration 14",
      },
    });
    expect(String(error.message)).toContain("neither reads nor migrates");
    expect(String(error.message)).toContain(
      "'Upgrading from a development build' in docs/operations.md",
    );
    const sent = await rpc("SendMessage", { message: userMessage("more", { taskId }) });
    expect(sent.body.error).toMatchObject({
      code: -32603,
      data: [expect.objectContaining({ reason: "STORAGE_OUTDATED" })],
    });
    expect((await rpc("CancelTask", { id: taskId })).body.error).toMatchObject({ code: -32603 });
    const report = await (
      stub as unknown as { storageReport(): Promise<StorageReport> }
    ).storageReport();
    expect(report.refused).toContain("development build");
    // Its alarm (development-build objects may have one set) does nothing either.
    const after = await runInDurableObject(stub, async (instance, state) => {
      await (instance as unknown as { alarm(): Promise<void> }).alarm();
      return everything(state.storage.sql);
    });
    expect(after).toEqual(before);
    // The operator reads it in the log too, once per wake.
    expect(log.mock.calls.map(String)).toEqual([
      expect.stringContaining(
        "edgelink: This conversation object's storage holds an unversioned development build",
      ),
    ]);
  });

  it("tables without any schema version are refused the same way", async () => {
    vi.spyOn(console, "error").mockImplementation(() => {});
    const stub = scratch();
    const refused = await runInDurableObject(stub, (_i, state) => {
      state.storage.sql.exec("CREATE TABLE tasks (id TEXT PRIMARY KEY)");
      return openSchema(state.storage, CONTEXT_SCHEMA).refused?.toData();
    });
    expect(refused).toMatchObject({
      kind: "StorageOutdated",
      metadata: { found: "tables without a schema version (tasks)" },
    });
  });

  it("a development build's index shard refuses queries and upserts, writing nothing", async () => {
    const shard = env.EDGELINK_INDEX.get(
      env.EDGELINK_INDEX.idFromName(`index/old-${crypto.randomUUID()}`),
    );
    const before = await runInDurableObject(shard, (_i, state) => {
      const sql = state.storage.sql;
      sql.exec("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)");
      sql.exec(`CREATE TABLE IF NOT EXISTS task_index (
        task_id TEXT PRIMARY KEY, context_id TEXT NOT NULL, state TEXT NOT NULL,
        created_at TEXT NOT NULL, updated_at TEXT NOT NULL)`);
      sql.exec("INSERT INTO meta (key, value) VALUES ('schema_version', '3')");
      return { master: master(sql), meta: meta(sql) };
    });
    await evictDurableObject(shard);
    vi.spyOn(console, "error").mockImplementation(() => {});
    const index = shard as unknown as DurableObjectStub<IndexObject>;
    const page = await index.query({ pageSize: 10, after: null, snapshot: null } as never);
    expect(page).toMatchObject({
      ok: false,
      error: { kind: "StorageOutdated", metadata: { object: "index" } },
    });
    const row = { taskId: "t", contextId: "c", state: "working", createdAt: "x", updatedAt: "x" };
    // Called inside the object: a rejected RPC would be reported as unhandled by the pool.
    const after = await runInDurableObject(shard, async (instance, state) => {
      const object = instance as unknown as IndexObject;
      const refusals = await Promise.all([
        object.upsert([row]).then(
          () => null,
          (error: Error) => error.message,
        ),
        object.remove(["t"]).then(
          () => null,
          (error: Error) => error.message,
        ),
      ]);
      return { refusals, master: master(state.storage.sql), meta: meta(state.storage.sql) };
    });
    expect(after.refusals).toEqual([
      expect.stringContaining("an unversioned development build's schema, migration 3"),
      expect.stringContaining("an unversioned development build's schema, migration 3"),
    ]);
    expect({ master: after.master, meta: after.meta }).toEqual(before);
  });
});
