/**
 * What SQLite would do with a statement, read without running it: the B-trees it opens for
 * writing (EXPLAIN's OpenWrite instructions, triggers' programs included) and its query plan.
 * Storage tests assert these so that a write or a read does not grow unnoticed.
 */
import { runInDurableObject } from "cloudflare:test";

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

/**
 * Runs `fn` while logging every statement an object runs (whitespace collapsed) and each
 * `transactionSync` (as "<transaction>"), then puts the object's storage back. White-box:
 * the counts a storage test asserts, so a message's statements do not grow unnoticed.
 */
export async function loggingStatements<T>(
  stub: DurableObjectStub,
  fn: () => Promise<T>,
): Promise<{ result: T; log: string[] }> {
  const log: string[] = [];
  await runInDurableObject(stub, (_i, state) => {
    const sql = state.storage.sql;
    const exec = sql.exec.bind(sql);
    Object.defineProperty(sql, "exec", {
      configurable: true,
      value: (query: string, ...args: SqlStorageValue[]) => {
        log.push(query.replace(/\s+/g, " ").trim());
        return exec(query, ...args);
      },
    });
    const transactionSync = state.storage.transactionSync.bind(state.storage);
    Object.defineProperty(state.storage, "transactionSync", {
      configurable: true,
      value: <R>(f: () => R): R => {
        log.push("<transaction>");
        return transactionSync(f);
      },
    });
  });
  try {
    return { result: await fn(), log };
  } finally {
    await runInDurableObject(stub, (_i, state) => {
      delete (state.storage.sql as unknown as Record<string, unknown>).exec;
      delete (state.storage as unknown as Record<string, unknown>).transactionSync;
    });
  }
}
