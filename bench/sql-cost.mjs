/**
 * What Edgelink's SQLite work for one message costs, apart from everything else: workerd
 * CPU per call of one Durable Object (bench/sql-cost-worker.ts) that does, per call,
 *
 *   call   nothing (the Worker's fetch and the object call alone)
 *   floor  the floor's 3 statements (scenario (a)'s object)
 *   sdk    scenario (e)'s storage: the task as one JSON row, loaded and saved 4 times
 *   store  Edgelink's TaskStore writing one echo message (6 statements in 2 transactions on
 *          Edgelink's schema: task, history item, artifact, completion, 3 events) and
 *          reading the task back
 *   merged the same rows written as one transaction of 4 statements, the task inserted
 *          already completed (what merging a fast handler's two transactions could save)
 *   alarm  one setAlarm moving the object's alarm (a quiet turn moves it twice: the index
 *          backstop, then settling back to retention's wake-up)
 *
 * `store − floor` is what Edgelink's storage costs over the floor's; set beside `npm run
 * bench`'s (b) − (a), the rest of that difference is everything else Edgelink does (the
 * request's checks, the agent's run, rendering the answer). Kinds are interleaved, R rounds
 * of N calls (8 at a time over 16 objects), medians printed; CPU read from workerd's
 * threads in nanoseconds, so it includes SQLite's commits and their writes to disk.
 *
 *   node bench/sql-cost.mjs [rounds] [calls per sample] [kind,kind...]
 *
 * BENCH_TMPDIR=/dev/shm keeps the databases in memory (no disk writes in the figure).
 */
import { processCpuSeconds } from "./load.mjs";
import { cleanupTempDirs, startWorkerd } from "./servers.mjs";

const rounds = Number(process.argv[2] ?? 5);
const calls = Number(process.argv[3] ?? 3000);
const ALL = ["call", "floor", "sdk", "store", "merged", "alarm"];
const KINDS = (process.argv[4] ?? ALL.join(",")).split(",");
if (
  !(rounds >= 1 && rounds <= 50 && calls >= 100 && calls <= 100_000) ||
  !KINDS.includes("call") ||
  KINDS.some((k) => !ALL.includes(k))
) {
  console.error(
    `usage: node bench/sql-cost.mjs [rounds 1-50] [calls per sample 100-100000] [kinds: call and any of ${ALL.join(",")}]`,
  );
  process.exit(2);
}
const CONCURRENCY = 8;
const OBJECTS = 16;

const server = await startWorkerd("sql-cost-worker.ts", { SQL_COST: "SqlCost" });
if (!server.pid) throw new Error("could not find workerd's pid (CPU is read from /proc)");

/** `n` calls of one kind, CONCURRENCY at a time; any failed call ends the run. */
async function drive(kind, n) {
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < n) {
        const i = next++;
        const response = await fetch(`${server.url}?kind=${kind}&context=${kind}-${i % OBJECTS}`);
        const text = await response.text();
        if (!response.ok) throw new Error(`${kind}: HTTP ${response.status}: ${text}`);
      }
    }),
  );
}

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const samples = Object.fromEntries(KINDS.map((k) => [k, []]));
try {
  for (const kind of KINDS) await drive(kind, Math.min(calls, 1000));
  process.stdout.write(`measuring ${rounds} rounds of ${calls} calls per kind`);
  for (let round = 0; round < rounds; round++) {
    for (const kind of round % 2 ? [...KINDS].reverse() : KINDS) {
      const before = processCpuSeconds(server.pid);
      await drive(kind, calls);
      samples[kind].push(((processCpuSeconds(server.pid) - before) * 1000) / calls);
    }
    process.stdout.write(".");
  }
  console.log("\n\nworkerd CPU per call (ms), samples and median");
  for (const kind of KINDS) {
    const xs = samples[kind].map((x) => x.toFixed(3)).join(" ");
    console.log(`  ${kind.padEnd(6)} ${xs}   median ${median(samples[kind]).toFixed(3)}`);
  }
  const m = (k) => (samples[k] ? median(samples[k]) : null);
  const over = (k, what) => {
    if (m(k) !== null)
      console.log(`  ${what.padEnd(44)} ${(m(k) - m("call")).toFixed(3)} ms over the call alone`);
  };
  console.log();
  over("floor", "floor's 3 statements:");
  over("sdk", "the SDK alternative's task row (e):");
  over("store", "Edgelink's store, 1 message:");
  over("merged", "the same rows, 1 transaction, 4 statements:");
  over("alarm", "one alarm moved:");
  if (m("store") !== null && m("floor") !== null) {
    console.log(
      `  ${"store − floor:".padEnd(44)} ${(m("store") - m("floor")).toFixed(3)} ms (compare with npm run bench's (b) − (a))`,
    );
  }
} finally {
  await server.stop();
  cleanupTempDirs();
}
