/**
 * A model turn with long-term memory on against the same turn without it, on the
 * answer's path (issue 26's target: at most 1.2×), and whether extraction delays the
 * answer (`npm run bench`, scenario key `memory-turn`; also `node bench/memory-turn.mjs`).
 * See bench/README.md, "A model turn with long-term memory".
 *
 * bench/memory-turn-worker.ts serves one agent three times: without memory, with recall
 * alone, and with recall and extraction (the judged one). The model answers at once and
 * right only when its request is right; extraction takes EXTRACTION_MS. One user; the memory holds FACTS facts, so recall fills
 * its section. Turns are blocking SendMessages, each in a new conversation, one every
 * PACE_MS: each starts on an idle server, after the last one's extraction, so its time is
 * the answer's path alone, and workerd's CPU over its PACE_MS counts everything the turn
 * caused (extraction included). The series take turns one turn at a time, the order
 * rotating, so load on a shared machine falls on all of them alike; medians over the
 * rounds are compared.
 * With BENCH_BASE (a checkout with node_modules), the same worker over that checkout's
 * src/ runs too, interleaved: an A/B of a change.
 *
 *   node bench/memory-turn.mjs [turns per round] [rounds]
 *   BENCH_CALLGRIND=1 node bench/memory-turn.mjs 10 3
 *
 * With BENCH_CALLGRIND=1 (run directly, not in `npm run bench`) workerd runs under
 * valgrind's callgrind and each batch is counted in instructions of the whole process, a
 * second after its last turn (so its extraction is in): independent of the machine's load,
 * about 50× slower (see bench/instructions.mjs); wall times are then meaningless.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { envNumber, runIfMain } from "./env.mjs";
import { machineCpuSeconds, processCpuSeconds } from "./load.mjs";
import {
  agentBindings,
  callgrindInto,
  cleanupTempDirs,
  runWorkerdUnder,
  startWorkerd,
} from "./servers.mjs";

const TURNS = Number(process.argv[2] ?? envNumber("BENCH_MEMORY_TURNS", 30, 1, 1000));
const ROUNDS = Number(process.argv[3] ?? envNumber("BENCH_MEMORY_ROUNDS", 5, 1, 100));
const FACTS = 200;
/** Kept equal to bench/memory-turn-worker.ts's. */
const EXTRACTION_MS = 60;
/** One turn starts this long after the last one started (or when it ends, if later). */
const PACE_MS = EXTRACTION_MS + 40;
const TARGET = 1.2;
const ANSWER = "Noted: window seats, and nothing else to report.";
const USER = { "X-User": "bench-user", "Content-Type": "application/json", "A2A-Version": "1.0" };
/** The agents measured, in order: the first is the baseline of the others. */
const SERIES = [
  ["plain", "memory off"],
  ["recall", "recall only"],
  ["memory", "memory on"],
];
const DURABLE_OBJECTS = {
  PLAIN_CONTEXT: "PlainContext",
  PLAIN_INDEX: "PlainIndex",
  MEMORY_CONTEXT: "MemoryContext",
  MEMORY_INDEX: "MemoryIndex",
  RECALL_CONTEXT: "RecallContext",
  RECALL_INDEX: "RecallIndex",
  EDGELINK_MEMORY: "EdgelinkMemory",
};

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const fmt = (n, d = 2) => (Number.isFinite(n) ? n.toFixed(d) : "-");
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * One blocking SendMessage to `which` agent ("plain", "recall" or "memory"), in a new conversation:
 * its wall ms. Throws unless the task completed with the right answer (the worker's model
 * answers otherwise when the memory section is missing, or there when it should not be).
 */
export async function memoryTurn(base, which, i) {
  const body = {
    jsonrpc: "2.0",
    id: i,
    method: "SendMessage",
    params: {
      message: {
        messageId: `m-${which}-${i}-${Math.random()}`,
        role: "ROLE_USER",
        parts: [{ text: `Book me a window seat to city ${i % 50}, as usual.` }],
      },
    },
  };
  const started = performance.now();
  const response = await fetch(`${base}${which}/`, {
    method: "POST",
    headers: USER,
    body: JSON.stringify(body),
  });
  const json = await response.json();
  const ms = performance.now() - started;
  const task = json.result?.task;
  const text = (task?.artifacts ?? [])
    .flatMap((a) => a.parts ?? [])
    .map((p) => p.text ?? "")
    .join("");
  if (task?.status?.state !== "TASK_STATE_COMPLETED" || text !== ANSWER)
    throw new Error(`${which} turn: wrong answer: ${JSON.stringify(json).slice(0, 400)}`);
  return ms;
}

