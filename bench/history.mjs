/**
 * The conversation-history benchmark (`npm run bench`, scenario key `history`; also
 * `node bench/history.mjs` alone). See bench/README.md, "Conversation history".
 *
 *   (1) SQLite rows written by one HistoryStore.append at history lengths 10, 10,000 and
 *       100,000, from the cursor's rowsWritten, in a SQLite Durable Object on workerd
 *       (history-worker.ts). Target: the same at 10 and 10,000.
 *   (2) truncate and "tokens" compaction of 1k / 10k / 100k items (history-work.ts) in
 *       workerd (inside the Durable Object) and in Node, beside a literal port of the
 *       reference's O(n^2) truncate (naive-truncate.ts). Target: time(100k)/time(10k) <= 12.
 *   (3) memory of loading a 100,000-item history: in Node, the live heap of rows ->
 *       parsed items -> Conversation (full GC before each reading), and the same load
 *       under a 128 MB heap cap; in workerd, page({limit: 100000}) of a 100,000-item
 *       store, its time and the growth of workerd's peak RSS. Target: well inside 128 MB.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { runIfMain } from "./env.mjs";
import { cleanupTempDirs, startWorkerd } from "./servers.mjs";

const here = dirname(fileURLToPath(import.meta.url));

/**
 * Samples per size (reps) of `batch` runs each: workerd's clock ticks in whole
 * milliseconds, so short runs are timed in batches of about 20-60 ms. Run in ROUNDS
 * rounds (see history-work.ts runPlan).
 */
const CPU_PLAN = [
  { kind: "truncate", n: 1_000, reps: 9, batch: 100, warmup: 50 },
  { kind: "truncate", n: 10_000, reps: 9, batch: 10, warmup: 5 },
  { kind: "truncate", n: 100_000, reps: 9, batch: 1, warmup: 2 },
  { kind: "compact", n: 1_000, reps: 9, batch: 200, warmup: 100 },
  { kind: "compact", n: 10_000, reps: 9, batch: 20, warmup: 10 },
  { kind: "compact", n: 100_000, reps: 9, batch: 2, warmup: 2 },
  // O(n^2): 10k takes seconds, 100k would take about a minute (extrapolated, not run).
  { kind: "naive", n: 1_000, reps: 3, batch: 4, warmup: 2 },
  { kind: "naive", n: 10_000, reps: 1, batch: 1, warmup: 0 },
  // Reference: one pass reading item.type, how the machine's memory scales by itself.
  { kind: "scan", n: 1_000, reps: 9, batch: 5000, warmup: 1000 },
  { kind: "scan", n: 10_000, reps: 9, batch: 500, warmup: 100 },
  { kind: "scan", n: 100_000, reps: 9, batch: 40, warmup: 10 },
];
const ROUNDS = 3;
const SIZES = [1_000, 10_000, 100_000];
const RATIO_TARGET = 12;
const HEAP_TARGET_MB = 128;
const PAGE_ITEMS = 100_000;
const CHILD_TIMEOUT_MS = 120_000;
const MB = 1024 * 1024;

// ---- temp dir (the bundled Node child) --------------------------------------------------

let tempDir = null;
/** Removes this module's temp dir; bench/run.mjs calls it on exit and on Ctrl-C. */
export function cleanupHistoryTemp() {
  if (tempDir) rmSync(tempDir, { recursive: true, force: true });
  tempDir = null;
}

async function bundleNodeChild() {
  tempDir = mkdtempSync(join(process.env.BENCH_TMPDIR || tmpdir(), "edgelink-bench-history-"));
  const outfile = join(tempDir, "history-node.mjs");
  await build({
    entryPoints: [join(here, "history-node.ts")],
    outfile,
    bundle: true,
    format: "esm",
    platform: "node",
    target: "node20",
    logLevel: "error",
  });
  return outfile;
}

/** Runs the bundled child with node flags; resolves { code, signal, result, stderr }. */
function runChild(script, nodeFlags, args) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...nodeFlags, script, ...args], {
      stdio: ["ignore", "pipe", "pipe"],
    });
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
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      let result = null;
      try {
        result = JSON.parse(stdout.trim().split("\n").at(-1) ?? "null");
      } catch {}
      resolve({ code, signal, result, stderr });
    });
  });
}

// ---- workerd's memory, from /proc ------------------------------------------------------

function vm(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const kb = (key) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? NaN);
    return { rss: kb("VmRSS") * 1024, peak: kb("VmHWM") * 1024 };
  } catch {
    return null;
  }
}

/** Resets the process's peak RSS (VmHWM) to its current RSS; false if not allowed. */
function resetPeak(pid) {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, "5");
    return true;
  } catch {
    return false;
  }
}

// ---- output -----------------------------------------------------------------------------

