import type { Message } from "../models/message";
import { itemFromMessage } from "./conversation-bridge";
import { PINNED } from "./history-store";

/**
 * SQLite schemas, as ordered migrations. Each object records the version it reached in
 * `meta`; on start it applies only the later steps, inside one transaction, so a restart
 * mid-migration re-runs cleanly and running twice changes nothing.
 */
export type MigrationStep = string | ((sql: SqlStorage) => void);
export type Migration = readonly MigrationStep[];

/** The `meta` key of the event log's high-water mark (the newest seq ever deleted). */
export const EVENTS_SEQ_KEY = "events_seq";

/** Task moves a conversation keeps for page tokens: an older token has expired. */
export const CONTEXT_LISTING_KEEP = 10_000;
/** The same for a tenant's index, which sees every conversation's moves. */
export const INDEX_LISTING_KEEP = 100_000;

/**
 * What keeps ListTasks pages stable while tasks change (A2A sorts by last update, so a
 * task updated between two page reads would otherwise move across the cursor and be
 * skipped or listed twice). Every insert and every change of `updated_at` takes the next
 * value of a counter (`list_clock`) into the row's `row_seq`; a change also records the
 * row's previous `updated_at` in `list_moves`. A page token holds the counter as the first
 * page saw it (the snapshot): a later page lists the rows unchanged since (row_seq ≤
 * snapshot) at their place, and the rows changed since at the place they had then (the
 * move that left the snapshot). These triggers did it; each object's writer does since
 * (context v11, index v3), except on delete. The newest `keep` moves are kept, and a
 * token older than that has expired.
 */
function listingSteps(table: string, id: string, keep: number): Migration {
  return [
    `ALTER TABLE ${table} ADD COLUMN row_seq INTEGER NOT NULL DEFAULT 0`,
    "CREATE TABLE IF NOT EXISTS list_clock (id INTEGER PRIMARY KEY CHECK (id = 1), seq INTEGER NOT NULL)",
    "INSERT INTO list_clock (id, seq) VALUES (1, 0) ON CONFLICT (id) DO NOTHING",
    `CREATE TABLE IF NOT EXISTS list_moves (
      seq INTEGER PRIMARY KEY,
      prev_seq INTEGER NOT NULL,
      task_id TEXT NOT NULL,
      old_updated_at TEXT NOT NULL
    )`,
    "CREATE INDEX IF NOT EXISTS list_moves_by_task ON list_moves (task_id)",
    `CREATE TRIGGER IF NOT EXISTS ${table}_listed AFTER INSERT ON ${table} BEGIN
      UPDATE list_clock SET seq = seq + 1 WHERE id = 1;
      UPDATE ${table} SET row_seq = (SELECT seq FROM list_clock WHERE id = 1) WHERE ${id} = new.${id};
    END`,
    `CREATE TRIGGER IF NOT EXISTS ${table}_moved AFTER UPDATE OF updated_at ON ${table}
    WHEN new.updated_at IS NOT old.updated_at BEGIN
      UPDATE list_clock SET seq = seq + 1 WHERE id = 1;
      INSERT INTO list_moves (seq, prev_seq, task_id, old_updated_at)
        VALUES ((SELECT seq FROM list_clock WHERE id = 1), old.row_seq, old.${id}, old.updated_at);
      UPDATE ${table} SET row_seq = (SELECT seq FROM list_clock WHERE id = 1) WHERE ${id} = new.${id};
      DELETE FROM list_moves WHERE seq <= (SELECT seq FROM list_clock WHERE id = 1) - ${keep};
    END`,
    `CREATE TRIGGER IF NOT EXISTS ${table}_unlisted AFTER DELETE ON ${table} BEGIN
      DELETE FROM list_moves WHERE task_id = old.${id};
    END`,
  ];
}