/**
 * The bench worker on workerd (`options` go to `startWorkerd`: an inspector port, or
 * `srcFrom` for another checkout's code).
 */
export function startMemoryTurnServer(options = {}) {
  return startWorkerd("memory-turn-worker.ts", DURABLE_OBJECTS, {
    ...options,
    bindings: { EDGELINK_ID_KEY: agentBindings().EDGELINK_ID_KEY },
  });
}

/** Fills the bench user's memory with FACTS facts through the memory API. */
export async function fillMemory(base) {
  for (let i = 0; i < FACTS; i++) {
    const response = await fetch(`${base}memory/memory/facts`, {
      method: "POST",
      headers: USER,
      body: JSON.stringify({
        claim: `The user likes window seats on flight ${i} to city ${i % 50}.`,
      }),
    });
    if (!response.ok) throw new Error(`fill: ${response.status} ${await response.text()}`);
  }
}

/** Counting instructions instead of CPU time (BENCH_CALLGRIND=1), the dumps in `dir`. */
const callgrind = { dir: null };
const valgrindPids = () =>
  readdirSync(callgrind.dir)
    .filter((f) => f.startsWith("vg."))
    .map((f) => Number(f.split(".")[1]))
    .sort((a, b) => a - b);
/** Zeroes a server's count, or dumps it and answers the instructions since the zero. */
function instructions(pid, zero) {
  execFileSync("callgrind_control", [zero ? "--zero" : "--dump", String(pid)], { stdio: "pipe" });
  if (zero) return 0;
  const dumps = readdirSync(callgrind.dir)
    .filter((f) => f.startsWith(`cg.${pid}.out.`))
    .sort((a, b) => Number(a.split(".").at(-1)) - Number(b.split(".").at(-1)));
  const text = readFileSync(join(callgrind.dir, dumps.at(-1)), "utf8");
  return Number(/^(?:summary|totals): (\d+)/m.exec(text)?.[1]);
}

/** TURNS turns of one series in a row, counted in millions of instructions (callgrind). */
async function countedBatch(series, seq) {
  instructions(series.vg, true);
  const times = [];
  for (let i = 0; i < TURNS; i++)
    times.push(await memoryTurn(series.server.url, series.which, seq + i));
  // Its last extraction lands first.
  await sleep(1000);
  return { wall: median(times), cpu: instructions(series.vg, false) / TURNS / 1e6, other: 0 };
}

/**
 * One round: TURNS turns of every series, interleaved turn by turn (the order rotating),
 * each given PACE_MS. A turn's CPU is its server's over its pace window, which holds its
 * background work (extraction) too. Per series: median wall ms and CPU ms per turn; the
 * machine's other CPU % over the round.
 */
async function interleavedRound(series, seq, pids) {
  const all0 = pids.map(processCpuSeconds);
  const own0 = process.cpuUsage();
  const m0 = machineCpuSeconds();
  const t0 = performance.now();
  const times = series.map(() => []);
  const cpu = series.map(() => 0);
  for (let i = 0; i < TURNS; i++) {
    for (let k = 0; k < series.length; k++) {
      const j = (k + i) % series.length;
      const s = series[j];
      const c0 = processCpuSeconds(s.server.pid);
      const started = performance.now();
      times[j].push(await memoryTurn(s.server.url, s.which, seq++));
      // The next turn starts after this one's extraction and its background writes.
      await sleep(Math.max(0, PACE_MS - (performance.now() - started)));
      cpu[j] += processCpuSeconds(s.server.pid) - c0;
    }
  }
  const seconds = (performance.now() - t0) / 1000;
  const servers = pids.reduce((sum, pid, i) => sum + (processCpuSeconds(pid) - all0[i]), 0);
  const own = process.cpuUsage(own0);
  const other =
    (Math.max(0, machineCpuSeconds() - m0 - servers - (own.user + own.system) / 1e6) / seconds) *
    100;
  return series.map((_, j) => ({ wall: median(times[j]), cpu: (cpu[j] * 1000) / TURNS, other }));
}

