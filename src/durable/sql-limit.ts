/**
 * A row count for a LIMIT or OFFSET, written into the SQL text instead of bound. SQLite
 * plans a query with the value of a bound LIMIT, so binding one expires the statement and
 * every run prepares it again (seen under gdb: each run of `... ORDER BY seq DESC LIMIT ?`
 * went through sqlite3Reprepare, about as costly as a first prepare); a literal is
 * prepared once per value and stays cached. Only integers get in (-1: no limit).
 */
export function sqlLimit(n: number): string {
  if (!Number.isSafeInteger(n) || n < -1) throw new RangeError(`${n} is not a row count`);
  return String(n);
}
