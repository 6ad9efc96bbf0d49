import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { sqlLimit } from "../../src/storage/sql-limit";

describe("sqlLimit: LIMIT and OFFSET as literals (bound, they made SQLite prepare every run again)", () => {
  it("writes row counts as integers, -1 as no limit, and refuses anything else", () => {
    expect(sqlLimit(0)).toBe("0");
    expect(sqlLimit(64)).toBe("64");
    expect(sqlLimit(-1)).toBe("-1");
    for (const bad of [1.5, -2, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) {
      expect(() => sqlLimit(bad)).toThrow(RangeError);
    }
  });

  it("a configured limit past 2^53 still means every row to SQLite, as a LIMIT and as an OFFSET", async () => {
    // resolveLimits takes any positive integer; String(1e300) is "1e+300", which SQLite
    // reads as a REAL and refuses; and an OFFSET of -1 would skip nothing.
    expect(sqlLimit(1e300)).toBe(String(Number.MAX_SAFE_INTEGER));
    const ns = env.EDGELINK_CONTEXT;
    const stub = ns.get(ns.idFromName(`sql-limit-${crypto.randomUUID()}`));
    const counts = await runInDurableObject(stub, (_instance, state) => {
      const sql = state.storage.sql;
      sql.exec("CREATE TABLE t (n INTEGER)");
      for (let n = 0; n < 5; n++) sql.exec("INSERT INTO t (n) VALUES (?)", n);
      const rows = (query: string) => sql.exec(query).toArray().length;
      return {
        limit: rows(`SELECT n FROM t ORDER BY n LIMIT ${sqlLimit(1e300)}`),
        offset: rows(`SELECT n FROM t ORDER BY n LIMIT ${sqlLimit(-1)} OFFSET ${sqlLimit(1e300)}`),
        some: rows(`SELECT n FROM t ORDER BY n LIMIT ${sqlLimit(2)} OFFSET ${sqlLimit(1)}`),
      };
    });
    expect(counts).toEqual({ limit: 5, offset: 0, some: 2 });
  });
});
