import type { CurrentSchema } from "./schema-version";
import { STORAGE_VERSION_KEY } from "./storage-version";

/**
 * Each object's schema as its newest migration leaves it, written out, so a new object
 * makes it in one `sql.exec` (several statements, no bindings) instead of its baseline and
 * then every migration, several of which rebuild tables that are still empty. Objects
 * written by an older version keep migrating (schema.ts). test/storage/schema-current.test.ts
 * builds each database both ways and compares them: a new migration is written here too,
 * with `version` raised to its number.
 *
 * Each statement is laid out as SQLite stores what the migrations made (a rebuilt table's
 * name quoted, as SQLite writes a renamed table; an added column after its table's last
 * one), so both ways store the same text in `sqlite_schema`, up to whitespace.
 */

/**
 * Rows a model must see however old: config updates, system or developer messages and
 * flagged summaries, as versions before 9 found them in each row's JSON (one over a row's
 * size, kept in chunks, is not found). Version 9 stores the answer (`pinned`) instead.
 */
export const PINNED_BY_BODY =
  "(type = 'agent_config_update' OR (type = 'message' AND (json_extract(body, '$.role') IN ('system', 'developer') OR json_extract(body, '$.extra.summary') = 1)))";

/**
 * The same rows by their stored flag, written as each row is (HistoryStore): evaluating
 * `PINNED_BY_BODY` parsed every new row's JSON twice. Written exactly as in the partial
 * index `history_pinned`, so SQLite uses it.
 */
export const PINNED = "pinned = 1";

/** The statements of a schema at `version`, with the version recorded, as one script. */
export function currentSchema(version: number, statements: readonly string[]): CurrentSchema {
  return {
    version,
    sql: [
      ...statements,
      `INSERT INTO meta (key, value) VALUES ('${STORAGE_VERSION_KEY}', '${version}')`,
    ].join(";\n"),
  };
}

