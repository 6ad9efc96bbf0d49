import type { MemoryKind } from "../../protocol/memory";
import { correctTurnsOf, deleteEntity } from "./memory-writer";

/**
 * Deletes one item, in the caller's transaction: a fact with its links (the turns it was
 * taken from marked corrected), an entity with its names and links, a goal (its subgoals
 * move up to its parent), a strategy or a turn. True when it existed.
 */
export function removeItem(sql: SqlStorage, kind: MemoryKind, id: string, now: string): boolean {
  switch (kind) {
    case "fact": {
      correctTurnsOf(sql, id, now);
      const gone = sql.exec("DELETE FROM facts WHERE id = ?", id).rowsWritten > 0;
      sql.exec("DELETE FROM fact_entities WHERE fact_id = ?", id);
      return gone;
    }
    case "entity":
      return deleteEntity(sql, id);
    case "goal":
      sql.exec(
        "UPDATE goals SET parent_id = (SELECT parent_id FROM goals WHERE id = ?1) WHERE parent_id = ?1",
        id,
      );
      return sql.exec("DELETE FROM goals WHERE id = ?", id).rowsWritten > 0;
    case "strategy":
      return sql.exec("DELETE FROM strategies WHERE id = ?", id).rowsWritten > 0;
    case "turn":
      return sql.exec("DELETE FROM turns WHERE id = ?", id).rowsWritten > 0;
  }
}

/**
 * The ids of every fact or turn ever given a vector (superseded ones too): what an erase
 * removes from an external index.
 */
export function embeddedIds(sql: SqlStorage): string[] {
  return sql
    .exec<{ id: string }>(
      `SELECT id FROM facts WHERE embedding IS NOT NULL
       UNION ALL SELECT id FROM turns WHERE embedding IS NOT NULL`,
    )
    .toArray()
    .map((r) => r.id);
}
