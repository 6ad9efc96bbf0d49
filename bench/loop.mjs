/**
 * CPU of one blocking SendMessage in an existing conversation, as an A/B of checkouts:
 * each checkout's echo agent (bench/loop-worker.ts) on its own workerd sends `count`
 * messages into one conversation in a loop inside the isolate, and the workerd process's
 * CPU time (user+system, from /proc) over the loop is divided by the count. The servers
 * take turns, round after round in alternating order, so background load on a shared
 * machine falls on all of them; compare medians. No HTTP, no load generator, one message
 * at a time: steadier than `npm run bench` for a change's effect, not a throughput figure.
 *
 *   node bench/loop.mjs [count per round] [rounds] [checkout ...]
 *   BENCH_CALLGRIND=1 node bench/loop.mjs 100 3 [checkout ...]
 *
 * With BENCH_CALLGRIND=1 workerd runs under valgrind's callgrind and each loop is counted
 * in instructions (whole process) instead of CPU time: independent of the machine's load,
 * about 50× slower (see bench/instructions.mjs).
 *
 * Checkouts default to this one; each needs node_modules (a symlink will do) and gets
 * this bench/loop-worker.ts copied into its bench/ when it has none.
 */
import { execFileSync } from "node:child_process";
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { machineCpuSeconds, openContexts, processCpuSeconds } from "./load.mjs";
import { callgrindInto, cleanupTempDirs, runWorkerdUnder, startWorkerd } from "./servers.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const count = Number(process.argv[2] ?? 500);
const rounds = Number(process.argv[3] ?? 6);
const roots = process.argv.slice(4).map((r) => resolve(r));
if (roots.length === 0) roots.push(resolve(here, ".."));
const callgrind = process.env.BENCH_CALLGRIND === "1";
let dir = null;
if (callgrind) {
  dir = mkdtempSync(join(tmpdir(), "edgelink-loop-"));
  runWorkerdUnder(dir, callgrindInto(dir));
}
/** The valgrind pids whose servers have started (each leaves its log). */
const valgrindPids = () =>
  readdirSync(dir)
    .filter((f) => f.startsWith("vg."))
    .map((f) => Number(f.split(".")[1]));
const instructions = (pid, zero) => {
  execFileSync("callgrind_control", [zero ? "--zero" : "--dump", String(pid)], { stdio: "pipe" });
  if (zero) return 0;
  const dumps = readdirSync(dir)
    .filter((f) => f.startsWith(`cg.${pid}.out.`))
    .sort((a, b) => Number(a.split(".").at(-1)) - Number(b.split(".").at(-1)));
  const text = readFileSync(join(dir, dumps.at(-1)), "utf8");
  return Number(/^(?:summary|totals): (\d+)/m.exec(text)?.[1]);
};
const headers = { "Content-Type": "application/json", "A2A-Version": "1.0" };

const servers = [];
try {
  for (const root of roots) {
    const entry = join(root, "bench", "loop-worker.ts");
    if (!existsSync(entry)) copyFileSync(join(here, "loop-worker.ts"), entry);
    // As `npm run bench` serves it: no EDGELINK_ID_KEY, so ids use the local dev keys.
    const server = await startWorkerd(entry, {
      EDGELINK_CONTEXT: "EdgelinkContext",
      EDGELINK_INDEX: "EdgelinkIndex",
    });
    // Under valgrind a first message (the isolate's first compile) takes a minute or more.
    const [contextId] = await openContexts(server.url, headers, 1, callgrind ? 300_000 : 10_000);
    // The pid no earlier server has: pids are not in start order once they wrap around.
    const vg = callgrind ? valgrindPids().find((p) => !servers.some((s) => s.vg === p)) : null;
    servers.push({ root, server, contextId, vg, samples: [], other: [] });
  }
  const run = async (s, n) => {
    if (callgrind) instructions(s.vg, true);
    const cpu = processCpuSeconds(s.server.pid);
    const machine = machineCpuSeconds();
    const started = performance.now();
    const response = await fetch(`${s.server.url}bench/loop`, {
      method: "POST",
      body: JSON.stringify({ contextId: s.contextId, count: n }),
    });
    const { completed } = await response.json();
    if (completed !== n) throw new Error(`${s.root}: ${completed} of ${n} completed`);
    if (callgrind) return { ms: instructions(s.vg, false) / n / 1e6, other: 0 };
    const seconds = (performance.now() - started) / 1000;
    const used = processCpuSeconds(s.server.pid) - cpu;
    const others = machineCpuSeconds() - machine - used;
    return { ms: (used * 1000) / n, other: others / seconds };
  };
  for (const s of servers) await run(s, Math.min(count, 300)); // warm-up
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 ? [...servers].reverse() : servers;
    for (const s of order) {
      const { ms, other } = await run(s, count);
      s.samples.push(ms);
      s.other.push(other);
      process.stdout.write(".");
    }
  }
  console.log("");
  const median = (xs) => {
    const s = [...xs].sort((a, b) => a - b);
    return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
  };
  const unit = callgrind ? "M instructions" : "ms";
  for (const s of servers) {
    console.log(
      `${s.root}: median ${median(s.samples).toFixed(3)} ${unit}/message  samples ${s.samples.map((x) => x.toFixed(2)).join(" ")}  other CPU ${s.other.map((x) => `${Math.round(x * 100)}%`).join(" ")}`,
    );
  }
  // Paired by round (the servers of one round ran back to back): drift over the run, JIT
  // warming and background load cancel out of the differences.
  const [first, ...others] = servers;
  for (const s of others) {
    const diffs = s.samples.map((x, i) => x - first.samples[i]);
    const sorted = [...diffs].sort((a, b) => a - b);
    console.log(
      `${s.root} - ${first.root}: median ${median(diffs) >= 0 ? "+" : ""}${median(diffs).toFixed(3)} ${unit}/message (${((median(diffs) / median(first.samples)) * 100).toFixed(1)}%), per round ${sorted[0].toFixed(3)} to ${sorted.at(-1).toFixed(3)}`,
    );
  }
} finally {
  for (const s of servers) await s.server.stop();
  cleanupTempDirs();
  // BENCH_CALLGRIND_KEEP=1 leaves the dumps for callgrind_annotate.
  if (dir && process.env.BENCH_CALLGRIND_KEEP === "1") console.log(`callgrind dumps in ${dir}`);
  else if (dir) rmSync(dir, { recursive: true, force: true });
}
