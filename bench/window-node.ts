/**
 * The Node side of the turn-window benchmark (bench/window.mjs bundles it and runs it, one
 * size per child process, under Node 22 with --expose-gc). Edgelink's own HistoryStore,
 * schema and window code run over `node:sqlite` (an in-memory database behind
 * a small adapter with the Durable Object's `sql.exec` / `transactionSync` surface), so
 * the JS heap a turn needs can be read with `process.memoryUsage()`, which workerd does
 * not offer. One JSON line on stdout.
 *
 *   node --expose-gc --max-semi-space-size=64 window-node.mjs N TURNS BUDGET
 *
 * For a conversation of N items (bench/history-items.ts): the median time and the heap of
 *   window   one turn's read: readWindow over the store, truncate only (BUDGET tokens)
 *   summary  one turn as it happens with a summarizer: append the user's message, read the
 *            window (summarizing into the running summary when over budget; the summarizer
 *            answers at once), append the answer
 *   full     what a turn did before: every row read and parsed, Conversation.fromStored,
 *            providerItems
 * Heap: `allocated` is heapUsed after one turn minus before it (two full collections
 * first), with a 64 MB young generation so that no collection runs inside a window turn:
 * what the turn puts on the heap, garbage included.
 */
import { DatabaseSync, type SQLInputValue, type StatementSync } from "node:sqlite";
import { HistoryStore } from "../src/conversation/history/history-store";
import { windowSource } from "../src/conversation/history/window-source";
import { Conversation } from "../src/history/conversation";
import type { Item } from "../src/history/items";
import { readWindow } from "../src/history/window-reader";
import { CONTEXT_SCHEMA } from "../src/storage/schema";
import { ensureSchema } from "../src/storage/schema-version";
import { makeItems } from "./history-items";

type Row = Record<string, SqlStorageValue>;

/** A cursor over one statement: iterated lazily, like workerd's, or read all at once. */
function cursor(statement: StatementSync, args: SQLInputValue[], written: number) {
  let read = 0;
  return {
    rowsWritten: written,
    get rowsRead() {
      return read;
    },
    *[Symbol.iterator]() {
      for (const row of statement.iterate(...args)) {
        read++;
        yield row as Row;
      }
    },
    toArray() {
      const rows = statement.all(...args) as Row[];
      read += rows.length;
      return rows;
    },
    one() {
      const row = statement.get(...args) as Row | undefined;
      if (!row) throw new Error("Expected exactly one row");
      read++;
      return row;
    },
  };
}

/** The `DurableObjectStorage` surface HistoryStore and the schema use, over node:sqlite. */
function storageOver(db: DatabaseSync): DurableObjectStorage {
  const statements = new Map<string, StatementSync>();
  const sql = {
    exec(query: string, ...args: SqlStorageValue[]) {
      let statement = statements.get(query);
      if (!statement) {
        statement = db.prepare(query);
        statements.set(query, statement);
      }
      const values = args as SQLInputValue[];
      if (/^\s*SELECT/i.test(query)) return cursor(statement, values, 0);
      return cursor(statement, [], Number(statement.run(...values).changes));
    },
  };
  let depth = 0;
  const transactionSync = <T>(fn: () => T): T => {
    const name = `sp${depth++}`;
    db.exec(`SAVEPOINT ${name}`);
    try {
      const result = fn();
      db.exec(`RELEASE ${name}`);
      return result;
    } catch (error) {
      db.exec(`ROLLBACK TO ${name}`);
      db.exec(`RELEASE ${name}`);
      throw error;
    } finally {
      depth--;
    }
  };
  return { sql, transactionSync } as unknown as DurableObjectStorage;
}

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error("run with --expose-gc");
const heap = () => process.memoryUsage().heapUsed;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

async function measure<T>(turns: number, run: () => Promise<T> | T) {
  for (let i = 0; i < 3; i++) await run(); // warm-up
  const times: number[] = [];
  const allocated: number[] = [];
  for (let i = 0; i < turns; i++) {
    gc?.();
    gc?.();
    const before = heap();
    const start = performance.now();
    await run();
    times.push(performance.now() - start);
    allocated.push(heap() - before);
  }
  return { ms: median(times), allocatedMB: median(allocated) / 2 ** 20 };
}

async function main() {
  const [n, turns, budget] = process.argv.slice(2).map(Number) as [number, number, number];
  const db = new DatabaseSync(":memory:");
  const storage = storageOver(db);
  ensureSchema(storage, CONTEXT_SCHEMA);
  const store = new HistoryStore<Item>(storage);
  for (let offset = 0; offset < n; offset += 5000) {
    const batch = makeItems(Math.min(5000, n - offset), {
      seed: offset + 1,
      offset,
      system: offset === 0,
    });
    storage.transactionSync(() => {
      for (const item of batch) store.append(item);
    });
  }
  const source = windowSource(store);
  let rowsRead = 0;
  const window = await measure(turns, async () => {
    const result = await readWindow(source, { maxTokens: budget });
    rowsRead = result.rowsRead;
    return result;
  });
  const full = await measure(Math.min(turns, n >= 100_000 ? 5 : turns), () =>
    Conversation.fromStored(store.all().map((row) => row.item)).providerItems(),
  );

  // Turns as they happen: a question and an answer each, the window read in between.
  let next = n;
  let summaries = 0;
  const extra = makeItems(8 * (turns + 3), { seed: 99, offset: n, system: false });
  const messages = extra.filter((item) => item.type === "message");
  const summarizer = async () => `summary ${++summaries}`;
  const summary = await measure(turns, async () => {
    store.append(messages[(next++ - n) % messages.length] as Item);
    const result = await readWindow(source, { maxTokens: budget, summarizer });
    store.append(messages[(next++ - n) % messages.length] as Item);
    return result;
  });
  console.log(
    JSON.stringify({ n, budget, window, full, summary, rowsRead, summaries, count: store.count() }),
  );
}

await main();