export const CONTEXT_MIGRATIONS: readonly Migration[] = [
  [
    `CREATE TABLE IF NOT EXISTS tasks (
      id TEXT PRIMARY KEY,
      context_id TEXT NOT NULL,
      state TEXT NOT NULL,
      status_message TEXT,
      status_timestamp TEXT NOT NULL,
      metadata TEXT NOT NULL DEFAULT '{}',
      created_at TEXT NOT NULL,
      updated_at TEXT NOT NULL
    )`,
    "CREATE INDEX IF NOT EXISTS tasks_by_update ON tasks (updated_at DESC, id DESC)",
    // One row per message: appending never rewrites what came before.
    `CREATE TABLE IF NOT EXISTS messages (
      task_id TEXT NOT NULL,
      seq INTEGER NOT NULL,
      body TEXT NOT NULL,
      PRIMARY KEY (task_id, seq)
    )`,
    `CREATE TABLE IF NOT EXISTS artifacts (
      task_id TEXT NOT NULL,
      artifact_id TEXT NOT NULL,
      seq INTEGER NOT NULL,
      header TEXT NOT NULL,
      PRIMARY KEY (task_id, artifact_id)
    )`,
    // Parts apart from their artifact, so a streamed chunk is one small insert.
    `CREATE TABLE IF NOT EXISTS artifact_parts (
      task_id TEXT NOT NULL,
      artifact_id TEXT NOT NULL,
      idx INTEGER NOT NULL,
      body TEXT NOT NULL,
      PRIMARY KEY (task_id, artifact_id, idx)
    )`,
    `CREATE TABLE IF NOT EXISTS state_history (
      task_id TEXT NOT NULL,
      seq INTEGER NOT NULL,
      previous_state TEXT NOT NULL,
      new_state TEXT NOT NULL,
      timestamp TEXT NOT NULL,
      PRIMARY KEY (task_id, seq)
    )`,
    // The append-only event log; `seq` is the SSE event id.
    `CREATE TABLE IF NOT EXISTS events (
      seq INTEGER PRIMARY KEY AUTOINCREMENT,
      task_id TEXT NOT NULL,
      body TEXT NOT NULL
    )`,
    "CREATE INDEX IF NOT EXISTS events_by_task ON events (task_id, seq)",
    // Index rows not yet acknowledged by the tenant's index object.
    `CREATE TABLE IF NOT EXISTS index_outbox (
      task_id TEXT PRIMARY KEY,
      state TEXT NOT NULL,
      created_at TEXT NOT NULL,
      updated_at TEXT NOT NULL
    )`,
  ],
  // v2: the conversation history, one row per item. A2A task messages move here, tagged
  // with their task, so a context has one history that every task and model sees.
  // Positions are REAL so an item can go between two others without renumbering;
  // items too big for one row keep their JSON in chunk rows.
  [
    `CREATE TABLE IF NOT EXISTS history_items (
      id TEXT PRIMARY KEY,
      seq REAL NOT NULL,
      task_id TEXT,
      type TEXT NOT NULL,
      body TEXT,
      chunks INTEGER NOT NULL DEFAULT 0
    )`,
    "CREATE UNIQUE INDEX IF NOT EXISTS history_by_seq ON history_items (seq)",
    "CREATE INDEX IF NOT EXISTS history_by_task ON history_items (task_id, seq)",
    `CREATE TABLE IF NOT EXISTS history_chunks (
      item_id TEXT NOT NULL,
      idx INTEGER NOT NULL,
      data TEXT NOT NULL,
      PRIMARY KEY (item_id, idx)
    )`,
    moveMessagesToHistory,
    "DROP TABLE IF EXISTS messages",
  ],
  // v3: webhook push. Configs per task, and a delivery outbox: one row per event and
  // config, written in the same transaction as the event, delivered in order by the alarm.
  [
    `CREATE TABLE IF NOT EXISTS push_configs (
      task_id TEXT NOT NULL,
      id TEXT NOT NULL,
      body TEXT NOT NULL,
      created_at TEXT NOT NULL,
      PRIMARY KEY (task_id, id)
    )`,
    `CREATE TABLE IF NOT EXISTS push_deliveries (
      seq INTEGER PRIMARY KEY AUTOINCREMENT,
      task_id TEXT NOT NULL,
      config_id TEXT NOT NULL,
      event_seq INTEGER,
      state TEXT NOT NULL DEFAULT 'pending',
      attempts INTEGER NOT NULL DEFAULT 0,
      first_attempt_at INTEGER,
      next_at INTEGER NOT NULL,
      last_error TEXT
    )`,
    "CREATE INDEX IF NOT EXISTS push_pending ON push_deliveries (state, task_id, config_id, seq)",
  ],
  // v4: fewer rows per message. A task's state history moves into its row (written by
  // the same UPDATE as its status), and the index outbox becomes a flag on the row (set
  // by that UPDATE, cleared when the tenant index acknowledged it).
  [
    "ALTER TABLE tasks ADD COLUMN state_history TEXT NOT NULL DEFAULT '[]'",
    "ALTER TABLE tasks ADD COLUMN index_pending INTEGER NOT NULL DEFAULT 0",
    moveStateHistoryIntoTasks,
    "UPDATE tasks SET index_pending = 1 WHERE id IN (SELECT task_id FROM index_outbox)",
    "DROP TABLE IF EXISTS state_history",
    "DROP TABLE IF EXISTS index_outbox",
    "CREATE INDEX IF NOT EXISTS tasks_index_pending ON tasks (index_pending) WHERE index_pending = 1",
  ],
  // v5: a config's first delivery (the task snapshot) keeps the body it was queued with.
  ["ALTER TABLE push_deliveries ADD COLUMN snapshot TEXT"],
  // v6: tasks pruned by retention, until the tenant index has forgotten them too.
  ["CREATE TABLE IF NOT EXISTS index_removals (task_id TEXT PRIMARY KEY)"],
  // v7: a model turn reads only its window, but instructions and config updates apply
  // however old they are; this index finds them without scanning the history.
  [`CREATE INDEX IF NOT EXISTS history_pinned ON history_items (seq) WHERE ${PINNED}`],
  // v8: webhook health. A config's failed attempts in a row and whether they made it
  // unhealthy (its undelivered events then coalesce into one task snapshot), the events
  // it had coalesced, and per delivery how many events it stands for.
  [
    "ALTER TABLE push_configs ADD COLUMN failures INTEGER NOT NULL DEFAULT 0",
    "ALTER TABLE push_configs ADD COLUMN unhealthy INTEGER NOT NULL DEFAULT 0",
    "ALTER TABLE push_configs ADD COLUMN skipped INTEGER NOT NULL DEFAULT 0",
    "ALTER TABLE push_deliveries ADD COLUMN skipped INTEGER NOT NULL DEFAULT 0",
  ],
  // v9: ListTasks pages a snapshot (see listingSteps).
  listingSteps("tasks", "id", CONTEXT_LISTING_KEEP),
  // v10: a frozen webhook snapshot too big for its delivery row keeps the rest of its JSON
  // in chunk rows, which go with the row (the trigger: no deleting writer can forget them).
  [
    "ALTER TABLE push_deliveries ADD COLUMN snapshot_chunks INTEGER NOT NULL DEFAULT 0",
    `CREATE TABLE IF NOT EXISTS push_snapshot_chunks (
      seq INTEGER NOT NULL,
      idx INTEGER NOT NULL,
      data TEXT NOT NULL,
      PRIMARY KEY (seq, idx)
    )`,
    `CREATE TRIGGER IF NOT EXISTS push_snapshot_chunks_gone AFTER DELETE ON push_deliveries
       WHEN old.snapshot_chunks > 0
       BEGIN DELETE FROM push_snapshot_chunks WHERE seq = old.seq; END`,
  ],
  // v11: the conversation's own writer keeps that bookkeeping (TaskStore, "listing
  // clock"): the row's new `row_seq` goes in the same INSERT/UPDATE instead of a trigger
  // rewriting the row, and a move is recorded only when a page token may hold the old
  // place. The delete trigger stays. The tenant index keeps its triggers.
  ["DROP TRIGGER IF EXISTS tasks_listed", "DROP TRIGGER IF EXISTS tasks_moved"],
  // v12: one B-tree less to write per message. The pending index rows are read once per
  // object lifetime (then kept in memory by TaskStore), a scan of a table that retention
  // bounds; the partial index cost a page write at every new task and every acknowledgement.
  ["DROP INDEX IF EXISTS tasks_index_pending"],
  // v13: the event log without AUTOINCREMENT, whose `sqlite_sequence` row was one more
  // page written with every event. TaskStore names each seq (past the newest one) and
  // keeps the high-water mark in `meta` when it deletes events, so no seq is ever reused.
  [
    `CREATE TABLE IF NOT EXISTS events_v13 (
      seq INTEGER PRIMARY KEY,
      task_id TEXT NOT NULL,
      body TEXT NOT NULL
    )`,
    "INSERT INTO events_v13 (seq, task_id, body) SELECT seq, task_id, body FROM events",
    `INSERT INTO meta (key, value) SELECT '${EVENTS_SEQ_KEY}', CAST(seq AS TEXT) FROM sqlite_sequence
       WHERE name = 'events' ON CONFLICT (key) DO UPDATE SET value = excluded.value`,
    "DROP TABLE events",
    "ALTER TABLE events_v13 RENAME TO events",
    "CREATE INDEX IF NOT EXISTS events_by_task ON events (task_id, seq)",
  ],
  // v14: an artifact's first parts are kept in its own row (`parts`, a JSON array) when
  // they are small, so a message's answer is one row instead of two; parts appended later,
  // and the parts of a big artifact, stay one row each in `artifact_parts`, numbered after
  // the inline ones. NULL (every row from before): all its parts are in `artifact_parts`.
  [addArtifactParts],
  // v15: the trace context of a task's latest run (a W3C carrier, written only while
  // tracing is on), so its push deliveries and a resumed run stay in its trace.
  ["ALTER TABLE tasks ADD COLUMN trace TEXT"],
];

