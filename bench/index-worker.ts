/**
 * The tenant index's ceiling (bench/index.mjs): a Worker that sends batches of index rows
 * straight to Edgelink's `IndexObject` (src/index/index-object.ts), as conversation
 * objects do when their outbox flushes. `POST /upsert?rows=N&tx=0|1`: one RPC carrying N
 * new rows (unique task ids, each then moved to a later state in the next call's rows is
 * not needed: a row's cost is its upsert), answered 200 with the count the index holds.
 * `tx=1` uses `TxIndex`, the same statements inside one `transactionSync` per call, to
 * tell the implicit commit from an explicit one.
 *
 * The sharded index (`limits.indexShards`): `POST /sharded?rows=N&shards=S&tenant=T`
 * sends N new rows of one conversation, picked at random among 4096, to its shard of S, as
 * its outbox would; `GET /count?shards=S&tenant=T` sums the rows of every shard;
 * `GET /list?shards=S&tenant=T&pageSize=P&pages=K` reads K pages of ListTasks' index
 * listing (every shard asked in parallel, merged), answering the ids listed.
 */

import { IndexObject, type IndexRow } from "../src/index/index-object";
import { indexShardFor, listIndex } from "../src/index/index-shards";
import { indexObjectName } from "../src/storage/ids";

interface Env {
  EDGELINK_INDEX: DurableObjectNamespace;
  TX_INDEX: DurableObjectNamespace;
}

export class EdgelinkIndex extends IndexObject<Env> {
  count(): number {
    return this.ctx.storage.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM task_index").one().n;
  }
}

/** The same upserts, in one explicit transaction per call. */
export class TxIndex extends EdgelinkIndex {
  override async upsert(rows: IndexRow[]): Promise<void> {
    this.ctx.storage.transactionSync(() => {
      void super.upsert(rows);
    });
  }
}

type Rpc = { upsert(rows: IndexRow[]): Promise<void>; count(): Promise<number> };

let seq = 0;

function newRows(n: number, contextId: string): IndexRow[] {
  const now = new Date().toISOString();
  const rows: IndexRow[] = [];
  for (let i = 0; i < n; i++) {
    seq += 1;
    rows.push({
      taskId: `t-${seq}-${crypto.randomUUID()}`,
      contextId,
      state: "completed",
      createdAt: now,
      updatedAt: now,
    });
  }
  return rows;
}

async function sharded(url: URL, env: Env): Promise<Response> {
  const shards = Number(url.searchParams.get("shards") ?? "1");
  const scope = { tenant: url.searchParams.get("tenant") ?? "bench", owner: "", shards };
  const ns = env.EDGELINK_INDEX;
  if (url.pathname === "/sharded") {
    const contextId = `c-${Math.floor(Math.random() * 4096)}`;
    const rows = newRows(Number(url.searchParams.get("rows") ?? "1"), contextId);
    await (indexShardFor(ns, scope, contextId) as unknown as Rpc).upsert(rows);
    return new Response("ok");
  }
  if (url.pathname === "/count") {
    let count = 0;
    for (let shard = 0; shard < shards; shard++) {
      const name = indexObjectName(scope.tenant, "", shard, shards);
      count += await (ns.get(ns.idFromName(name)) as unknown as Rpc).count();
    }
    return Response.json({ count });
  }
  const pageSize = Number(url.searchParams.get("pageSize") ?? "50");
  let pageToken: string | undefined;
  let listed = 0;
  for (let k = Number(url.searchParams.get("pages") ?? "1"); k > 0; k--) {
    const page = await listIndex(ns, scope, { pageSize, pageToken });
    listed += page.rows.length;
    pageToken = page.nextPageToken || undefined;
    if (!pageToken) break;
  }
  return Response.json({ listed });
}

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const url = new URL(request.url);
    if (url.pathname !== "/upsert") return sharded(url, env);
    const n = Number(url.searchParams.get("rows") ?? "1");
    const ns = url.searchParams.get("tx") === "1" ? env.TX_INDEX : env.EDGELINK_INDEX;
    const shard = url.searchParams.get("index") ?? "index/bench";
    const index = ns.get(ns.idFromName(shard)) as unknown as Rpc;
    await index.upsert(newRows(n, `c-${seq % 64}`));
    if (url.searchParams.get("count") === "1") return Response.json({ count: await index.count() });
    return new Response("ok");
  },
};
