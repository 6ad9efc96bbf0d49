import {
  CONTEXT_CURRENT,
  currentSchema,
  INDEX_CURRENT,
  PINNED,
  PINNED_BY_BODY,
} from "./schema-current";
import type { Migration, Schema } from "./schema-version";

export { PINNED, PINNED_BY_BODY };

/**
 * The SQLite schema of each kind of object: its baseline (version 1) and the migrations
 * since, which objects written by older versions run. A new object gets the current schema
 * in one step (schema-current.ts). Storage made by a development build (its numbered
 * migrations) is not migrated but refused (see `schema-version.ts`); a later change to a
 * schema goes in its `migrations`, applied on top of the baseline, and in schema-current.ts.
 */

/** The `meta` key of the event log's high-water mark (the newest seq ever deleted). */
export const EVENTS_SEQ_KEY = "events_seq";

/** Task moves a conversation keeps for page tokens: an older token has expired. */
export const CONTEXT_LISTING_KEEP = 10_000;
/** The same for a tenant's index, which sees every conversation's moves. */
export const INDEX_LISTING_KEEP = 100_000;
/** The index deletes expired moves once this many have piled up: at most keep + step are left. */
export const INDEX_MOVES_PRUNE_STEP = 1_000;

/**
 * What keeps ListTasks pages stable while tasks change (A2A sorts by last update, so a
 * task updated between two page reads would otherwise move across the cursor and be
 * skipped or listed twice). Every insert and every change of `updated_at` takes the next
 * value of a counter (`list_clock`) into the row's `row_seq`; a change also records the
 * row's previous `updated_at` in `list_moves`. A page token holds the counter as the first
 * page saw it (the snapshot): a later page lists the rows unchanged since (row_seq ≤
 * snapshot) at their place, and the rows changed since at the place they had then (the
 * move that left the snapshot). Each object's writer keeps the counter and the moves
 * (TaskStore, IndexObject.upsert); a trigger forgets a deleted row's moves, so no deleting
 * writer can leave them behind. The newest `keep` moves are kept, and a token older than
 * that has expired.
 */
function listing(table: string, id: string): string[] {
  return [
    "CREATE TABLE list_clock (id INTEGER PRIMARY KEY CHECK (id = 1), seq INTEGER NOT NULL)",
    "INSERT INTO list_clock (id, seq) VALUES (1, 0)",
    `CREATE TABLE list_moves (
      seq INTEGER PRIMARY KEY,
      prev_seq INTEGER NOT NULL,
      task_id TEXT NOT NULL,
      old_updated_at TEXT NOT NULL
    )`,
    "CREATE INDEX list_moves_by_task ON list_moves (task_id)",
    `CREATE TRIGGER ${table}_unlisted AFTER DELETE ON ${table} BEGIN
      DELETE FROM list_moves WHERE task_id = old.${id};
    END`,
  ];
}

/** A task's columns after `row_seq` and `id`, as version 4 keeps them. */
const TASK_COLUMNS = `context_id, state, status_message, status_timestamp, metadata, created_at,
  updated_at, state_history, index_pending, trace, event_floor, event_ceiling`;

/**
 * A per-task table rebuilt under its own name, its rows keyed by their task's integer key
 * instead of its id (a row of a task no longer kept was never read, and is left behind).
 */
function rekey(sql: SqlStorage, table: string, create: string, columns: string): void {
  sql.exec(create.replace(`CREATE TABLE ${table} `, `CREATE TABLE ${table}_next `));
  sql.exec(
    `INSERT INTO ${table}_next (task_key, ${columns})
     SELECT t.key, ${columns
       .split(", ")
       .map((c) => `r.${c}`)
       .join(", ")}
     FROM ${table} r JOIN tasks t ON t.id = r.task_id`,
  );
  sql.exec(`DROP TABLE ${table}`);
  sql.exec(`ALTER TABLE ${table}_next RENAME TO ${table}`);
}

/**
 * Version 4: fewer and cheaper B-tree writes per message.
 * - `tasks` rows are keyed by a conversation-local integer (`key`: the listing sequence the
 *   task was created at, so new rows go at the table's end), and listed along `row_seq`
 *   (an index of small integers, appended to) instead of (updated_at, id). Existing rows
 *   are numbered in the order they listed in ((updated_at, id)) above every sequence
 *   handed out, so listings answer as before; page tokens issued before hold no place
 *   in that order and must list again.
 * - a task's history is read between the task's `history_floor` and `history_ceiling`
 *   (set from its items here, before their index by task goes), like its events.
 * - `artifacts` and `artifact_parts` are keyed by the task's integer key and kept in their
 *   primary key (WITHOUT ROWID): one B-tree each instead of a table and its key, and a new
 *   task's rows go at its end instead of at a random place (the sealed id's).
 */
