/**
 * The long-term memory benchmark (`npm run bench`, scenario key `memory`; also
 * `node bench/memory.mjs` alone). See bench/README.md, "Long-term memory".
 *
 * Recall before a model turn: `remember` (the ranked bundle within its token budget, the
 * access counted) and its rendering, in one memory object holding 1,000, 10,000 and
 * 100,000 facts (bench/memory-worker.ts: five words each of a 500-word vocabulary;
 * queries of three such words, so every bundle fills at every size). Per size: wall time
 * and workerd's CPU (from /proc) per recall, over one call of 200 recalls.
 * The same with a memory of conversation turns instead (`BENCH_MEMORY_KINDS=turn` for
 * that alone): the relevant past turns recalled from 1,000, 10,000 and 100,000 turns.
 * Target: an index, not a scan: recall at 100k within RATIO_TARGET× of recall at 1k.
 */
import { runIfMain } from "./env.mjs";
import { processCpuSeconds } from "./load.mjs";
import { cleanupTempDirs, startWorkerd } from "./servers.mjs";

const SIZES = [1_000, 10_000, 100_000];
const BUDGET = 1000;
const QUERIES = 20;
const REPS = 10;
const RATIO_TARGET = 3;

const fmt = (n, digits = 2) => (Number.isFinite(n) ? n.toFixed(digits) : "-");
const label = (n) => `${n / 1000}k`;

/** The kinds of memory measured: facts, turns, or both (BENCH_MEMORY_KINDS). */
const KINDS = (process.env.BENCH_MEMORY_KINDS || "fact,turn")
  .split(",")
  .map((k) => k.trim())
  .filter((k) => k === "fact" || k === "turn");

async function measure(kind) {
  const server = await startWorkerd("memory-worker.ts", { MEMORY_BENCH: "MemoryBench" });
  const call = async (path, params) => {
    const response = await fetch(`${server.url}${path.slice(1)}?${new URLSearchParams(params)}`);
    const body = await response.json();
    if (!response.ok || body.error) throw new Error(`memory worker ${path}: ${body.error}`);
    return body;
  };
  try {
    const out = [];
    for (const n of SIZES) {
      const name = `memory-${kind}s`;
      const fill = await call("/fill", { name, target: n, kind });
      // Warm-up first: right after the fill, SQLite is still writing its pages back.
      await call("/recall", { name, budget: BUDGET, queries: QUERIES, reps: 2 });
      const cpu0 = processCpuSeconds(server.pid);
      const t0 = performance.now();
      const recall = await call("/recall", {
        name,
        budget: BUDGET,
        queries: QUERIES,
        reps: REPS,
      });
      // Wall time per recall over the whole batch (workerd's own clock is too coarse).
      const ms = (performance.now() - t0) / recall.calls;
      const cpuMs = ((processCpuSeconds(server.pid) - cpu0) * 1000) / recall.calls;
      out.push({ n, fillMs: fill.ms, recall, ms, cpuMs });
      process.stdout.write(".");
    }
    return out;
  } finally {
    await server.stop();
  }
}

/** Runs the memory section and prints it; returns true if the target was met. */
export async function runMemoryBench() {
  let ok = true;
  for (const kind of KINDS) ok = (await runKind(kind)) && ok;
  console.log(`\nMemory target: ${ok ? "met" : "NOT met (see FAIL above)"}`);
  return ok;
}

async function runKind(kind) {
  console.log(`\nLong-term memory recall, a memory of ${kind}s (bench/memory.mjs)`);
  process.stdout.write("  measuring");
  const started = performance.now();
  const rows = await measure(kind);
  process.stdout.write(` done in ${fmt((performance.now() - started) / 1000, 0)} s\n`);
  console.log(
    `  one memory object; ${QUERIES} queries x ${REPS}; budget ${BUDGET} estimated tokens; remember() + renderMemoryBundle()`,
  );
  const sent = kind === "turn" ? "turns sent" : "facts sent";
  const head = [`${kind}s`, "ms/recall", "CPU ms/recall", sent, "tokens", "fill s"];
  console.log(`  ${head.map((h, i) => (i ? h.padStart(14) : h.padEnd(8))).join("")}`);
  for (const r of rows) {
    const cells = [
      fmt(r.ms, 3),
      fmt(r.cpuMs, 3),
      kind === "turn" ? r.recall.turns : r.recall.facts,
      r.recall.tokens,
      fmt(r.fillMs / 1000, 1),
    ];
    console.log(`  ${label(r.n).padEnd(8)}${cells.map((c) => String(c).padStart(14)).join("")}`);
  }
  const at = (n) => rows.find((r) => r.n === n);
  let ok = true;
  for (const [name, value] of [
    ["time per recall", (r) => r.ms],
    ["workerd CPU per recall", (r) => r.cpuMs],
  ]) {
    const ratio = value(at(100_000)) / value(at(1_000));
    const pass = ratio <= RATIO_TARGET;
    ok &&= pass;
    console.log(
      `  100k/1k ${name.padEnd(24)} ${`${fmt(ratio, 2)}x`.padStart(8)}  (target <= ${RATIO_TARGET}x) ${pass ? "PASS" : "FAIL"}`,
    );
  }
  return ok;
}

await runIfMain(import.meta.url, "memory", runMemoryBench, cleanupTempDirs);
