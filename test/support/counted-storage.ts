/**
 * Storage whose statements are recorded, to count what a store reads: `proxy` goes where
 * the store takes its storage; `measure()` starts a count and returns a function giving the
 * statements run and the SQLite rows they read since.
 */
export function countedStorage(storage: DurableObjectStorage) {
  const statements: { query: string; cursor: SqlStorageCursor<Record<string, SqlStorageValue>> }[] =
    [];
  const sql = storage.sql;
  const counted = {
    exec: (query: string, ...args: SqlStorageValue[]) => {
      const cursor = sql.exec(query, ...args);
      statements.push({ query, cursor });
      return cursor;
    },
  } as SqlStorage;
  const proxy = {
    get sql() {
      return counted;
    },
    transactionSync: <T>(fn: () => T) => storage.transactionSync(fn),
  } as DurableObjectStorage;
  return {
    proxy,
    measure() {
      const from = statements.length;
      return () => {
        const run = statements.slice(from);
        return {
          queries: run.map((s) => s.query),
          rowsRead: run.reduce((sum, s) => sum + s.cursor.rowsRead, 0),
        };
      };
    },
  };
}