/** Runs the section and prints it; true when the target was met. Throws on a wrong answer. */
export async function runMemoryTurnBench() {
  console.log("\nA model turn with long-term memory on (bench/memory-turn.mjs)");
  const baseDir = process.env.BENCH_BASE;
  const servers = [];
  try {
    for (const [label, options] of [
      ["", {}],
      ...(baseDir ? [["base ", { srcFrom: baseDir }]] : []),
    ]) {
      const server = await startMemoryTurnServer(options);
      servers.push({ label, server, vg: callgrind.dir ? valgrindPids().at(-1) : null });
    }
    const series = servers.flatMap(({ label, server, vg }) =>
      SERIES.map(([which, name]) => ({ name: `${label}${name}`, which, server, vg, rounds: [] })),
    );
    const pids = servers.map(({ server }) => server.pid);
    let seq = 0;
    for (const { server } of servers) {
      await fillMemory(server.url);
      // Warm-up: every agent's objects and code paths.
      for (let i = 0; i < 10; i++) {
        for (const [which] of SERIES) await memoryTurn(server.url, which, seq++);
      }
    }
    await sleep(PACE_MS);
    process.stdout.write(`  ${ROUNDS} rounds of ${TURNS} turns per series `);
    for (let round = 0; round < ROUNDS; round++) {
      if (callgrind.dir) {
        // Each round starts with a different series, so none always follows the same one.
        for (let k = 0; k < series.length; k++) {
          const s = series[(k + round) % series.length];
          s.rounds.push(await countedBatch(s, seq));
          seq += TURNS;
        }
      } else {
        const results = await interleavedRound(series, seq, pids);
        seq += TURNS * series.length;
        for (const [j, s] of series.entries()) s.rounds.push(results[j]);
      }
      process.stdout.write(".");
    }
    const rows = series.map((s) => ({
      name: s.name,
      wall: median(s.rounds.map((r) => r.wall)),
      cpu: median(s.rounds.map((r) => r.cpu)),
      other: median(s.rounds.map((r) => r.other)),
      rounds: s.rounds,
    }));
    console.log(
      `\n  memory of ${FACTS} facts; one turn every ${PACE_MS} ms; extraction takes ${EXTRACTION_MS} ms; medians over rounds`,
    );
    console.log(
      `  ${"".padEnd(20)}${"ms/turn".padStart(10)}${(callgrind.dir ? "M instr/turn" : "CPU ms/turn").padStart(14)}${"other CPU".padStart(12)}`,
    );
    for (const r of rows) {
      console.log(
        `  ${r.name.padEnd(20)}${fmt(r.wall).padStart(10)}${fmt(r.cpu).padStart(14)}${`${fmt(r.other, 0)}%`.padStart(12)}`,
      );
    }
    let met = true;
    let waited = false;
    for (let i = 0; i < rows.length; i += SERIES.length) {
      const [off, ...withMemory] = rows.slice(i, i + SERIES.length);
      for (const on of withMemory) {
        const ratio = on.wall / off.wall;
        const perRound = on.rounds.map((r, k) => r.wall / off.rounds[k].wall).sort((a, b) => a - b);
        console.log(
          `  ${on.name}: ${fmt(ratio)}× wall (rounds ${fmt(perRound[0])}–${fmt(perRound.at(-1))}×), ${fmt(on.cpu / off.cpu)}× ${callgrind.dir ? "instructions" : "CPU"} (+${fmt(on.cpu - off.cpu)} ${callgrind.dir ? "M" : "ms"})`,
        );
        // The judged figure: this checkout, recall and extraction on.
        if (i === 0 && on === withMemory.at(-1)) met = ratio <= TARGET;
        // An answer that waited for extraction would take at least its time more.
        if (on.wall - off.wall >= EXTRACTION_MS * 0.75) waited = true;
      }
    }
    // Under callgrind the times say nothing: the counts are the figures.
    if (callgrind.dir) return true;
    console.log(
      `  target: memory on ≤ ${TARGET}× memory off: ${met ? "met" : "NOT met"}; extraction on the answer's path: ${waited ? "YES (an answer waited for it)" : "no"}`,
    );
    return met && !waited;
  } finally {
    for (const { server } of servers) await server.stop();
  }
}

if (
  process.env.BENCH_CALLGRIND === "1" &&
  import.meta.url === pathToFileURL(process.argv[1] ?? "").href
) {
  callgrind.dir = mkdtempSync(join(tmpdir(), "edgelink-memory-turn-"));
  runWorkerdUnder(callgrind.dir, callgrindInto(callgrind.dir));
}
await runIfMain(import.meta.url, "memory-turn", runMemoryTurnBench, () => {
  cleanupTempDirs();
  // BENCH_CALLGRIND_KEEP=1 leaves the dumps (one per batch, in order) for callgrind_annotate.
  if (callgrind.dir && process.env.BENCH_CALLGRIND_KEEP === "1") {
    console.log(`callgrind dumps in ${callgrind.dir}`);
  } else if (callgrind.dir) rmSync(callgrind.dir, { recursive: true, force: true });
});
