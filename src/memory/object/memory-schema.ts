import { GLOBAL_CHANNEL } from "../../protocol/memory";
import { currentSchema } from "../../storage/schema-current";
import type { Schema } from "../../storage/schema-version";

/**
 * A full-text index over `columns` of `table`, kept in step by triggers. External content
 * (`content=`): the text is stored once, in the table; the index holds only its terms.
 * unicode61 with diacritics removed, so "Café" finds "cafe".
 */
function fullText(table: string, columns: readonly string[]): string[] {
  const cols = columns.join(", ");
  const newCols = columns.map((c) => `new.${c}`).join(", ");
  const oldCols = columns.map((c) => `old.${c}`).join(", ");
  const fts = `${table}_fts`;
  return [
    `CREATE VIRTUAL TABLE IF NOT EXISTS ${fts} USING fts5(${cols}, content='${table}', content_rowid='rid', tokenize='unicode61 remove_diacritics 2')`,
    `CREATE TRIGGER IF NOT EXISTS ${table}_fts_insert AFTER INSERT ON ${table} BEGIN
      INSERT INTO ${fts} (rowid, ${cols}) VALUES (new.rid, ${newCols});
    END`,
    `CREATE TRIGGER IF NOT EXISTS ${table}_fts_delete AFTER DELETE ON ${table} BEGIN
      INSERT INTO ${fts} (${fts}, rowid, ${cols}) VALUES ('delete', old.rid, ${oldCols});
    END`,
    `CREATE TRIGGER IF NOT EXISTS ${table}_fts_update AFTER UPDATE OF ${cols} ON ${table} BEGIN
      INSERT INTO ${fts} (${fts}, rowid, ${cols}) VALUES ('delete', old.rid, ${oldCols});
      INSERT INTO ${fts} (rowid, ${cols}) VALUES (new.rid, ${newCols});
    END`,
  ];
}

/** Keeps `item_counts` (one row per kind) in step, so limits and stats never count rows. */
function counted(table: string, kind: string): string[] {
  return [
    `INSERT INTO item_counts (kind, n, bytes) VALUES ('${kind}', 0, 0) ON CONFLICT (kind) DO NOTHING`,
    `CREATE TRIGGER IF NOT EXISTS ${table}_counted AFTER INSERT ON ${table} BEGIN
      UPDATE item_counts SET n = n + 1, bytes = bytes + new.bytes WHERE kind = '${kind}';
    END`,
    `CREATE TRIGGER IF NOT EXISTS ${table}_uncounted AFTER DELETE ON ${table} BEGIN
      UPDATE item_counts SET n = n - 1, bytes = bytes - old.bytes WHERE kind = '${kind}';
    END`,
    `CREATE TRIGGER IF NOT EXISTS ${table}_recounted AFTER UPDATE OF bytes ON ${table} BEGIN
      UPDATE item_counts SET bytes = bytes - old.bytes + new.bytes WHERE kind = '${kind}';
    END`,
  ];
}

/** Version 2's new columns of `entities` and `turns`, and its indexes of turns. */
const ENTITY_COLUMNS_2 = ["description TEXT", "properties TEXT NOT NULL DEFAULT '{}'"];
const TURN_COLUMNS_2 = [
  "idx INTEGER NOT NULL DEFAULT 0",
  "token_count INTEGER",
  "embedding BLOB",
  "metadata TEXT NOT NULL DEFAULT '{}'",
  `channel TEXT NOT NULL DEFAULT '${GLOBAL_CHANNEL}'`,
  "corrected_at TEXT",
];
const TURN_INDEXES_2 = [
  // The next index of a conversation, and a correction finding its task's turns.
  "CREATE INDEX turns_by_conversation ON turns (context_id, idx)",
  "CREATE INDEX turns_by_task ON turns (task_id) WHERE task_id IS NOT NULL",
  // Retention deletes the oldest turns first.
  "CREATE INDEX turns_by_time ON turns (created_at)",
  "CREATE INDEX turns_vectors ON turns (rid) WHERE embedding IS NOT NULL AND corrected_at IS NULL",
];