/** v14's column, added unless there (a migration may run again over a partial rebuild). */
function addArtifactParts(sql: SqlStorage): void {
  const has = sql
    .exec("SELECT 1 FROM pragma_table_info('artifacts') WHERE name = 'parts'")
    .toArray().length;
  if (!has) sql.exec("ALTER TABLE artifacts ADD COLUMN parts TEXT");
}

/** Copies v1-v3 state history rows into their task's `state_history` JSON, in order. */
function moveStateHistoryIntoTasks(sql: SqlStorage): void {
  const changes = new Map<
    string,
    { previousState: string; newState: string; timestamp: string }[]
  >();
  for (const r of sql.exec<{
    task_id: string;
    previous_state: string;
    new_state: string;
    timestamp: string;
  }>(
    "SELECT task_id, previous_state, new_state, timestamp FROM state_history ORDER BY task_id, seq",
  )) {
    const list = changes.get(r.task_id) ?? [];
    list.push({ previousState: r.previous_state, newState: r.new_state, timestamp: r.timestamp });
    changes.set(r.task_id, list);
  }
  for (const [taskId, list] of changes) {
    sql.exec("UPDATE tasks SET state_history = ? WHERE id = ?", JSON.stringify(list), taskId);
  }
}

/** Copies v1 task messages into history rows, oldest first, as the bridge maps them. */
function moveMessagesToHistory(sql: SqlStorage): void {
  const exists = sql
    .exec("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'messages'")
    .toArray().length;
  if (!exists) return;
  let seq = 0;
  const rows = sql
    .exec<{ task_id: string; body: string; created: string }>(
      `SELECT m.task_id, m.body, t.created_at AS created FROM messages m
       JOIN tasks t ON t.id = m.task_id ORDER BY t.created_at, m.task_id, m.seq`,
    )
    .toArray();
  for (const row of rows) {
    const item = itemFromMessage(JSON.parse(row.body) as Message);
    seq += 1;
    sql.exec(
      "INSERT INTO history_items (id, seq, task_id, type, body, chunks) VALUES (?, ?, ?, ?, ?, 0)",
      item.id,
      seq,
      row.task_id,
      item.type,
      JSON.stringify(item),
    );
  }
}

