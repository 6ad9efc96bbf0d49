/**
 * What SQLite would do with a statement, read without running it: the B-trees it opens for
 * writing (EXPLAIN's OpenWrite instructions, triggers' programs included) and its query plan.
 * Storage tests assert these so that a write or a read does not grow unnoticed.
 */

/** How many values a statement takes: its highest `?N`, or its count of bare `?`. */
export function paramCount(query: string): number {
  const numbered = [...query.matchAll(/\?(\d+)/g)].map((m) => Number(m[1]));
  const bare = (query.match(/\?(?!\d)/g) ?? []).length;
  return Math.max(bare, ...numbered, 0);
}

/** The B-trees (tables and indexes, by name) a statement opens for writing. */
export function treesWritten(sql: SqlStorage, query: string): string[] {
  const roots = new Map(
    sql
      .exec<{ name: string; rootpage: number }>(
        "SELECT name, rootpage FROM sqlite_master WHERE rootpage > 0",
      )
      .toArray()
      .map((r) => [r.rootpage, r.name]),
  );
  // EXPLAIN compiles without running: its OpenWrite instructions name each root page.
  const args = Array.from({ length: paramCount(query) }, () => null);
  return sql
    .exec<{ opcode: string; p2: number }>(`EXPLAIN ${query}`, ...args)
    .toArray()
    .filter((op) => op.opcode === "OpenWrite")
    .map((op) => roots.get(op.p2) ?? `page ${op.p2}`);
}
