import type { MemoryKind, MemoryStats } from "../../protocol/memory";

/** The items of each kind and their bytes, as `item_counts` keeps them. */
export interface ItemCounts {
  total: number;
  byKind: Partial<Record<MemoryKind, { n: number; bytes: number }>>;
}

/** The counts of a memory with a schema (its triggers keep them: no table is counted). */
export function itemCounts(sql: SqlStorage): ItemCounts {
  const rows = sql
    .exec<{ kind: MemoryKind; n: number; bytes: number }>("SELECT kind, n, bytes FROM item_counts")
    .toArray();
  return {
    total: rows.reduce((sum, r) => sum + r.n, 0),
    byKind: Object.fromEntries(rows.map((r) => [r.kind, { n: r.n, bytes: r.bytes }])),
  };
}

/** The counts as `stats()` answers them: every kind, zero when none. */
export function statsOf({ byKind }: ItemCounts): MemoryStats {
  return {
    facts: byKind.fact?.n ?? 0,
    entities: byKind.entity?.n ?? 0,
    goals: byKind.goal?.n ?? 0,
    strategies: byKind.strategy?.n ?? 0,
    turns: byKind.turn?.n ?? 0,
    bytes: Object.values(byKind).reduce((sum, row) => sum + (row?.bytes ?? 0), 0),
  };
}

/** The kinds the memory holds items of. */
export function kindsHeld({ byKind }: ItemCounts): Set<MemoryKind> {
  return new Set(
    Object.entries(byKind)
      .filter(([, row]) => (row?.n ?? 0) > 0)
      .map(([kind]) => kind as MemoryKind),
  );
}