export const INDEX_MIGRATIONS: readonly Migration[] = [
  [
    `CREATE TABLE IF NOT EXISTS task_index (
      task_id TEXT PRIMARY KEY,
      context_id TEXT NOT NULL,
      state TEXT NOT NULL,
      created_at TEXT NOT NULL,
      updated_at TEXT NOT NULL
    )`,
    "CREATE INDEX IF NOT EXISTS task_index_by_update ON task_index (updated_at DESC, task_id DESC)",
  ],
  // v2: ListTasks pages a snapshot (see listingSteps).
  listingSteps("task_index", "task_id", INDEX_LISTING_KEEP),
  // v3: IndexObject.upsert keeps the bookkeeping, as TaskStore does since context v11.
  ["DROP TRIGGER IF EXISTS task_index_listed", "DROP TRIGGER IF EXISTS task_index_moved"],
];

/**
 * An agent registry (A9): one row per live or not yet pruned registration. `name_key` is
 * the lowercase name discovery matches and sorts by; `tags` a JSON array of lowercase tags.
 */
export const REGISTRY_MIGRATIONS: readonly Migration[] = [
  [
    `CREATE TABLE IF NOT EXISTS agents (
      id TEXT PRIMARY KEY,
      owner TEXT NOT NULL,
      name TEXT NOT NULL,
      name_key TEXT NOT NULL,
      url TEXT NOT NULL,
      role TEXT NOT NULL,
      tags TEXT NOT NULL,
      card TEXT NOT NULL,
      registered_at INTEGER NOT NULL,
      expires_at INTEGER NOT NULL,
      ttl_ms INTEGER NOT NULL
    )`,
    "CREATE INDEX IF NOT EXISTS agents_by_name ON agents (name_key, id)",
    "CREATE INDEX IF NOT EXISTS agents_by_expiry ON agents (expires_at)",
  ],
];