const BASELINE: readonly string[] = [
  "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
  "CREATE TABLE IF NOT EXISTS item_counts (kind TEXT PRIMARY KEY, n INTEGER NOT NULL, bytes INTEGER NOT NULL)",
  `CREATE TABLE IF NOT EXISTS facts (
    rid INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    claim TEXT NOT NULL,
    claim_hash TEXT NOT NULL,
    confidence REAL NOT NULL,
    source TEXT NOT NULL,
    channel TEXT NOT NULL,
    valid_from TEXT,
    valid_to TEXT,
    supersedes TEXT,
    superseded_by TEXT,
    superseded_at TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    access_count INTEGER NOT NULL DEFAULT 0,
    last_accessed_at TEXT,
    task_id TEXT,
    context_id TEXT,
    bytes INTEGER NOT NULL,
    embedding BLOB
  )`,
  // One live fact per claim hash: a duplicate is found, never stored.
  "CREATE UNIQUE INDEX IF NOT EXISTS facts_live_hash ON facts (claim_hash) WHERE superseded_by IS NULL",
  "CREATE INDEX IF NOT EXISTS facts_superseded ON facts (superseded_at) WHERE superseded_by IS NOT NULL",
  "CREATE INDEX IF NOT EXISTS facts_live_recent ON facts (created_at) WHERE superseded_by IS NULL",
  // Counting live vectors (in-object search or the external index) reads only these.
  "CREATE INDEX IF NOT EXISTS facts_live_vectors ON facts (rid) WHERE superseded_by IS NULL AND embedding IS NOT NULL",
  // Eviction's order among live facts (not the access count: recall updates that on
  // every fact it returns, and an index on it would be rewritten with each).
  "CREATE INDEX IF NOT EXISTS facts_live_value ON facts (confidence, rid) WHERE superseded_by IS NULL",
  `CREATE TABLE IF NOT EXISTS entities (
    rid INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    type TEXT,
    aliases TEXT NOT NULL DEFAULT '[]',
    names TEXT NOT NULL,
    salience REAL NOT NULL,
    access_count INTEGER NOT NULL DEFAULT 0,
    last_accessed_at TEXT,
    channel TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    bytes INTEGER NOT NULL
  )`,
  "CREATE INDEX IF NOT EXISTS entities_by_salience ON entities (salience)",
  // Every name and alias, lower-cased, belongs to exactly one entity.
  `CREATE TABLE IF NOT EXISTS entity_names (
    name TEXT PRIMARY KEY,
    entity_id TEXT NOT NULL
  )`,
  "CREATE INDEX IF NOT EXISTS entity_names_by_entity ON entity_names (entity_id)",
  `CREATE TABLE IF NOT EXISTS fact_entities (
    fact_id TEXT NOT NULL,
    entity_id TEXT NOT NULL,
    PRIMARY KEY (fact_id, entity_id)
  ) WITHOUT ROWID`,
  "CREATE INDEX IF NOT EXISTS fact_entities_by_entity ON fact_entities (entity_id)",
  `CREATE TABLE IF NOT EXISTS goals (
    rid INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    title TEXT NOT NULL,
    description TEXT,
    status TEXT NOT NULL,
    priority INTEGER NOT NULL,
    parent_id TEXT,
    deadline TEXT,
    channel TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    bytes INTEGER NOT NULL
  )`,
  "CREATE INDEX IF NOT EXISTS goals_active ON goals (priority, created_at) WHERE status = 'active'",
  `CREATE TABLE IF NOT EXISTS strategies (
    rid INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    context_pattern TEXT NOT NULL,
    tool_sequence TEXT NOT NULL,
    success_count INTEGER NOT NULL DEFAULT 0,
    failure_count INTEGER NOT NULL DEFAULT 0,
    channel TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    bytes INTEGER NOT NULL,
    UNIQUE (context_pattern, tool_sequence)
  )`,
  `CREATE TABLE IF NOT EXISTS turns (
    rid INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    role TEXT NOT NULL,
    text TEXT NOT NULL,
    task_id TEXT,
    context_id TEXT,
    created_at TEXT NOT NULL,
    bytes INTEGER NOT NULL
  )`,
  // Extraction calls reserved in the current hour (see `reserveExtraction`).
  `CREATE TABLE IF NOT EXISTS extraction_window (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    hour INTEGER NOT NULL,
    calls INTEGER NOT NULL
  )`,
  ...counted("facts", "fact"),
  ...counted("entities", "entity"),
  ...counted("goals", "goal"),
  ...counted("strategies", "strategy"),
  ...counted("turns", "turn"),
  ...fullText("facts", ["claim"]),
  ...fullText("entities", ["names"]),
  ...fullText("goals", ["title", "description"]),
  ...fullText("strategies", ["context_pattern"]),
  ...fullText("turns", ["text"]),
];

/** A baseline statement as version 2 has it: the columns it added in `entities` and `turns`. */
function atVersion2(statement: string): string {
  const added = statement.startsWith("CREATE TABLE IF NOT EXISTS entities (")
    ? ENTITY_COLUMNS_2
    : statement.startsWith("CREATE TABLE IF NOT EXISTS turns (")
      ? TURN_COLUMNS_2
      : [];
  // Where SQLite writes an added column: before the table's closing bracket.
  return added.length ? statement.replace(/\)$/, `, ${added.join(", ")})`) : statement;
}

/**
 * The memory object's SQLite schema: its baseline, and the changes made since (see
 * schema-version.ts).
 * Each table has an integer `rid` (the full-text index's rowid and the listing order) and
 * the public `id`; `bytes` is the item's text size as the item limit counts it.
 */
export const MEMORY_SCHEMA: Schema = {
  kind: "memory",
  baseline: BASELINE,
  migrations: [
    // Turns as whole conversation records (their place in the conversation, channel,
    // metadata, token count, vector, and whether a fact learnt from them was corrected),
    // and entities with a description and properties. Existing turns are numbered in the
    // order they were stored; the old "agent" role is the assistant's.
    [
      ...ENTITY_COLUMNS_2.map((c) => `ALTER TABLE entities ADD COLUMN ${c}`),
      ...TURN_COLUMNS_2.map((c) => `ALTER TABLE turns ADD COLUMN ${c}`),
      "UPDATE turns SET role = 'assistant' WHERE role = 'agent'",
      `UPDATE turns SET idx = n.i FROM (
         SELECT rid, row_number() OVER (PARTITION BY context_id ORDER BY rid) AS i FROM turns
       ) n WHERE turns.rid = n.rid`,
      ...TURN_INDEXES_2,
    ],
  ],
  current: /* @__PURE__ */ currentSchema(2, [...BASELINE.map(atVersion2), ...TURN_INDEXES_2]),
};