const fewerTrees: Migration = [
  (sql) => {
    const clock = sql
      .exec<{ n: number }>(
        `SELECT MAX((SELECT seq FROM list_clock WHERE id = 1),
           COALESCE((SELECT MAX(row_seq) FROM tasks), 0),
           COALESCE((SELECT MAX(seq) FROM list_moves), 0)) AS n`,
      )
      .one().n;
    const next =
      (sql.exec<{ s: number | null }>("SELECT MAX(seq) AS s FROM history_items").one().s ?? 0) + 1;
    sql.exec("DROP TRIGGER tasks_unlisted");
    sql.exec("DROP TRIGGER task_steps_gone");
    sql.exec(TASKS_V4.replace("CREATE TABLE tasks ", "CREATE TABLE tasks_next "));
    sql.exec(
      `INSERT INTO tasks_next (key, id, row_seq, ${TASK_COLUMNS}, history_floor, history_ceiling)
       SELECT ?1 + ROW_NUMBER() OVER w, t.id, ?1 + ROW_NUMBER() OVER w, ${TASK_COLUMNS.split(",")
         .map((c) => `t.${c.trim()}`)
         .join(", ")},
         COALESCE((SELECT MIN(h.seq) FROM history_items h WHERE h.task_id = t.id), ?2),
         CASE WHEN t.state IN ('completed', 'failed', 'canceled', 'rejected')
           THEN COALESCE((SELECT MAX(h.seq) FROM history_items h WHERE h.task_id = t.id), ?2 - 1)
         END
       FROM tasks t WINDOW w AS (ORDER BY t.updated_at, t.id)`,
      clock,
      next,
    );
    sql.exec("DROP TABLE tasks");
    sql.exec("ALTER TABLE tasks_next RENAME TO tasks");
    sql.exec("CREATE INDEX tasks_by_seq ON tasks (row_seq)");
    // Every snapshot before this point listed the old order: the moves it needed go.
    sql.exec("DELETE FROM list_moves");
    sql.exec("UPDATE list_clock SET seq = ?1 + (SELECT COUNT(*) FROM tasks) WHERE id = 1", clock);
    sql.exec(TASKS_UNLISTED);
    sql.exec(TASK_STEPS_GONE);
    rekey(sql, "artifacts", ARTIFACTS_V4, "artifact_id, seq, header, parts");
    rekey(sql, "artifact_parts", ARTIFACT_PARTS_V4, "artifact_id, idx, body");
  },
  "DROP INDEX history_by_task",
];

const TASKS_V4 = `CREATE TABLE tasks (
      key INTEGER PRIMARY KEY,
      id TEXT NOT NULL UNIQUE,
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
      history_ceiling REAL
    )`;

const ARTIFACTS_V4 = `CREATE TABLE artifacts (
      task_key INTEGER NOT NULL,
      artifact_id TEXT NOT NULL,
      seq INTEGER NOT NULL,
      header TEXT NOT NULL,
      parts TEXT,
      PRIMARY KEY (task_key, artifact_id)
    ) WITHOUT ROWID`;

const ARTIFACT_PARTS_V4 = `CREATE TABLE artifact_parts (
      task_key INTEGER NOT NULL,
      artifact_id TEXT NOT NULL,
      idx INTEGER NOT NULL,
      body TEXT NOT NULL,
      PRIMARY KEY (task_key, artifact_id, idx)
    ) WITHOUT ROWID`;

const TASKS_UNLISTED = `CREATE TRIGGER tasks_unlisted AFTER DELETE ON tasks BEGIN
      DELETE FROM list_moves WHERE task_id = old.id;
    END`;

const APPROVALS_GONE = `CREATE TRIGGER approvals_gone AFTER DELETE ON tasks
         BEGIN DELETE FROM approvals WHERE task_id = old.id; END`;

const TASK_STEPS_GONE = `CREATE TRIGGER task_steps_gone AFTER DELETE ON tasks
         BEGIN DELETE FROM task_steps WHERE task_id = old.id; END`;

/**
 * Version 8: a task's id names its row (see task-keys.ts), so `tasks` keeps no index of
 * ids: each new task wrote a random leaf of it. The table is rebuilt without the UNIQUE
 * constraint (SQLite drops such an index only with its table), and the keys of the ids
 * issued before, which carry no key, go to `task_ids`, read only for an id without one.
 */
const TASKS_V8_COLUMNS = `key, id, row_seq, ${TASK_COLUMNS}, history_floor, history_ceiling,
  first_artifact, first_artifact_parts`;

