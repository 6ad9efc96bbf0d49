/**
 * What one call costs in instructions, not CPU time: workerd runs under valgrind's
 * callgrind, whose count of executed instructions does not depend on what else the
 * machine is doing (CPU time on a shared 2-core VM moves 2× with the neighbours' load).
 * Slow (workerd starts in under a minute and runs ~50× slower) but steadier: samples of
 * 20 calls agree within about 10% whatever the load, where CPU samples swing by half.
 *
 *   node bench/instructions.mjs [calls per sample] [rounds] [kind,kind...]
 *
 * Kinds (bench/turns-worker.ts; each call in its own context made beforehand):
 *   echo-send     SendMessage answered by the handler itself (no model)
 *   echo-new      the same as the first message of a new context (its database made)
 *   echo-stream   SendStreamingMessage, the same answer
 *   echo-stream20 SendStreamingMessage answered in 20 artifact chunks (the (bs) scenario's shape)
 *   model-stream  SendStreamingMessage, a model turn on the recorded 12-event OpenAI stream
 *   model-send    SendMessage, the same model turn
 *   part-window, part-provider, part-record, part-artifacts
 *                 SendMessage doing one part of a model turn (read the window, consume the
 *                 provider stream, record the answer, write two artifact chunks), then echo
 *   part-provider20  the provider stream consumed 20 times, then echo: the stream's own
 *                 cost, 20 times over, above a call's noise (±0.2 M)
 * The counter is zeroed after the contexts are made and their index flushes have landed,
 * and read as soon as the calls end: the calls' own index flushes (`limits.indexFlushMs`
 * later, off the answer's path) are left out, and so is idle-time garbage collection, which
 * made samples swing by a third when counted. The count covers the whole process (every
 * thread), V8 compiling and collecting during the calls included, which is what still moves
 * samples by up to 10% (compare medians of several). Needs `valgrind` (apt-get install
 * valgrind).
 *
 * BENCH_SETTLE_MS=2500 reads the counter that long after the calls instead, so their
 * index flushes and alarm moves are counted too, as bench/stream.mjs charges them.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { callgrindInto, cleanupTempDirs, runWorkerdUnder, startAgentBench } from "./servers.mjs";

const calls = Number(process.argv[2] ?? 20);
const rounds = Number(process.argv[3] ?? 3);
const KINDS = {
  "echo-send": { method: "SendMessage", text: "echo" },
  // The first message of a new context: the object's database made, then the echo answer.
  "echo-new": { fresh: true },
  "echo-stream": { method: "SendStreamingMessage", text: "echo" },
  "echo-stream20": { method: "SendStreamingMessage", text: "stream instructions" },
  "model-stream": { method: "SendStreamingMessage", text: "recorded" },
  "model-send": { method: "SendMessage", text: "recorded" },
  // A part of the model turn, then the echo answer (compare with echo-send).
  "part-window": { method: "SendMessage", text: "part:window" },
  "part-provider": { method: "SendMessage", text: "part:provider" },
  "part-provider20": { method: "SendMessage", text: "part:provider20" },
  "part-provider-think": { method: "SendMessage", text: "part:provider-think" },
  "part-record": { method: "SendMessage", text: "part:record" },
  "part-artifacts": { method: "SendMessage", text: "part:artifacts" },
};
const kinds = (process.argv[4] ?? "echo-send,echo-stream,model-stream,model-send").split(",");
if (
  !(calls >= 1 && calls <= 500 && rounds >= 1 && rounds <= 20) ||
  kinds.some((k) => !(k in KINDS))
) {
  console.error(
    `usage: node bench/instructions.mjs [calls 1-500] [rounds 1-20] [${Object.keys(KINDS).join(",")}]`,
  );
  process.exit(2);
}
try {
  execFileSync("valgrind", ["--version"], { stdio: "ignore" });
} catch {
  console.error("bench/instructions.mjs needs valgrind (apt-get install valgrind)");
  process.exit(2);
}

// workerd runs under callgrind, its counts written to `dir`.
const dir = mkdtempSync(join(tmpdir(), "edgelink-instructions-"));
runWorkerdUnder(dir, callgrindInto(dir));

/** Waited after the calls before the counter is read (BENCH_SETTLE_MS, above). */
const SETTLE_MS = Number(process.env.BENCH_SETTLE_MS ?? 0);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const started = Date.now();
process.stdout.write("starting workerd under callgrind (about a minute)...");
const { server, call } = await startAgentBench("turns-worker.ts");
const valgrindPid = readdirSync(dir)
  .filter((f) => f.startsWith("vg."))
  .map((f) => f.split(".")[1])
  .at(-1);
