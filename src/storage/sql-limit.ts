/**
 * A row count for a LIMIT or OFFSET, written into the SQL text instead of bound. SQLite
 * plans a query with the value of a bound LIMIT, so binding one expires the statement and
 * every run prepares it again (seen under gdb: each run of `... ORDER BY seq DESC LIMIT ?`
 * went through sqlite3Reprepare, about as costly as a first prepare); a literal is
 * prepared once per value and stays cached. Only integers get in (-1: no limit); one past
 * 2^53 (a configured limit meaning "no limit") is written as 2^53 - 1, which SQLite reads
 * as the same "all rows" and `String` would have written in exponent form.
 */
export function sqlLimit(n: number): string {
  if (!Number.isInteger(n) || n < -1) throw new RangeError(`${n} is not a row count`);
  return String(Math.min(n, Number.MAX_SAFE_INTEGER));
}