const keyedIds: Migration = [
  "CREATE TABLE task_ids (id TEXT PRIMARY KEY, key INTEGER NOT NULL) WITHOUT ROWID",
  "INSERT INTO task_ids (id, key) SELECT id, key FROM tasks",
  "DROP TRIGGER tasks_unlisted",
  "DROP TRIGGER task_steps_gone",
  "DROP TRIGGER approvals_gone",
  TASKS_V4.replace("CREATE TABLE tasks ", "CREATE TABLE tasks_next ")
    .replace("id TEXT NOT NULL UNIQUE", "id TEXT NOT NULL")
    .replace(
      "history_ceiling REAL\n",
      "history_ceiling REAL,\n      first_artifact TEXT,\n      first_artifact_parts TEXT\n",
    ),
  `INSERT INTO tasks_next (${TASKS_V8_COLUMNS}) SELECT ${TASKS_V8_COLUMNS} FROM tasks`,
  "DROP TABLE tasks",
  "ALTER TABLE tasks_next RENAME TO tasks",
  "CREATE INDEX tasks_by_seq ON tasks (row_seq)",
  TASKS_UNLISTED,
  TASK_STEPS_GONE,
  APPROVALS_GONE,
  `CREATE TRIGGER task_ids_gone AFTER DELETE ON tasks WHEN instr(old.id, '.') = 0
     BEGIN DELETE FROM task_ids WHERE id = old.id; END`,
];

/**
 * A conversation (ContextObject). A task is rows, never one blob: `tasks` (its state
 * history a JSON column, `index_pending` its transactional outbox flag for the tenant
 * index); `artifacts` (the first parts inline in `parts` when small, the rest one row each
 * in `artifact_parts`, so a streamed chunk is one small insert); the append-only `events`
 * log, whose `seq` is the SSE event id (no AUTOINCREMENT: TaskStore names each seq and
 * keeps the high-water mark in `meta` under EVENTS_SEQ_KEY; read by task between the
 * task's `event_floor` and `event_ceiling`, since version 2); the conversation history,
 * one row per item at a REAL position (so an item can go between two others), an item
 * too big for a row split into `history_chunks`; webhook configs and their delivery
 * outbox (a frozen snapshot too big for its row in `push_snapshot_chunks`, which a
 * trigger deletes with the row); `index_removals`, tasks pruned by retention until the
 * tenant index has forgotten them.
 */
