/**
 * The turn-window benchmark (`npm run bench`, scenario key `window`; also
 * `node bench/window.mjs` alone). See bench/README.md, "A model turn's window".
 *
 * A model turn reads the window it sends (src/history/window-reader.ts): the running summary and
 * the newest items within its token budget, never the whole conversation. This measures
 * one turn at conversations of 10, 10,000 and 100,000 items (bench/history-items.ts):
 *   - workerd: median time of readWindow inside a SQLite Durable Object
 *     (history-worker.ts), beside the full load a turn did before (every row parsed into a
 *     Conversation);
 *   - Node 22 (node:sqlite, window-node.ts): time and JS heap per turn, truncate only and
 *     with a summarizer (append, window, append: the running summary at work), and the
 *     full load's.
 * Target: flat, i.e. a turn at 100k items within RATIO_TARGET× of one at 10k (both longer
 * than the window); 100k/10 is printed too (a 10-item conversation's window is smaller).
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { runIfMain } from "./env.mjs";
import { cleanupTempDirs, startWorkerd } from "./servers.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const SIZES = [10, 10_000, 100_000];
/** The window's budget in estimated tokens (F7): a few dozen items of this conversation. */
const BUDGET = 4000;
const TURNS = 15;
/** time and heap of a turn at 100k items against 10k: flat within this machine's noise. */
const RATIO_TARGET = 1.5;
const CHILD_TIMEOUT_MS = 180_000;

let tempDir = null;
/** Removes this module's temp dir; bench/run.mjs calls it on exit and on Ctrl-C. */
export function cleanupWindowTemp() {
  if (tempDir) rmSync(tempDir, { recursive: true, force: true });
  tempDir = null;
}

/** Node 22 or later (node:sqlite): this process's, else the `node` devDependency's. */
function node22() {
  if (Number(process.versions.node.split(".")[0]) >= 22) return process.execPath;
  const local = join(here, "..", "node_modules", "node", "bin", "node");
  if (existsSync(local)) return local;
  throw new Error("the window benchmark needs Node 22 (node:sqlite); run it with npm run bench");
}

function runChild(script, args) {
  return new Promise((resolve, reject) => {
    const child = spawn(
      node22(),
      ["--expose-gc", "--max-semi-space-size=64", "--no-warnings", script, ...args],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => {
      stdout += chunk;
    });
    child.stderr.on("data", (chunk) => {
      if (stderr.length < 8192) stderr += chunk;
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), CHILD_TIMEOUT_MS);
    child.once("error", reject);
    child.once("exit", (code) => {
      clearTimeout(timer);
      try {
        resolve(JSON.parse(stdout.trim().split("\n").at(-1) ?? ""));
      } catch {
        reject(new Error(`window node child failed (exit ${code}): ${stderr}`));
      }
    });
  });
}

async function measureWorkerd() {
  const server = await startWorkerd("history-worker.ts", { HISTORY_BENCH: "HistoryBench" });
  const call = async (path, params = {}) => {
    const response = await fetch(`${server.url}${path.slice(1)}?${new URLSearchParams(params)}`);
    const body = await response.json();
    if (!response.ok || body.error) throw new Error(`history worker ${path}: ${body.error}`);
    return body;
  };
  try {
    const out = [];
    for (const n of SIZES) {
      await call("/fill", { name: "window", target: n });
      // Warm-up first: right after the fill, SQLite is still writing its pages back.
      await call("/window", { name: "window", budget: BUDGET, batch: 50, reps: 3 });
      const window = await call("/window", { name: "window", budget: BUDGET, batch: 50, reps: 9 });
      const loads = [];
      for (let i = 0; i < (n >= 100_000 ? 3 : 7); i++)
        loads.push((await call("/load", { name: "window" })).ms);
      out.push({ n, window, fullMs: loads.sort((a, b) => a - b)[Math.floor(loads.length / 2)] });
      process.stdout.write(".");
    }
    return out;
  } finally {
    await server.stop();
  }
}

async function measureNode() {
  tempDir = mkdtempSync(join(process.env.BENCH_TMPDIR || tmpdir(), "edgelink-bench-window-"));
  const script = join(tempDir, "window-node.mjs");
  await build({
    entryPoints: [join(here, "window-node.ts")],
    outfile: script,
    bundle: true,
    format: "esm",
    platform: "node",
    target: "node22",
    external: ["node:sqlite"],
    logLevel: "error",
  });
  const out = [];
  for (const n of SIZES) {
    out.push(await runChild(script, [String(n), String(TURNS), String(BUDGET)]));
    process.stdout.write(".");
  }
  return out;
}