function say(text, first = "  ", rest = first) {
  const width = 100;
  let line = first;
  for (const word of text.split(" ")) {
    if (line.length + word.length + 1 > width && line.trim()) {
      console.log(line.trimEnd());
      line = rest;
    }
    line += (line.trim() ? " " : "") + word;
  }
  if (line.trim()) console.log(line.trimEnd());
}
const fmt = (n, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : "-");
const int = (n) => n.toLocaleString("en-US");
const ms = (n) => (n >= 100 ? fmt(n, 0) : n >= 10 ? fmt(n, 1) : n >= 1 ? fmt(n, 2) : fmt(n, 3));
const mark = (ok) => (ok ? "PASS" : "FAIL");
const sizeLabel = (n) => (n >= 1000 ? `${n / 1000}k` : String(n));

// ---- the benchmark ------------------------------------------------------------------------

async function measureWorkerd() {
  const server = await startWorkerd("history-worker.ts", { HISTORY_BENCH: "HistoryBench" });
  const call = async (path, params = {}) => {
    const response = await fetch(`${server.url}${path.slice(1)}?${new URLSearchParams(params)}`);
    const body = await response.json();
    if (!response.ok || body.error) {
      throw new Error(`history worker ${path}: ${body.error ?? response.status}`);
    }
    return body;
  };
  try {
    // (1) rows written by one append, at growing lengths.
    const store = { name: "store" };
    const info = await call("/info", store);
    const appends = [];
    let fill = null;
    for (const length of [10, 10_000, 100_000]) {
      const filled = await call("/fill", { ...store, target: length });
      if (length === 100_000) fill = filled;
      const runs = [];
      for (let i = 0; i < 3; i++) runs.push(await call("/append", store));
      appends.push({ length, runs });
      process.stdout.write(".");
    }

    // (3, workerd) one page of 100k rows, twice, then the task run's full load; workerd's
    // peak RSS around each.
    await call("/forget", store);
    const loads = [];
    for (const [label, path, params] of [
      ["page", "/page", { limit: PAGE_ITEMS }],
      ["page", "/page", { limit: PAGE_ITEMS }],
      ["load", "/load", {}],
    ]) {
      const before = vm(server.pid);
      const reset = resetPeak(server.pid);
      const result = await call(path, { ...store, ...params });
      const after = vm(server.pid);
      loads.push({ label, result, before, after, reset });
      process.stdout.write(".");
    }

    const pageParts = await call("/page-parts", { ...store, limit: PAGE_ITEMS });

    // (2, workerd) the CPU plan, in a second object of the same isolate.
    const cpu = { name: "cpu" };
    const timings = await call("/cpu", { ...cpu, plan: JSON.stringify(CPU_PLAN), rounds: ROUNDS });
    await call("/forget", cpu);
    process.stdout.write(".");
    return { info, appends, fill, loads, pageParts, timings };
  } finally {
    await server.stop();
  }
}

async function measureNode() {
  const script = await bundleNodeChild();
  const cpu = await runChild(script, [], ["cpu", JSON.stringify(CPU_PLAN), String(ROUNDS)]);
  if (cpu.code !== 0 || !cpu.result) throw new Error(`node cpu child failed: ${cpu.stderr}`);
  process.stdout.write(".");
  const heap = await runChild(script, ["--expose-gc"], ["heap", String(PAGE_ITEMS)]);
  if (heap.code !== 0 || !heap.result) throw new Error(`node heap child failed: ${heap.stderr}`);
  process.stdout.write(".");
  // The load under a hard V8 heap limit of 128 MB; if that fails, the smallest that works.
  const caps = [];
  for (const limit of [HEAP_TARGET_MB, 160, 192, 256]) {
    const run = await runChild(script, [`--max-heap-size=${limit}`], ["cap", String(PAGE_ITEMS)]);
    const ok = run.code === 0 && run.result?.items === PAGE_ITEMS;
    caps.push({ limit, ok, code: run.code ?? run.signal, oom: /out of memory/i.test(run.stderr) });
    process.stdout.write(".");
    if (ok) break;
  }
  const cap = caps[0];
  return { timings: cpu.result, heap: heap.result, cap, caps };
}