/** A conversation (ContextObject), at version 9. */
export const CONTEXT_CURRENT = currentSchema(9, [
  "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
  `CREATE TABLE events (
    seq INTEGER PRIMARY KEY,
    task_id TEXT NOT NULL,
    body TEXT NOT NULL
  )`,
  `CREATE TABLE history_items (
    id TEXT PRIMARY KEY,
    seq REAL NOT NULL,
    task_id TEXT,
    type TEXT NOT NULL,
    body TEXT,
    chunks INTEGER NOT NULL DEFAULT 0
  , pinned INTEGER NOT NULL DEFAULT 0)`,
  "CREATE UNIQUE INDEX history_by_seq ON history_items (seq)",
  `CREATE INDEX history_pinned ON history_items (seq) WHERE ${PINNED}`,
  `CREATE TABLE history_chunks (
    item_id TEXT NOT NULL,
    idx INTEGER NOT NULL,
    data TEXT NOT NULL,
    PRIMARY KEY (item_id, idx)
  )`,
  `CREATE TABLE push_configs (
    task_id TEXT NOT NULL,
    id TEXT NOT NULL,
    body TEXT NOT NULL,
    created_at TEXT NOT NULL,
    failures INTEGER NOT NULL DEFAULT 0,
    unhealthy INTEGER NOT NULL DEFAULT 0,
    skipped INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (task_id, id)
  )`,
  `CREATE TABLE push_deliveries (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    task_id TEXT NOT NULL,
    config_id TEXT NOT NULL,
    event_seq INTEGER,
    state TEXT NOT NULL DEFAULT 'pending',
    attempts INTEGER NOT NULL DEFAULT 0,
    first_attempt_at INTEGER,
    next_at INTEGER NOT NULL,
    last_error TEXT,
    snapshot TEXT,
    skipped INTEGER NOT NULL DEFAULT 0,
    snapshot_chunks INTEGER NOT NULL DEFAULT 0
  )`,
  "CREATE INDEX push_pending ON push_deliveries (state, task_id, config_id, seq)",
  `CREATE TABLE push_snapshot_chunks (
    seq INTEGER NOT NULL,
    idx INTEGER NOT NULL,
    data TEXT NOT NULL,
    PRIMARY KEY (seq, idx)
  )`,
  `CREATE TRIGGER push_snapshot_chunks_gone AFTER DELETE ON push_deliveries
    WHEN old.snapshot_chunks > 0
    BEGIN DELETE FROM push_snapshot_chunks WHERE seq = old.seq; END`,
  "CREATE TABLE index_removals (task_id TEXT PRIMARY KEY)",
  "CREATE TABLE list_clock (id INTEGER PRIMARY KEY CHECK (id = 1), seq INTEGER NOT NULL)",
  "INSERT INTO list_clock (id, seq) VALUES (1, 0)",
  `CREATE TABLE list_moves (
    seq INTEGER PRIMARY KEY,
    prev_seq INTEGER NOT NULL,
    task_id TEXT NOT NULL,
    old_updated_at TEXT NOT NULL
  )`,
  "CREATE INDEX list_moves_by_task ON list_moves (task_id)",
  `CREATE TABLE task_steps (
    task_id TEXT PRIMARY KEY,
    delegations TEXT NOT NULL DEFAULT '[]',
    push_attempts TEXT NOT NULL DEFAULT '[]'
    , approvals TEXT NOT NULL DEFAULT '[]')`,
  `CREATE TABLE "artifacts" (
    task_key INTEGER NOT NULL,
    artifact_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    header TEXT NOT NULL,
    parts TEXT,
    PRIMARY KEY (task_key, artifact_id)
  ) WITHOUT ROWID`,
  `CREATE TABLE "artifact_parts" (
    task_key INTEGER NOT NULL,
    artifact_id TEXT NOT NULL,
    idx INTEGER NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (task_key, artifact_id, idx)
  ) WITHOUT ROWID`,
  `CREATE TABLE approvals (
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
  )`,
  "CREATE INDEX approvals_due ON approvals (deadline) WHERE verdict IS NULL",
  "CREATE TABLE task_ids (id TEXT PRIMARY KEY, key INTEGER NOT NULL) WITHOUT ROWID",
  `CREATE TABLE "tasks" (
    key INTEGER PRIMARY KEY,
    id TEXT NOT NULL,
    row_seq INTEGER NOT NULL,
    context_id TEXT NOT NULL,
    state TEXT NOT NULL,
    status_message TEXT,
    status_timestamp TEXT NOT NULL,
    metadata TEXT NOT NULL DEFAULT '{}',
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    state_history TEXT NOT NULL DEFAULT '[]',
    index_pending INTEGER NOT NULL DEFAULT 0,
    trace TEXT,
    event_floor INTEGER NOT NULL DEFAULT 0,
    event_ceiling INTEGER,
    history_floor REAL NOT NULL,
    history_ceiling REAL,
    first_artifact TEXT,
    first_artifact_parts TEXT
  )`,
  "CREATE INDEX tasks_by_seq ON tasks (row_seq)",
  `CREATE TRIGGER tasks_unlisted AFTER DELETE ON tasks BEGIN
    DELETE FROM list_moves WHERE task_id = old.id;
  END`,
  `CREATE TRIGGER task_steps_gone AFTER DELETE ON tasks
    BEGIN DELETE FROM task_steps WHERE task_id = old.id; END`,
  `CREATE TRIGGER approvals_gone AFTER DELETE ON tasks
    BEGIN DELETE FROM approvals WHERE task_id = old.id; END`,
  `CREATE TRIGGER task_ids_gone AFTER DELETE ON tasks WHEN instr(old.id, '.') = 0
    BEGIN DELETE FROM task_ids WHERE id = old.id; END`,
]);

/** A tenant's index shard (IndexObject), at version 2 (byte for byte: an upgrade test compares it so). */
export const INDEX_CURRENT = currentSchema(2, [
  "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
  "CREATE TABLE list_clock (id INTEGER PRIMARY KEY CHECK (id = 1), seq INTEGER NOT NULL)",
  "INSERT INTO list_clock (id, seq) VALUES (1, 0)",
  `CREATE TABLE list_moves (
      seq INTEGER PRIMARY KEY,
      prev_seq INTEGER NOT NULL,
      task_id TEXT NOT NULL,
      old_updated_at TEXT NOT NULL
    )`,
  `CREATE TABLE "task_index" (
      task_id TEXT PRIMARY KEY,
      context_id TEXT NOT NULL,
      state TEXT NOT NULL,
      created_at TEXT NOT NULL,
      updated_at TEXT NOT NULL,
      row_seq INTEGER NOT NULL DEFAULT 0
    ) WITHOUT ROWID`,
  "CREATE INDEX task_index_by_update ON task_index (updated_at DESC, task_id DESC)",
  `CREATE TRIGGER task_index_moved AFTER UPDATE OF row_seq ON task_index
     WHEN new.row_seq <> old.row_seq BEGIN
       INSERT INTO list_moves (seq, prev_seq, task_id, old_updated_at)
       VALUES (new.row_seq, old.row_seq, old.task_id, old.updated_at);
     END`,
]);
