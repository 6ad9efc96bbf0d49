/**
 * Scenario (e)'s storage (bench/sdk-do-worker.ts), also run alone by bench/sql-cost.mjs's
 * `sdk` kind: each task one JSON row, saved whole by an upsert (as the SDK's own database
 * store does) and loaded by id.
 */
export function createTaskRows(sql: SqlStorage): void {
  sql.exec(
    `CREATE TABLE IF NOT EXISTS sdk_tasks (
      id TEXT PRIMARY KEY, context_id TEXT NOT NULL, body TEXT NOT NULL, updated_at TEXT NOT NULL
    )`,
  );
}

export function saveTaskRow(sql: SqlStorage, id: string, contextId: string, json: string): void {
  sql.exec(
    `INSERT INTO sdk_tasks (id, context_id, body, updated_at) VALUES (?1, ?2, ?3, ?4)
     ON CONFLICT (id) DO UPDATE SET body = excluded.body, updated_at = excluded.updated_at`,
    id,
    contextId,
    json,
    new Date().toISOString(),
  );
}

/** The task's JSON, parsed, or undefined when there is none. */
export function loadTaskRow(sql: SqlStorage, id: string): unknown {
  const row = sql
    .exec<{ body: string }>("SELECT body FROM sdk_tasks WHERE id = ?", id)
    .toArray()[0];
  return row ? (JSON.parse(row.body) as unknown) : undefined;
}
