/**
 * An object's SQL whose statements are recorded in `statements`, in order, as run: for tests
 * that count what a reader runs (the rest of `SqlStorage` passes through).
 */
export function countingSql(sql: SqlStorage): { sql: SqlStorage; statements: string[] } {
  const statements: string[] = [];
  const counting = new Proxy(sql, {
    get(target, name) {
      if (name === "exec") {
        return (query: string, ...bindings: SqlStorageValue[]) => {
          statements.push(query);
          return target.exec(query, ...bindings);
        };
      }
      const value = Reflect.get(target, name);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { sql: counting, statements };
}
