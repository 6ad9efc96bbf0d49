/**
 * Statement counter for the benchmark (not timed). Serves the Edgelink echo agent at
 * POST /edgelink and the floor at POST /floor from one workerd, with every Durable
 * Object's `sql.exec` and `transactionSync` logged; GET /log?ns=BINDING&name=NAME
 * returns (and clears) one object's log (`indexOf=CONTEXT` instead of `name`: the index
 * shard of that conversation, at the default `limits.indexShards`). bench/run.mjs uses it to show how many
 * statements one SendMessage costs (a diagnostic; the floor is measured, not mirrored).
 */
import { DEFAULT_LIMITS } from "../src/agent/limits";
import { indexObjectName, indexShardOf } from "../src/storage/ids";
import echo from "./echo-worker";
import floor, { FloorContext as FloorContextBase } from "./floor-worker";

type Log = string[];
// biome-ignore lint/suspicious/noExplicitAny: a mixin over unrelated Durable Object classes
type DurableClass = new (ctx: DurableObjectState, env: any) => object;

/** Wraps the storage of one object so each statement and transaction is logged. */
function instrument(storage: DurableObjectStorage, log: Log): void {
  const sql = storage.sql;
  const again = storage.sql;
  if (sql !== again) throw new Error("storage.sql is not one stable object; cannot log it");
  const exec = sql.exec.bind(sql);
  Object.defineProperty(sql, "exec", {
    value: (query: string, ...args: SqlStorageValue[]) => {
      log.push(query.replace(/\s+/g, " ").trim());
      return exec(query, ...args);
    },
  });
  const transactionSync = storage.transactionSync.bind(storage);
  Object.defineProperty(storage, "transactionSync", {
    value: <T>(fn: () => T): T => {
      log.push("<transactionSync>");
      return transactionSync(fn);
    },
  });
}

function counted<C extends DurableClass>(Base: C) {
  return class extends Base {
    sqlLog: Log;
    // biome-ignore lint/suspicious/noExplicitAny: mixin constructor
    constructor(...args: any[]) {
      const log: Log = [];
      const ctx = args[0] as DurableObjectState;
      instrument(ctx.storage, log);
      super(...(args as [DurableObjectState, unknown]));
      this.sqlLog = log;
    }
    takeSqlLog(): Log {
      return this.sqlLog.splice(0);
    }
  };
}

export const EdgelinkContext = counted(echo.EdgelinkContext as unknown as DurableClass);
export const EdgelinkIndex = counted(echo.EdgelinkIndex as unknown as DurableClass);
export const FloorContext = counted(FloorContextBase as unknown as DurableClass);

export default {
  async fetch(request: Request, env: Record<string, unknown>, ctx: ExecutionContext) {
    const url = new URL(request.url);
    if (url.pathname === "/log") {
      const ns = env[url.searchParams.get("ns") ?? ""] as DurableObjectNamespace;
      const indexOf = url.searchParams.get("indexOf");
      const shards = DEFAULT_LIMITS.indexShards;
      const name =
        indexOf === null
          ? (url.searchParams.get("name") ?? "")
          : indexObjectName("", "", indexShardOf(indexOf, shards), shards);
      const stub = ns.get(ns.idFromName(name)) as unknown as {
        takeSqlLog(): Promise<Log>;
      };
      return Response.json(await stub.takeSqlLog());
    }
    const root = new Request(new URL("/", url), request);
    if (url.pathname === "/edgelink") return echo.fetch(root, env, ctx);
    if (url.pathname === "/floor") return floor.fetch(root, env, ctx);
    return new Response("not found", { status: 404 });
  },
};