function cpuTable(runtimes) {
  const get = (timings, kind, n) => timings.find((t) => t.kind === kind && t.n === n);
  const widths = [30, 9, 9, 9, 10, 18];
  const row = (cells) =>
    cells
      .map((c, i) => (i === 0 ? String(c).padEnd(widths[0]) : String(c).padStart(widths[i])))
      .join("");
  const perItem = (t, n) => fmt((t * 1e6) / n, 0);
  const verdicts = [];
  for (const { name, timings } of runtimes) {
    console.log("");
    console.log(`  ${name}: median ms per run`);
    const head = row(["", ...SIZES.map(sizeLabel), "100k/10k", "ns/item 10k,100k"]);
    console.log(`  ${head}`);
    console.log(`  ${"-".repeat(head.length)}`);
    for (const [kind, label, judged] of [
      ["truncate", "Edgelink truncate", true],
      ["compact", 'Edgelink compact "tokens"', true],
      ["scan", "reference: read item.type", false],
    ]) {
      const t = SIZES.map((n) => get(timings, kind, n)?.median);
      const ratio = t[2] / t[1];
      if (judged) verdicts.push({ name, label, ratio, ok: ratio <= RATIO_TARGET });
      const cells = t.map((x) => (kind === "scan" ? fmt(x, 4) : ms(x)));
      const nsItem = `${perItem(t[1], 10_000)}, ${perItem(t[2], 100_000)}`;
      console.log(`  ${row([label, ...cells, `${fmt(ratio, 1)}x`, nsItem])}`);
    }
    const t1 = get(timings, "naive", 1_000)?.median;
    const t10 = get(timings, "naive", 10_000)?.median;
    const t100 = t10 * 100;
    console.log(`  ${row(["naive truncate (reference)", ms(t1), ms(t10), "skipped", "", ""])}`);
    const ours = SIZES.map((n) => get(timings, "truncate", n)?.median);
    console.log(
      `  ${row(["naive / Edgelink truncate", `${fmt(t1 / ours[0], 0)}x`, `${fmt(t10 / ours[1], 0)}x`, `~${fmt(t100 / ours[2], 0)}x`, "", ""])}`,
    );
    const same = [1_000, 10_000].map(
      (n) => get(timings, "truncate", n)?.keptHash === get(timings, "naive", n)?.keptHash,
    );
    const kept = SIZES.map((n) => get(timings, "truncate", n));
    const minRatio = (kind) =>
      fmt(get(timings, kind, 100_000).min / get(timings, kind, 10_000).min, 1);
    say(
      `naive at 100k skipped (O(n²), would take ~${fmt(t100 / 1000, 0)} s: its 10k time × 100; from 1k to 10k it grew ${fmt(t10 / t1, 0)}×, n^${fmt(Math.log10(t10 / t1), 2)}). Edgelink's truncate kept ${kept.map((t) => `${int(t.kept)} items / ${int(t.keptTokens)} tokens`).join(", ")}: the same items as the naive one at 1k and 10k: ${same.every(Boolean) ? "yes" : `NO (1k ${same[0]}, 10k ${same[1]})`}. 100k/10k of the fastest samples: truncate ${minRatio("truncate")}x, compact ${minRatio("compact")}x, read ${minRatio("scan")}x.`,
      "  ",
      "  ",
    );
  }
  return verdicts;
}

