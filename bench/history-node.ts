/**
 * The Node side of the history benchmark. bench/history.mjs bundles this file with
 * esbuild and runs it in child processes, one mode each, so every measurement starts
 * from a fresh heap; the result is one JSON line on stdout.
 *
 *   cpu PLAN R  history-work.ts's runPlan(PLAN, R): Edgelink's truncate and compaction and
 *               the naive truncate, the same code the Durable Object runs in workerd
 *   heap N      (needs --expose-gc) the live heap of loading an N-item history the way a
 *               task run does (src/conversation/runs/task-run.ts): HistoryStore.read parses each
 *               SQLite row as the cursor yields it (so only one raw row is alive at a
 *               time) -> Conversation.fromStored (the store's own rows, not re-validated),
 *               with two full collections before each reading
 *   cap N       the same load under a hard heap limit (run with --max-heap-size); V8
 *               aborts the process if the load ever needs more
 */
import { Conversation } from "../src/history/conversation";
import type { Item } from "../src/history/items";
import { makeItems } from "./history-items";
import { type PlanEntry, runPlan } from "./history-work";

interface SqlRow {
  id: string;
  seq: number;
  task_id: string | null;
  type: string;
  body: string | null;
  chunks: number;
}

interface ReadRow {
  seq: number;
  taskId: string | null;
  item: Item;
}

const MB = 1024 * 1024;

/**
 * What SQLite hands HistoryStore.read for n rows: one object per row, whose strings are
 * decoded from UTF-8 like workerd's (a string straight from JSON.stringify can carry
 * spare capacity and would overstate the rows' size).
 */
function* sqlRows(n: number): Generator<SqlRow> {
  const encoder = new TextEncoder();
  const decoder = new TextDecoder();
  const copy = (text: string) => decoder.decode(encoder.encode(text));
  let i = 0;
  // Generated 5,000 at a time, so the generator's own garbage stays small.
  for (let offset = 0; offset < n; offset += 5000) {
    const batch = makeItems(Math.min(5000, n - offset), {
      seed: offset + 1,
      offset,
      system: offset === 0,
    });
    for (const item of batch) {
      yield {
        id: copy(item.id),
        seq: i + 1,
        task_id: copy(`task-${Math.floor(i / 10)}`),
        type: copy(item.type),
        body: copy(JSON.stringify(item)),
        chunks: 0,
      };
      i += 1;
    }
  }
}

/** HistoryStore.read: each row parsed as the cursor yields it. */
function readRows(rows: Iterable<SqlRow>): ReadRow[] {
  const out: ReadRow[] = [];
  for (const row of rows) {
    out.push({ seq: row.seq, taskId: row.task_id, item: JSON.parse(row.body as string) as Item });
  }
  return out;
}

/** task-run.ts: `Conversation.fromStored(history.all().map((row) => row.item))`. */
const toConversation = (rows: ReadRow[]) => Conversation.fromStored(rows.map((r) => r.item));

function heap(n: number) {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error("heap mode needs node --expose-gc");
  const used = () => {
    gc();
    gc();
    return process.memoryUsage().heapUsed;
  };
  let highWater = 0;
  const sample = () => {
    highWater = Math.max(highWater, process.memoryUsage().heapUsed);
  };
  const base = used();
  let bodyChars = 0;
  for (const row of sqlRows(n)) bodyChars += (row.body as string).length;

  // HistoryStore.read: rows parsed one by one off the cursor.
  let t = performance.now();
  let parsed: ReadRow[] | null = readRows(sqlRows(n));
  const parseMs = performance.now() - t;
  sample();
  const rowsAndParsed = used() - base;

  // Conversation.fromStored: the parsed items themselves, no validated copies.
  t = performance.now();
  const conversation = toConversation(parsed);
  const validateMs = performance.now() - t;
  sample();
  const parsedAndConversation = used() - base;
  parsed = null;
  const conversationOnly = used() - base;
  return {
    n,
    items: conversation.length,
    bodyMB: bodyChars / MB,
    rowsAndParsedMB: rowsAndParsed / MB,
    parsedAndConversationMB: parsedAndConversation / MB,
    conversationMB: conversationOnly / MB,
    peakLiveMB: Math.max(rowsAndParsed, parsedAndConversation) / MB,
    highWaterMB: (highWater - base) / MB,
    parseMs,
    validateMs,
  };
}

function cap(n: number) {
  const conversation = toConversation(readRows(sqlRows(n)));
  return { n, items: conversation.length };
}

const [mode, arg, rounds] = process.argv.slice(2);
let result: unknown;
if (mode === "cpu") result = runPlan(JSON.parse(arg as string) as PlanEntry[], Number(rounds ?? 1));
else if (mode === "heap") result = heap(Number(arg));
else if (mode === "cap") result = cap(Number(arg));
else throw new Error(`unknown mode ${mode}`);
process.stdout.write(`${JSON.stringify(result)}\n`);
