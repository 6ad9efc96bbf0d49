/**
 * SQLite schemas, as ordered migrations. Each object records the version it reached in
 * `meta`; on start it applies only the later steps, inside one transaction, so a restart
 * mid-migration re-runs cleanly and running twice changes nothing.
 */
export type Migration = readonly string[];

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
];

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
];

/** Applies the migrations this database has not seen yet; returns the version reached. */
export function migrate(storage: DurableObjectStorage, migrations: readonly Migration[]): number {
  return storage.transactionSync(() => {
    storage.sql.exec("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)");
    const row = storage.sql
      .exec<{ value: string }>("SELECT value FROM meta WHERE key = 'schema_version'")
      .toArray()[0];
    const current = row ? Number(row.value) : 0;
    for (let v = current; v < migrations.length; v++) {
      for (const statement of migrations[v] ?? []) storage.sql.exec(statement);
    }
    storage.sql.exec(
      "INSERT INTO meta (key, value) VALUES ('schema_version', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
      String(migrations.length),
    );
    return migrations.length;
  });
}