export const CONTEXT_SCHEMA: Schema = {
  kind: "conversation",
  baseline: [
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
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
    `CREATE INDEX history_pinned ON history_items (seq) WHERE ${PINNED_BY_BODY}`,
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
    ...listing("tasks", "id"),
  ],
  migrations: [
    // No index of the event log by task: an event, the most written row, paid a B-tree
    // page for it in every commit. A task's events are read along `seq` between the task's
    // `event_floor` (the seq the log had reached when the task was made) and, once it has
    // ended, its `event_ceiling` (its final event's seq): the events of its lifetime. Rows
    // made before keep 0 and NULL, and their reads walk the whole log: correct, slower.
    [
      "ALTER TABLE tasks ADD COLUMN event_floor INTEGER NOT NULL DEFAULT 0",
      "ALTER TABLE tasks ADD COLUMN event_ceiling INTEGER",
      "DROP INDEX events_by_task",
    ],
    // A task's operational steps for the inspector (TaskSteps): out of the task's metadata,
    // which every reader and webhook receiver gets. Written only while the inspector is on;
    // a row goes with its task.
    [
      `CREATE TABLE task_steps (
        task_id TEXT PRIMARY KEY,
        delegations TEXT NOT NULL DEFAULT '[]',
        push_attempts TEXT NOT NULL DEFAULT '[]'
      )`,
      `CREATE TRIGGER task_steps_gone AFTER DELETE ON tasks
         BEGIN DELETE FROM task_steps WHERE task_id = old.id; END`,
    ],
    // Fewer B-trees per message: each one a row enters costs at least a page in the
    // commit. See `fewerTrees`.
    fewerTrees,
    // Calls held for a person (ApprovalRows): a model round's tool calls waiting for
    // approval, a handler's questions, each one's decision and deadline; they go with their
    // task. The decisions are also kept in the task's steps for the inspector.
    [
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
        message_id TEXT,
        PRIMARY KEY (task_id, call_id)
      )`,
      "CREATE INDEX approvals_due ON approvals (deadline) WHERE verdict IS NULL",
      APPROVALS_GONE,
      "ALTER TABLE task_steps ADD COLUMN approvals TEXT NOT NULL DEFAULT '[]'",
    ],
    // A held call relayed from a delegated agent (JSON: the agent tool, the parent's call,
    // the child's task): its decision goes back to that child.
    ["ALTER TABLE approvals ADD COLUMN relay TEXT"],
    // A task's first artifact, while small and written whole, in the task's own row (its
    // header and parts as JSON): a message's answer enters no B-tree of its own. The others
    // stay in `artifacts`, after it. Rows written before keep their artifacts there.
    [
      "ALTER TABLE tasks ADD COLUMN first_artifact TEXT",
      "ALTER TABLE tasks ADD COLUMN first_artifact_parts TEXT",
    ],
    // A task's id names its row: no index of ids. See `keyedIds`.
    keyedIds,
    // Whether a history row is pinned, stored as it is written: the partial index's
    // condition read every new row's JSON (two `json_extract`s per message). Rows written
    // before get the flag from that same condition.
    [
      "ALTER TABLE history_items ADD COLUMN pinned INTEGER NOT NULL DEFAULT 0",
      `UPDATE history_items SET pinned = 1 WHERE ${PINNED_BY_BODY}`,
      "DROP INDEX history_pinned",
      `CREATE INDEX history_pinned ON history_items (seq) WHERE ${PINNED}`,
    ],
  ],
  current: CONTEXT_CURRENT,
};

/**
 * Index version 2: a row enters fewer B-trees, and its move is found once.
 * - `task_index` is kept in its primary key (WITHOUT ROWID): one B-tree for the row and
 *   its id instead of a table and its id index. Columns, rows, `row_seq` and the listing
 *   index are unchanged, so the listing answers as before and page tokens keep reading.
 * - a move is recorded by a trigger on the row's update (`task_index_moved`), so the
 *   upsert is one statement that finds each task once (it was a second statement finding
 *   each task again, for new tasks in vain).
 * - no index of the moves by task: only a deleted task's moves needed it. They stay until
 *   pruned with the others by sequence; a move joins its task to be listed, so one whose
 *   task is gone lists nothing.
 * The shard's listing stays on (updated_at, task_id): rows reach it out of time order
 * from many conversations, so `row_seq` order is not ListTasks order here, and shards
 * merge their pages by that key.
 */
const indexRowsCheaper: Migration = [
  "DROP TRIGGER task_index_unlisted",
  "DROP INDEX list_moves_by_task",
  `CREATE TABLE task_index_next (
      task_id TEXT PRIMARY KEY,
      context_id TEXT NOT NULL,
      state TEXT NOT NULL,
      created_at TEXT NOT NULL,
      updated_at TEXT NOT NULL,
      row_seq INTEGER NOT NULL DEFAULT 0
    ) WITHOUT ROWID`,
  `INSERT INTO task_index_next (task_id, context_id, state, created_at, updated_at, row_seq)
     SELECT task_id, context_id, state, created_at, updated_at, row_seq FROM task_index`,
  "DROP TABLE task_index",
  "ALTER TABLE task_index_next RENAME TO task_index",
  "CREATE INDEX task_index_by_update ON task_index (updated_at DESC, task_id DESC)",
  // The upsert gives a row a new row_seq exactly when its updated_at grows.
  `CREATE TRIGGER task_index_moved AFTER UPDATE OF row_seq ON task_index
     WHEN new.row_seq <> old.row_seq BEGIN
       INSERT INTO list_moves (seq, prev_seq, task_id, old_updated_at)
       VALUES (new.row_seq, old.row_seq, old.task_id, old.updated_at);
     END`,
];

/** A tenant's (and owner's) index shard (IndexObject): one row per task, and its listing. */
export const INDEX_SCHEMA: Schema = {
  kind: "index",
  baseline: [
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    `CREATE TABLE task_index (
      task_id TEXT PRIMARY KEY,
      context_id TEXT NOT NULL,
      state TEXT NOT NULL,
      created_at TEXT NOT NULL,
      updated_at TEXT NOT NULL,
      row_seq INTEGER NOT NULL DEFAULT 0
    )`,
    "CREATE INDEX task_index_by_update ON task_index (updated_at DESC, task_id DESC)",
    ...listing("task_index", "task_id"),
  ],
  migrations: [
    // Fewer B-trees per row: see `indexRowsCheaper`.
    indexRowsCheaper,
  ],
  current: INDEX_CURRENT,
};

/**
 * An agent registry: one row per live or not yet pruned registration. `name_key` is
 * the lowercase name discovery matches and sorts by; `tags` a JSON array of lowercase tags.
 */
const REGISTRY_BASELINE = [
  "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
  `CREATE TABLE agents (
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
  "CREATE INDEX agents_by_name ON agents (name_key, id)",
  "CREATE INDEX agents_by_expiry ON agents (expires_at)",
];

/** The agent registry's schema. */
export const REGISTRY_SCHEMA: Schema = {
  kind: "registry",
  baseline: REGISTRY_BASELINE,
  migrations: [],
  // Nothing has changed since the baseline: it is the current schema. Pure, so a Worker
  // without the registry bundles none of it.
  current: /* @__PURE__ */ currentSchema(1, REGISTRY_BASELINE),
};
