/**
 * Reserves one extraction call in the hour of `nowMs` (UTC, a fixed window): true when
 * fewer than `max` were reserved in it, and the reservation is written; false otherwise.
 * The caller made the schema.
 */
export function reserveExtractionCall(sql: SqlStorage, max: number, nowMs: number): boolean {
  if (max === 0) return false;
  const hour = Math.floor(nowMs / 3_600_000);
  const row = sql
    .exec<{ hour: number; calls: number }>("SELECT hour, calls FROM extraction_window")
    .toArray()[0];
  const calls = row && row.hour === hour ? row.calls : 0;
  if (calls >= max) return false;
  sql.exec(
    `INSERT INTO extraction_window (id, hour, calls) VALUES (1, ?1, ?2)
     ON CONFLICT (id) DO UPDATE SET hour = ?1, calls = ?2`,
    hour,
    calls + 1,
  );
  return true;
}