/**
 * The listing bookkeeping of `listingSteps` as a new database gets it: the column in its
 * table's CREATE, so only the counter, the moves and the delete trigger are left.
 */
function freshListing(table: string, id: string, keep: number): string[] {
  return listingSteps(table, id, keep).filter(
    (step): step is string =>
      typeof step === "string" &&
      !step.startsWith("ALTER TABLE") &&
      !/TRIGGER.*_(listed|moved) /.test(step),
  );
}

/**
 * The schema a new conversation database gets at once: what CONTEXT_MIGRATIONS build,
 * without their history. Replayed on an empty database, their ALTER, DROP and RENAME
 * steps each made SQLite parse its whole schema again, which cost a new conversation's
 * first message several times a later one. A test builds a database both ways and
 * compares them; a new migration must change this too.
 */
export const CONTEXT_FRESH: readonly string[] = [
  `CREATE TABLE tasks (
    id TEXT PRIMARY KEY,
    context_id TEXT NOT NULL,
    state TEXT NOT NULL,
    status_message TEXT,
    status_timestamp TEXT NOT NULL,
    metadata TEXT NOT NULL DEFAULT '{}',
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    state_history TEXT NOT NULL DEFAULT '[]',
    index_pending INTEGER NOT NULL DEFAULT 0,
    row_seq INTEGER NOT NULL DEFAULT 0,
    trace TEXT
  )`,
  "CREATE INDEX tasks_by_update ON tasks (updated_at DESC, id DESC)",
  `CREATE TABLE artifacts (
    task_id TEXT NOT NULL,
    artifact_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    header TEXT NOT NULL,
    parts TEXT,
    PRIMARY KEY (task_id, artifact_id)
  )`,
  `CREATE TABLE artifact_parts (
    task_id TEXT NOT NULL,
    artifact_id TEXT NOT NULL,
    idx INTEGER NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (task_id, artifact_id, idx)
  )`,
  `CREATE TABLE events (
    seq INTEGER PRIMARY KEY,
    task_id TEXT NOT NULL,
    body TEXT NOT NULL
  )`,
  "CREATE INDEX events_by_task ON events (task_id, seq)",
  `CREATE TABLE history_items (
    id TEXT PRIMARY KEY,
    seq REAL NOT NULL,
    task_id TEXT,
    type TEXT NOT NULL,
    body TEXT,
    chunks INTEGER NOT NULL DEFAULT 0
  )`,
  "CREATE UNIQUE INDEX history_by_seq ON history_items (seq)",
  "CREATE INDEX history_by_task ON history_items (task_id, seq)",
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
  ...freshListing("tasks", "id", CONTEXT_LISTING_KEEP),
];