const fmt = (n, digits = 2) => (Number.isFinite(n) ? n.toFixed(digits) : "-");
const label = (n) => (n >= 1000 ? `${n / 1000}k` : String(n));

/** Runs the window section and prints it; returns true if the target was met. */
export async function runWindowBench() {
  console.log("\nA model turn's window (bench/window.mjs)");
  process.stdout.write("  measuring");
  const started = performance.now();
  const workerd = await measureWorkerd();
  const node = await measureNode();
  process.stdout.write(` done in ${fmt((performance.now() - started) / 1000, 0)} s\n`);
  console.log(
    `  budget ${BUDGET} estimated tokens; items as in the history section (bench/history-items.ts)`,
  );
  const head = ["items", "ms/turn", "rows read", "items sent", "full load ms"];
  console.log("\n  workerd (SQLite Durable Object): readWindow, truncate only");
  console.log(`  ${head.map((h, i) => (i ? h.padStart(14) : h.padEnd(8))).join("")}`);
  for (const { n, window, fullMs } of workerd) {
    const cells = [fmt(window.ms, 3), window.rowsRead, window.items, fmt(fullMs, 1)];
    console.log(`  ${label(n).padEnd(8)}${cells.map((c) => String(c).padStart(14)).join("")}`);
  }
  console.log(
    "\n  Node 22 (node:sqlite, same store and window code): ms and MB of JS heap per turn",
  );
  const nodeHead = [
    "items",
    "window ms",
    "alloc MB",
    "w/ summary ms",
    "alloc MB",
    "full load ms",
    "alloc MB",
  ];
  console.log(`  ${nodeHead.map((h, i) => (i ? h.padStart(14) : h.padEnd(8))).join("")}`);
  for (const r of node) {
    const cells = [
      fmt(r.window.ms, 3),
      fmt(r.window.allocatedMB),
      fmt(r.summary.ms, 3),
      fmt(r.summary.allocatedMB),
      fmt(r.full.ms, 1),
      fmt(r.full.allocatedMB, 1),
    ];
    console.log(`  ${label(r.n).padEnd(8)}${cells.map((c) => String(c).padStart(14)).join("")}`);
  }
  const at = (xs, n) => xs.find((r) => r.n === n);
  const series = [
    ["workerd window time", (n) => at(workerd, n).window.ms],
    ["Node window time", (n) => at(node, n).window.ms],
    ["Node window heap (alloc)", (n) => at(node, n).window.allocatedMB],
    ["Node turn with summary, time", (n) => at(node, n).summary.ms],
    ["Node turn with summary, heap", (n) => at(node, n).summary.allocatedMB],
  ];
  const sent = (n) => at(workerd, n).window.items;
  console.log(
    `\n  ratios (flat is 1). 100k/10: the 10-item conversation sends its ${sent(10)} items, the longer ones a full window (${sent(10_000)} and ${sent(100_000)} items), so a turn costs what its window holds; 100k/10k: both longer than the window, judged (target <= ${RATIO_TARGET}; the full load grew ${fmt(at(workerd, 100_000).fullMs / at(workerd, 10_000).fullMs, 1)}x there)`,
  );
  console.log(`    ${"".padEnd(32)} ${"100k/10".padStart(8)} ${"100k/10k".padStart(9)}`);
  let ok = true;
  for (const [name, value] of series) {
    const long = value(100_000) / value(10);
    const flat = value(100_000) / value(10_000);
    const pass = flat <= RATIO_TARGET;
    ok &&= pass;
    console.log(
      `    ${name.padEnd(32)} ${`${fmt(long, 2)}x`.padStart(8)} ${`${fmt(flat, 2)}x`.padStart(9)}  ${pass ? "PASS" : "FAIL"}`,
    );
  }
  const summaries = node.map((r) => r.summaries).join(", ");
  console.log(
    `  (${TURNS + 3} turns with a summarizer per size made ${summaries} summaries at 10, 10k, 100k items: the first over-budget turn summarizes, later ones reuse it until the kept turns outgrow the budget.)`,
  );
  console.log(`\nWindow target: ${ok ? "met" : "NOT met (see FAIL above)"}`);
  return ok;
}

await runIfMain(import.meta.url, "window", runWindowBench, () => {
  cleanupTempDirs();
  cleanupWindowTemp();
});