console.log(` ${Math.round((Date.now() - started) / 1000)} s`);
const control = (...args) =>
  execFileSync("callgrind_control", [...args, String(valgrindPid)], { stdio: "pipe" });

/** Instructions of `calls` calls of one kind, in fresh contexts. */
async function sample(kind, count) {
  if (KINDS[kind].fresh) {
    await sleep(2500); // the index flushes of what ran before land first
    control("--zero");
    const { contexts } = await call({ side: "prepare", count });
    control("--dump");
    if (contexts.length !== count) throw new Error(`${kind}: ${contexts.length} of ${count} made`);
  } else {
    const { contexts } = await call({ side: "prepare", count });
    await sleep(2500); // the contexts' index flushes (limits.indexFlushMs) land first
    control("--zero");
    const { completed } = await call({ side: "run", contexts, ...KINDS[kind] });
    if (SETTLE_MS > 0) await sleep(SETTLE_MS);
    control("--dump");
    if (completed !== count) throw new Error(`${kind}: ${completed} of ${count} completed`);
  }
  const dumps = readdirSync(dir).filter((f) => f.startsWith(`cg.${valgrindPid}.out.`));
  const last = dumps.sort((a, b) => Number(a.split(".").at(-1)) - Number(b.split(".").at(-1)));
  const text = readFileSync(join(dir, last.at(-1)), "utf8");
  // For callgrind_annotate: BENCH_CALLGRIND_KEEP=dir keeps each sample's dump there.
  if (process.env.BENCH_CALLGRIND_KEEP) {
    writeFileSync(join(process.env.BENCH_CALLGRIND_KEEP, `${kind}.${Date.now()}.out`), text);
  }
  const total = Number(/^(?:summary|totals): (\d+)/m.exec(text)?.[1]);
  if (!(total > 0)) throw new Error("callgrind wrote no total");
  return total / count;
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const results = Object.fromEntries(kinds.map((k) => [k, []]));
try {
  process.stdout.write("warming up");
  for (const kind of kinds) {
    await sample(kind, Math.min(calls, 10));
    process.stdout.write(".");
  }
  process.stdout.write("\nmeasuring");
  for (let round = 0; round < rounds; round++) {
    for (const kind of round % 2 ? [...kinds].reverse() : kinds) {
      results[kind].push(await sample(kind, calls));
      process.stdout.write(".");
    }
  }
  console.log(` done in ${Math.round((Date.now() - started) / 1000)} s\n`);
  console.log(
    `instructions per call (callgrind, whole workerd process), ${calls} calls per sample, ${rounds} samples`,
  );
  for (const kind of kinds) {
    const xs = results[kind];
    console.log(
      `  ${kind.padEnd(13)} median ${(median(xs) / 1e6).toFixed(3)} M   samples ${xs.map((x) => (x / 1e6).toFixed(2)).join(" ")}`,
    );
  }
  const m = (k) => (results[k] ? median(results[k]) / 1e6 : null);
  const diff = (a, b, what) => {
    if (m(a) !== null && m(b) !== null) console.log(`  ${what}: ${(m(a) - m(b)).toFixed(3)} M`);
  };
  diff("echo-stream", "echo-send", "streaming an echo answer over answering it (SSE)");
  diff("echo-stream20", "echo-stream", "20 artifact chunks over one answer, streamed");
  diff("model-stream", "echo-stream", "a model turn over an echo answer, streamed");
  diff("model-send", "echo-send", "a model turn over an echo answer, blocking");
  for (const part of ["window", "provider", "record", "artifacts"]) {
    diff(`part-${part}`, "echo-send", `the model turn's ${part} (part-${part} over echo-send)`);
  }
} finally {
  await server.stop();
  cleanupTempDirs();
  rmSync(dir, { recursive: true, force: true });
}