/** The same for a tenant's index shard (INDEX_MIGRATIONS). */
export const INDEX_FRESH: readonly string[] = [
  `CREATE TABLE task_index (
    task_id TEXT PRIMARY KEY,
    context_id TEXT NOT NULL,
    state TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    row_seq INTEGER NOT NULL DEFAULT 0
  )`,
  "CREATE INDEX task_index_by_update ON task_index (updated_at DESC, task_id DESC)",
  ...freshListing("task_index", "task_id", INDEX_LISTING_KEEP),
];

/**
 * Applies the migrations this database has not seen yet; returns the version reached.
 * A database without any (a new object) gets `fresh` instead, when given: the same
 * schema in one step.
 */
export function migrate(
  storage: DurableObjectStorage,
  migrations: readonly Migration[],
  fresh?: readonly string[],
): number {
  return storage.transactionSync(() => {
    storage.sql.exec("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)");
    const row = storage.sql
      .exec<{ value: string }>("SELECT value FROM meta WHERE key = 'schema_version'")
      .toArray()[0];
    const current = row ? Number(row.value) : 0;
    const steps = current === 0 && fresh ? [fresh] : migrations.slice(current);
    for (const migration of steps) {
      for (const step of migration) {
        if (typeof step === "string") storage.sql.exec(step);
        else step(storage.sql);
      }
    }
    storage.sql.exec(
      "INSERT INTO meta (key, value) VALUES ('schema_version', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
      String(migrations.length),
    );
    return migrations.length;
  });
}

/** What a Durable Object's storage can do, as the start-up check asks it (see `storageReport`). */
export interface StorageReport {
  /** The object has SQLite storage (its class is in a `new_sqlite_classes` migration). */
  sqlite: boolean;
  /** Its SQLite has `jsonb_each`, which the index and task listing use. */
  jsonb: boolean;
  /** The runtime's own words when either is false. */
  detail: string | null;
}

/**
 * Whether this object's storage is SQLite with the JSON functions Edgelink uses. Read-only:
 * it writes nothing, so asking never creates an object's storage.
 */
export function storageReport(storage: DurableObjectStorage): StorageReport {
  let sql: SqlStorage;
  try {
    sql = storage.sql;
    sql.exec("SELECT 1").toArray();
  } catch (error) {
    return { sqlite: false, jsonb: false, detail: String((error as Error)?.message ?? error) };
  }
  try {
    const [row] = sql
      .exec<{ n: number }>("SELECT count(*) AS n FROM jsonb_each(jsonb('[1,2]'))")
      .toArray();
    return { sqlite: true, jsonb: row?.n === 2, detail: null };
  } catch (error) {
    return { sqlite: true, jsonb: false, detail: String((error as Error)?.message ?? error) };
  }
}

/** Whether an object was ever written (`migrate` made its schema); asking creates nothing. */
export function hasSchema(storage: DurableObjectStorage): boolean {
  return storage.sql.exec("SELECT 1 FROM sqlite_master WHERE name = 'meta'").toArray().length > 0;
}
