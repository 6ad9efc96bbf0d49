/**
 * The frozen task snapshot of a webhook delivery: its first chunk in the delivery row
 * (`snapshot`), the rest in `push_snapshot_chunks` rows beside it, so a large task fits the
 * row limit and every retry sends the same bytes.
 */
import { CHUNK_CHARS } from "../../storage/row-limit";

/**
 * Largest task snapshot a webhook delivery freezes (8 Mi characters of JSON, 32 chunk
 * rows): the first part in the delivery row, the rest in chunk rows beside it.
 */
export const MAX_SNAPSHOT_CHARS = 32 * CHUNK_CHARS;

/** Puts what follows a snapshot's first chunk in chunk rows (nothing when it fits). */
export function storeRest(sql: SqlStorage, seq: number, body: string): void {
  if (body.length > MAX_SNAPSHOT_CHARS) {
    throw new RangeError(`snapshot of ${body.length} characters over ${MAX_SNAPSHOT_CHARS}`);
  }
  const chunks = Math.ceil(body.length / CHUNK_CHARS);
  if (chunks <= 1) return;
  for (let i = 1; i < chunks; i++) {
    sql.exec(
      "INSERT INTO push_snapshot_chunks (seq, idx, data) VALUES (?, ?, ?)",
      seq,
      i,
      body.slice(i * CHUNK_CHARS, (i + 1) * CHUNK_CHARS),
    );
  }
  sql.exec("UPDATE push_deliveries SET snapshot_chunks = ? WHERE seq = ?", chunks - 1, seq);
}

/** The frozen body of a delivery, or null when it has none (an event delivery). */
export function readSnapshot(sql: SqlStorage, seq: number): string | null {
  const row = sql
    .exec<{ snapshot: string | null; snapshot_chunks: number }>(
      "SELECT snapshot, snapshot_chunks FROM push_deliveries WHERE seq = ?",
      seq,
    )
    .toArray()[0];
  if (!row || row.snapshot === null) return null;
  if (row.snapshot_chunks === 0) return row.snapshot;
  const rest = sql
    .exec<{ data: string }>("SELECT data FROM push_snapshot_chunks WHERE seq = ? ORDER BY idx", seq)
    .toArray();
  return row.snapshot + rest.map((r) => r.data).join("");
}