/** Runs the history section and prints it; returns true if every target was met. */
export async function runHistoryBench() {
  console.log("\nConversation history benchmark (bench/history.mjs)");
  process.stdout.write("  measuring");
  const started = performance.now();
  const workerd = await measureWorkerd();
  const node = await measureNode();
  process.stdout.write(` done in ${fmt((performance.now() - started) / 1000, 0)} s\n`);
  const bytesPerItem = workerd.timings[0]?.jsonBytesPerItem;
  say(
    `items: a system message, then user turns (user message; in 30% of turns one or two tool rounds, a function call and its output; an assistant reply), about ${fmt(bytesPerItem, 0)} bytes of JSON per item (bench/history-items.ts).`,
    "  ",
    "  ",
  );

  // (1)
  console.log(
    "\n(1) SQLite rows written by one HistoryStore.append (cursor rowsWritten, SQLite DO)",
  );
  say(`tables: ${workerd.info.schema}`, "  ", "  ");
  for (const { length, runs } of workerd.appends) {
    const rows = runs.map((r) => r.rowsWritten);
    say(
      `at length ${int(length).padStart(7)}: ${rows[0]} rows (3 appends: ${rows.join(", ")}; items ${runs.map((r) => r.type).join(", ")})`,
      "  ",
      "  ",
    );
  }
  const rowsAt = (length) => workerd.appends.find((a) => a.length === length).runs;
  const rows10 = rowsAt(10).map((r) => r.rowsWritten);
  const rows10k = rowsAt(10_000).map((r) => r.rowsWritten);
  const rowsOk = [...rows10, ...rows10k].every((r) => r === rows10[0]);
  say(
    `equal at 10 and 10,000 items: ${mark(rowsOk)} (${rows10[0]} vs ${rows10k[0]}; at 100,000: ${rowsAt(100_000)[0].rowsWritten}). Filling to 100,000 took ${fmt(workerd.fill.ms / 1000, 1)} s (${fmt((workerd.fill.ms * 1000) / (100_000 - 10_003), 0)} µs per append, inside 5,000-append transactions).`,
    "  ",
    "  ",
  );

  // (2)
  console.log(
    `\n(2) truncate({ maxTokens: 8000 }) and compact({ strategy: "tokens", maxTokens: 8000, preserveRecent: 6 })`,
  );
  const verdicts = cpuTable([
    { name: "workerd (inside the Durable Object)", timings: workerd.timings },
    { name: `Node ${process.version}`, timings: node.timings },
  ]);
  console.log("");
  for (const v of verdicts) {
    say(
      `time(100k)/time(10k) <= ${RATIO_TARGET}, ${v.label}, ${v.name.split(" (")[0]}: ${fmt(v.ratio, 1)} ${mark(v.ok)}`,
      "  ",
      "  ",
    );
  }

  // (3)
  const h = node.heap;
  console.log(
    `\n(3) memory of loading a ${int(PAGE_ITEMS)}-item history (target: well inside ${HEAP_TARGET_MB} MB)`,
  );
  say(
    `Node, --expose-gc, live heap after two full GCs, as src/conversation/runs/task-run.ts loads a history (${fmt(h.bodyMB, 1)} MB of JSON bodies):`,
    "  ",
    "  ",
  );
  for (const [label, value] of [
    [
      `parsed items, read row by row off the cursor (${ms(h.parseMs)} ms, row generation included)`,
      h.rowsAndParsedMB,
    ],
    [`parsed items + Conversation.fromStored (${ms(h.validateMs)} ms)`, h.parsedAndConversationMB],
    ["the Conversation alone", h.conversationMB],
  ]) {
    console.log(`    ${label.padEnd(66)} ${fmt(value, 1).padStart(6)} MB`);
  }
  const heapOk = h.peakLiveMB < HEAP_TARGET_MB;
  say(
    `peak live heap ${fmt(h.peakLiveMB, 1)} MB = ${fmt((h.peakLiveMB / HEAP_TARGET_MB) * 100, 0)}% of ${HEAP_TARGET_MB} MB: ${mark(heapOk)}${heapOk && h.peakLiveMB > HEAP_TARGET_MB / 2 ? ` (under the limit, but not "well inside": less than ${fmt(HEAP_TARGET_MB - h.peakLiveMB, 0)} MB to spare)` : ""}. The Conversation alone: ${fmt(h.conversationMB, 1)} MB, ${fmt((h.conversationMB * MB) / PAGE_ITEMS, 0)} bytes per item. Heap used before collection peaked at ${fmt(h.highWaterMB, 1)} MB (garbage included).`,
    "  ",
    "  ",
  );
  const capOk = node.cap.ok;
  const fits = node.caps.find((c) => c.ok);
  say(
    `the same load in node --max-heap-size=${HEAP_TARGET_MB} (V8's whole heap capped at ${HEAP_TARGET_MB} MB): ${capOk ? "completed" : `failed (exit ${node.cap.code}${node.cap.oom ? ", heap out of memory" : ""}); ${fits ? `it completes with --max-heap-size=${fits.limit}` : `it fails up to ${node.caps.at(-1).limit} MB`}`}: ${mark(capOk)}`,
    "  ",
    "  ",
  );
  say(
    `workerd, in the Durable Object holding ${int(workerd.loads[0].result.total)} items (each result dropped after the call):`,
    "  ",
    "  ",
  );
  for (const { label, result, before, after, reset } of workerd.loads) {
    const growth =
      before && after && reset
        ? `workerd peak RSS +${fmt((after.peak - before.rss) / MB, 1)} MB over its ${fmt(before.rss / MB, 0)} MB`
        : "workerd RSS not measurable here";
    const what =
      label === "page"
        ? `page({ limit: ${int(PAGE_ITEMS)} }): ${int(result.rows)} rows, ${fmt(result.jsonChars / MB, 1)} MB of JSON`
        : `task-run load (all() + Conversation.fromStored): ${int(result.items)} items`;
    console.log(`    ${what}, ${ms(result.ms)} ms; ${growth}`);
  }
  const parts = workerd.pageParts;
  say(
    `where page()'s time goes (same statements): SQLite cursor toArray of ${int(parts.rows)} rows ${ms(parts.sqlMs)} ms, JSON.parse of the bodies ${ms(parts.parseMs)} ms, COUNT(*) for total ${ms(parts.countMs)} ms.`,
    "  ",
    "  ",
  );
  say(
    "(RSS covers the whole workerd process, V8 heap and SQLite cache alike, and grows only where the heap needs fresh pages: an indication; the Node figures are the measurement.)",
    "  ",
    "  ",
  );

  const ok = rowsOk && verdicts.every((v) => v.ok) && heapOk && capOk;
  console.log(`\nHistory targets: ${ok ? "all met" : "NOT all met (see FAIL above)"}`);
  return ok;
}

await runIfMain(import.meta.url, "history", runHistoryBench, () => {
  cleanupTempDirs();
  cleanupHistoryTemp();
});
