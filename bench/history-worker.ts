/**
 * The history benchmark's worker (bench/history.mjs serves it on workerd): one SQLite
 * Durable Object holding a conversation in Edgelink's HistoryStore
 * (src/conversation/history/history-store.ts) over `ctx.storage`, with the conversation's real schema
 * (src/storage/schema.ts). Its RPC methods fill the history, append
 * one item and report SQLite's rowsWritten, read a page, and run the CPU part of the
 * benchmark (history-work.ts) inside workerd. The worker's fetch handler maps
 * `GET /<method>?name=…&…` to those methods and answers JSON; loopback only.
 */
import { DurableObject } from "cloudflare:workers";
import { HistoryStore } from "../src/conversation/history/history-store";
import { windowSource } from "../src/conversation/history/window-source";
import { Conversation } from "../src/history/conversation";
import type { Item } from "../src/history/items";
import { readWindow } from "../src/history/window-reader";
import { CONTEXT_SCHEMA } from "../src/storage/schema";
import { ensureSchema, schemaVersion } from "../src/storage/schema-version";
import { makeItems } from "./history-items";
import { clearItems, type PlanEntry, runPlan } from "./history-work";

interface Env {
  HISTORY_BENCH: DurableObjectNamespace<HistoryBench>;
}

/** Creates the conversation's schema (the tables HistoryStore uses among them); says which. */
function createTables(storage: DurableObjectStorage): string {
  ensureSchema(storage, CONTEXT_SCHEMA);
  return `src/storage/schema.ts CONTEXT_SCHEMA (version ${schemaVersion(CONTEXT_SCHEMA)})`;
}

/** Task ids the appended items belong to: a new task every 10 items. */
const taskOf = (seq: number) => `task-${Math.floor(seq / 10)}`;

export class HistoryBench extends DurableObject<Env> {
  readonly schemaSource: string;
  readonly store: HistoryStore<Item>;
  /** The next items to append, generated 5,000 at a time: item `count` is the count-th. */
  #batch: Item[] | null = null;
  #batchStart = 0;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.schemaSource = createTables(ctx.storage);
    this.store = new HistoryStore<Item>(ctx.storage);
  }

  #next(count: number): Item {
    const batch = this.#batch;
    if (!batch || count < this.#batchStart || count >= this.#batchStart + batch.length) {
      this.#batch = makeItems(5000, { seed: count + 1, offset: count, system: count === 0 });
      this.#batchStart = count;
    }
    return (this.#batch as Item[])[count - this.#batchStart] as Item;
  }

  info() {
    return { schema: this.schemaSource, count: this.store.count() };
  }

  /** Appends items until the history holds `target`, 5,000 per transaction. */
  fill(target: number) {
    const start = performance.now();
    let count = this.store.count();
    while (count < target) {
      const end = Math.min(target, count + 5000);
      this.ctx.storage.transactionSync(() => {
        for (; count < end; count++) this.store.append(this.#next(count), taskOf(count));
      });
    }
    return { count, ms: performance.now() - start };
  }

  /** Appends the next item the way Edgelink does (no surrounding transaction). */
  appendOne() {
    const count = this.store.count();
    const item = this.#next(count);
    const rowsWritten = this.store.append(item, taskOf(count));
    return { lengthBefore: count, type: item.type, rowsWritten };
  }

  /** Drops every generated item, so the page measurement starts without them. */
  forget() {
    this.#batch = null;
    clearItems();
    return { ok: true };
  }

  /** Reads one page of `limit` rows from the start (rows are parsed, then dropped). */
  page(limit: number) {
    const start = performance.now();
    const page = this.store.page({ limit });
    const ms = performance.now() - start;
    let chars = 0;
    for (const row of page.rows) chars += JSON.stringify(row.item).length;
    return { rows: page.rows.length, total: page.total, next: page.next, ms, jsonChars: chars };
  }

  /**
   * Where page()'s time goes, with page()'s own statements (history-store.ts): the
   * cursor's toArray, JSON.parse of each body, and the COUNT(*) it adds for `total`.
   */
  pageParts(limit: number) {
    const sql = this.ctx.storage.sql;
    const t0 = performance.now();
    const rows = sql
      .exec<{ body: string | null }>(
        "SELECT * FROM history_items WHERE seq > ? ORDER BY seq LIMIT ?",
        Number.NEGATIVE_INFINITY,
        limit + 1,
      )
      .toArray();
    const t1 = performance.now();
    let parsed = 0;
    for (const row of rows) if (JSON.parse(row.body ?? "null")) parsed++;
    const t2 = performance.now();
    const total = sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM history_items").one().n;
    const t3 = performance.now();
    return { rows: rows.length, parsed, total, sqlMs: t1 - t0, parseMs: t2 - t1, countMs: t3 - t2 };
  }

  /** See windowTurns. */
  window(budget: number, batch: number, reps: number) {
    return windowTurns(this.store, budget, batch, reps);
  }

  /** The CPU benchmark in workerd: history-work.ts's runPlan. */
  cpu(plan: PlanEntry[], rounds: number) {
    return runPlan(plan, rounds);
  }

  /**
   * What a task run does to give its handler the conversation (src/conversation/runs/task-run.ts):
   * every row read and parsed, then validated into a Conversation; then dropped.
   */
  load() {
    const start = performance.now();
    const conversation = Conversation.fromStored(this.store.all().map((row) => row.item));
    return { items: conversation.length, ms: performance.now() - start };
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

/**
 * A model turn's window over this object's history (bench/window.mjs): `reps` samples of
 * `batch` readWindow calls (truncate only, `budget` tokens), median ms per call.
 */
async function windowTurns(store: HistoryStore<Item>, budget: number, batch: number, reps: number) {
  const source = windowSource(store);
  const times: number[] = [];
  let last = { rowsRead: 0, items: 0, tokens: 0 };
  for (let r = 0; r < reps; r++) {
    const start = performance.now();
    for (let i = 0; i < batch; i++) {
      const window = await readWindow(source, { maxTokens: budget });
      last = { rowsRead: window.rowsRead, items: window.items.length, tokens: window.tokens };
    }
    times.push((performance.now() - start) / batch);
  }
  return { ms: median(times), ...last };
}

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const url = new URL(request.url);
    const q = (key: string) => Number(url.searchParams.get(key) ?? 0);
    const stub = env.HISTORY_BENCH.get(
      env.HISTORY_BENCH.idFromName(url.searchParams.get("name") ?? "history"),
    );
    try {
      switch (url.pathname) {
        case "/info":
          return Response.json(await stub.info());
        case "/fill":
          return Response.json(await stub.fill(q("target")));
        case "/append":
          return Response.json(await stub.appendOne());
        case "/forget":
          return Response.json(await stub.forget());
        case "/page":
          return Response.json(await stub.page(q("limit")));
        case "/page-parts":
          return Response.json(await stub.pageParts(q("limit")));
        case "/window":
          return Response.json(await stub.window(q("budget"), q("batch"), q("reps")));
        case "/load":
          return Response.json(await stub.load());
        case "/cpu":
          return Response.json(
            await stub.cpu(JSON.parse(url.searchParams.get("plan") ?? "[]"), q("rounds")),
          );
        default:
          return new Response("not found", { status: 404 });
      }
    } catch (error) {
      return Response.json({ error: String((error as Error).stack ?? error) }, { status: 500 });
    }
  },
};
