/**
 * The tenant index's ceiling (bench/index.mjs): a Worker that sends batches of index rows
 * straight to Edgelink's `IndexObject` (src/durable/index-object.ts), as conversation
 * objects do when their outbox flushes. `POST /upsert?rows=N&tx=0|1`: one RPC carrying N
 * new rows (unique task ids, each then moved to a later state in the next call's rows is
 * not needed: a row's cost is its upsert), answered 200 with the count the index holds.
 * `tx=1` uses `TxIndex`, the same statements inside one `transactionSync` per call, to
 * tell the implicit commit from an explicit one.
 */
import { IndexObject, type IndexRow } from "../src/durable/index-object";

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

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const url = new URL(request.url);
    const n = Number(url.searchParams.get("rows") ?? "1");
    const ns = url.searchParams.get("tx") === "1" ? env.TX_INDEX : env.EDGELINK_INDEX;
    const shard = url.searchParams.get("index") ?? "index/bench";
    const index = ns.get(ns.idFromName(shard)) as unknown as Rpc;
    const now = new Date().toISOString();
    const rows: IndexRow[] = [];
    for (let i = 0; i < n; i++) {
      seq += 1;
      rows.push({
        taskId: `t-${seq}-${crypto.randomUUID()}`,
        contextId: `c-${seq % 64}`,
        state: "completed",
        createdAt: now,
        updatedAt: now,
      });
    }
    await index.upsert(rows);
    if (url.searchParams.get("count") === "1") return Response.json({ count: await index.count() });
    return new Response("ok");
  },
};
