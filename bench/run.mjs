/**
 * `npm run bench`: SendMessage round-trip throughput of Edgelink against the platform
 * floor and the official A2A JS SDK, one scenario after another. See bench/README.md.
 *
 * Then the tenant index's ceiling (bench/index.mjs, scenario key `index`), the
 * conversation-history benchmark (bench/history.mjs, scenario key `history`), a
 * model turn's window (bench/window.mjs, scenario key `window`), the
 * webhook push benchmark (bench/push.mjs, scenario key `push`), the provider streaming
 * benchmark (bench/stream.mjs, scenario key `stream`), long-term memory recall
 * (bench/memory.mjs, scenario key `memory`) and a model turn with memory on against one
 * without (bench/memory-turn.mjs, scenario key `memory-turn`).
 *
 * Env: BENCH_SECONDS (measured window per scenario, default 8), BENCH_WARMUP (default 2),
 * BENCH_CONCURRENCY (default 16), BENCH_SCENARIOS (e.g. "a,b", "history", "push" or "stream";
 * default all),
 * BENCH_ROUNDS (slices the measured time is cut into, interleaving scenarios; default 8),
 * BENCH_MAX_REQUESTS (per scenario, default 500000), BENCH_TMPDIR (where the Durable
 * Objects' SQLite files go; default the OS temp dir). BENCH_ONLY=peer runs only the
 * four-way comparison of bench/peer.mjs (floor, SDK in a DO, the `agents` peer, Edgelink),
 * in 3 rounds unless BENCH_ROUNDS says otherwise, with each one's instructions per message
 * counted under callgrind first (bench/wire-instructions.mjs; BENCH_INSTRUCTIONS=0 skips it).
 */

import { readFileSync } from "node:fs";
import { cpus, release, totalmem } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { envNumber } from "./env.mjs";
import { cleanupHistoryTemp, runHistoryBench } from "./history.mjs";
import { runIndexBench } from "./index.mjs";
import { checkResponse, createLoad, openContexts, sendMessageBody } from "./load.mjs";
import { runMemoryBench } from "./memory.mjs";
import { runMemoryTurnBench } from "./memory-turn.mjs";
import { PEER_KEYS, PEER_WAL_KINDS, peerFigures, printPeerComparison } from "./peer.mjs";
import { runPushBench } from "./push.mjs";
import { cleanupTempDirs, startSdkServer, startWorkerd } from "./servers.mjs";
import { cleanupStreamTemp, runStreamBench } from "./stream.mjs";
import { STREAM_CHUNKS } from "./stream-chunks.mjs";
import { measureWalPages } from "./wal-pages.mjs";
import { cleanupWindowTemp, runWindowBench } from "./window.mjs";
import { measureWireInstructions, available as valgrindAvailable } from "./wire-instructions.mjs";

const here = dirname(fileURLToPath(import.meta.url));

/** `BENCH_ONLY=peer`: only the four-way comparison with the `agents` peer (bench/peer.mjs). */
const ONLY = process.env.BENCH_ONLY ?? "";
if (ONLY !== "" && ONLY !== "peer") throw new Error(`BENCH_ONLY: unknown ${ONLY}; known: peer`);
if (ONLY && process.env.BENCH_SCENARIOS) {
  throw new Error("BENCH_ONLY and BENCH_SCENARIOS both name the scenarios; set one of them");
}
const SECONDS = envNumber("BENCH_SECONDS", 8, 1, 120);
const WARMUP = envNumber("BENCH_WARMUP", 2, 0, 60);
const CONCURRENCY = envNumber("BENCH_CONCURRENCY", 16, 1, 256);
const MAX_REQUESTS = envNumber("BENCH_MAX_REQUESTS", 500_000, 100, 10_000_000);
const ROUNDS = envNumber("BENCH_ROUNDS", ONLY === "peer" ? 3 : 8, 1, 40);
/**
 * Clients of the streaming scenarios (bs, es): a stream of 20 events takes several times a
 * blocking answer, and a slice counts only what completes inside it, so 16 clients would
 * leave little of a slice to count on a loaded machine.
 */
const STREAM_CONCURRENCY = envNumber("BENCH_STREAM_CONCURRENCY", 4, 1, 256);
const TIMEOUT_MS = 10_000;
/** Above this much CPU (% of one core) used by other processes, a run is flagged noisy. */
const NOISY_CPU_PCT = 25;
const RUN = Date.now().toString(36);

const EDGELINK_DOS = { EDGELINK_CONTEXT: "EdgelinkContext", EDGELINK_INDEX: "EdgelinkIndex" };
const FLOOR_DOS = { FLOOR_CONTEXT: "FloorContext", FLOOR_ROWS: "FloorRowsContext" };
const SDK_DOS = { SDK_CONTEXT: "SdkContext" };
const PEER_DOS = { PEER_AGENT: "PeerAgent" };
/** Targets of issue 10, printed as met or not (the run fails only on wrong answers). */
const TARGET_RATIO = 0.8;
const TARGET_CPU_MS = 1.2;
const TARGET_STATEMENTS = 10;
/** Issue 27: SendMessage at least this many times the alternative's (e) throughput. */
const TARGET_VS_ALTERNATIVE = 1.1;
const TARGET_TXNS = 2;
const V1_HEADERS = { "Content-Type": "application/json", "A2A-Version": "1.0" };

/**
 * Each client keeps one context; its first (warm-up) message creates the object. The
 * floor and the SDK take a context id the client chooses.
 */
const ownContext = (client) => `bench-${RUN}-client-${client}`;
/** Every request a context nobody used: a new Durable Object and SQLite database. */
const newContext = (client, seq) => `bench-${RUN}-new-${client}-${seq}`;
/**
 * Edgelink with its defaults refuses context ids a client chooses (`clientContextIds`),
 * so a new conversation sends none and gets an issued id...
 */
const issuedContext = () => null;
/** ...and follow-ups go to the contexts `openContexts` started, one per client. */
const followUps = async (url) => {
  const ids = await openContexts(url, V1_HEADERS, CONCURRENCY, TIMEOUT_MS);
  return (client) => ids[client];
};

const SCENARIOS = [
  {
    key: "a0",
    label: "(a0) bare Hono route, no storage",
    start: () => startWorkerd("floor-worker.ts", FLOOR_DOS),
    path: "bare",
    contextFor: ownContext,
  },
  {
    key: "a",
    label: "(a)  floor: Hono + 1 DO RPC, 3 SQLite statements",
    start: () => startWorkerd("floor-worker.ts", FLOOR_DOS),
    contextFor: ownContext,
  },
  {
    key: "ar",
    label: "(ar) diagnostic: Edgelink's rows by hand",
    start: () => startWorkerd("floor-worker.ts", FLOOR_DOS),
    path: "rows",
    contextFor: ownContext,
  },
  {
    key: "b",
    label: "(b)  Edgelink, follow-ups in 16 existing contexts",
    start: () => startWorkerd("echo-worker.ts", EDGELINK_DOS),
    contexts: followUps,
  },
  {
    // A/B against another checkout (e.g. `git archive main | tar -x -C /tmp/base` with a
    // node_modules link): its echo agent under (b)'s traffic, in the same interleaved run.
    key: "bo",
    label: "(bo) Edgelink at BENCH_BASE, follow-ups",
    start: () => {
      if (!process.env.BENCH_BASE) throw new Error("scenario bo needs BENCH_BASE=<checkout>");
      return startWorkerd(join(process.env.BENCH_BASE, "bench", "echo-worker.ts"), EDGELINK_DOS);
    },
    contexts: followUps,
    optIn: true,
  },
  {
    key: "bs",
    label: "(bs) Edgelink, streamed (20 chunks), follow-ups",
    start: () => startWorkerd("echo-worker.ts", EDGELINK_DOS),
    contexts: followUps,
    streaming: true,
  },
  {
    key: "c",
    label: "(c)  Edgelink, first message of a new context",
    start: () => startWorkerd("echo-worker.ts", EDGELINK_DOS),
    contextFor: issuedContext,
  },
  {
    key: "a-new",
    label: "(a') floor, first message of a new context",
    start: () => startWorkerd("floor-worker.ts", FLOOR_DOS),
    contextFor: newContext,
  },
  {
    key: "d",
    label: "(d)  @a2a-js/sdk + Express on Node, in-memory",
    start: () => startSdkServer(),
    contextFor: ownContext,
  },
  {
    key: "e",
    label: "(e)  @a2a-js/sdk in a DO, tasks as SQLite JSON rows",
    start: () => startWorkerd("sdk-do-worker.ts", SDK_DOS),
    contextFor: ownContext,
  },
  {
    key: "p",
    label: "(p)  agents' Agent DO + @a2a-js/sdk (the peer)",
    start: () => startWorkerd("peer-worker.ts", PEER_DOS),
    contextFor: ownContext,
  },
  {
    key: "es",
    label: "(es) @a2a-js/sdk in a DO, streamed (20 chunks)",
    start: () => startWorkerd("sdk-do-worker.ts", SDK_DOS),
    contextFor: ownContext,
    streaming: true,
  },
];

const packageVersion = (name) => {
  try {
    const file = join(here, "..", "node_modules", ...name.split("/"), "package.json");
    return JSON.parse(readFileSync(file, "utf8")).version;
  } catch {
    return "?";
  }
};

// ---- statement count: what one SendMessage does to SQLite (a diagnostic) ---------------

/**
 * Sends two messages to one new context of each worker with every `sql.exec` and
 * `transactionSync` logged: the first message (a new object) and a follow-up. Every
 * answer is checked like the load's.
 */
async function countStatements() {
  const server = await startWorkerd("count-worker.ts", {
    ...EDGELINK_DOS,
    FLOOR_CONTEXT: "FloorContext",
  });
  try {
    const result = {};
    for (const [path, prefix] of [
      ["edgelink", "EDGELINK"],
      ["floor", "FLOOR"],
    ]) {
      // Edgelink issues the context id (its first message names none); the floor takes ours.
      let contextId = path === "edgelink" ? null : `count-${RUN}`;
      const requests = [];
      for (let i = 0; i < 2; i++) {
        const response = await fetch(server.url + path, {
          method: "POST",
          headers: V1_HEADERS,
          body: sendMessageBody(i, contextId, "count"),
        });
        const text = await response.text();
        const problem = checkResponse(response.status, text, contextId, "echo: count");
        if (problem) throw new Error(`statement count: ${path} SendMessage failed: ${problem}`);
        contextId ??= JSON.parse(text).result.task.contextId;
        const log = async (ns, which) => {
          const url = `${server.url}log?ns=${prefix}_${ns}&${which}`;
          return (await fetch(url)).json();
        };
        requests.push({
          context: await log("CONTEXT", `name=${encodeURIComponent(`/${contextId}`)}`),
          // The conversation's index shard (src/storage/ids.ts, `indexShardOf`).
          index:
            prefix === "EDGELINK"
              ? await log("INDEX", `indexOf=${encodeURIComponent(contextId)}`)
              : [],
        });
      }
      if (requests.some((r) => r.context.length === 0)) {
        throw new Error(
          `statement count: no SQL log for ${path}'s objects; did the Durable Object naming in src/storage/ids.ts change?`,
        );
      }
      result[path] = { first: requests[0], followUp: requests[1] };
    }
    return result;
  } finally {
    await server.stop();
  }
}

const isTxn = (s) => s === "<transactionSync>";
const describeLog = ({ context, index }) => {
  const statements = context.filter((s) => !isTxn(s));
  const writes = statements.filter((s) => !/^SELECT/i.test(s)).length;
  return {
    statements: statements.length,
    writes,
    reads: statements.length - writes,
    txns: context.filter(isTxn).length,
    indexStatements: index.filter((s) => !isTxn(s)).length,
    ddl: statements.filter((q) => /^CREATE /i.test(q)).length,
  };
};

// ---- output ---------------------------------------------------------------------------

const HANG = " ".repeat(30);

/** Prints `text` wrapped to the terminal's usual width. */
function say(text, first = "  ", rest = first) {
  const width = 100;
  const words = text.split(" ");
  let line = first;
  let prefix = first;
  for (const word of words) {
    if (line.length + word.length + 1 > width && line.trim()) {
      console.log(line.trimEnd());
      prefix = rest;
      line = prefix;
    }
    line += (line === prefix ? "" : " ") + word;
  }
  if (line.trim()) console.log(line.trimEnd());
}

const fmt = (n, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : "-");
const pad = (s, n) => String(s).padEnd(n);
const lpad = (s, n) => String(s).padStart(n);

function printTable(rows) {
  const cols = [
    ["scenario", 49, (x) => x.scenario.label, pad],
    ["rps", 7, (x) => fmt(x.r.rps, 0)],
    ["slices", 12, (x) => `${fmt(x.r.sliceRpsMin, 0)}-${fmt(x.r.sliceRpsMax, 0)}`],
    ["p50 ms", 8, (x) => fmt(x.r.p50)],
    ["p99 ms", 8, (x) => fmt(x.r.p99)],
    ["requests", 9, (x) => x.r.requests],
    ["errors", 7, (x) => x.r.errors.measured + x.r.errors.unmeasured],
    ["server CPU", 11, (x) => `${fmt(x.r.serverCpuPct, 0)}%`],
    ["CPU ms/req", 11, (x) => fmt(x.r.serverCpuMsPerRequest, 2)],
    ["client CPU", 11, (x) => `${fmt(x.r.clientCpuPct, 0)}%`],
    ["other CPU", 10, (x) => `${fmt(x.r.otherCpuPct, 0)}%`],
  ];
  const line = (cells) => cells.map((c, i) => (cols[i][3] ?? lpad)(c, cols[i][1])).join("");
  const head = line(cols.map((c) => c[0]));
  console.log(head);
  console.log("-".repeat(head.length));
  for (const row of rows) console.log(line(cols.map((c) => c[2](row))));
}

async function main() {
  const wanted = (ONLY === "peer" ? PEER_KEYS.join(",") : (process.env.BENCH_SCENARIOS ?? ""))
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  const keys = [
    ...SCENARIOS.map((s) => s.key),
    "index",
    "history",
    "window",
    "push",
    "stream",
    "memory",
    "memory-turn",
  ];
  const unknown = wanted.filter((key) => !keys.includes(key));
  if (unknown.length) {
    throw new Error(`BENCH_SCENARIOS: unknown ${unknown.join(", ")}; known: ${keys.join(", ")}`);
  }
  const scenarios = wanted.length
    ? SCENARIOS.filter((s) => wanted.includes(s.key))
    : SCENARIOS.filter((s) => !s.optIn);
  const index = wanted.length === 0 || wanted.includes("index");
  const history = wanted.length === 0 || wanted.includes("history");
  const window = wanted.length === 0 || wanted.includes("window");
  const push = wanted.length === 0 || wanted.includes("push");
  const stream = wanted.length === 0 || wanted.includes("stream");
  const memory = wanted.length === 0 || wanted.includes("memory");
  const memoryTurn = wanted.length === 0 || wanted.includes("memory-turn");

  const cpu = cpus();
  console.log("Edgelink benchmark");
  console.log(`  date      ${new Date().toISOString()}`);
  console.log(
    `  machine   ${cpu.length} cores (${cpu[0]?.model ?? "?"}), ${(totalmem() / 2 ** 30).toFixed(1)} GiB RAM, ${process.platform} ${release()}`,
  );
  console.log(
    `  software  Node ${process.version}, workerd via miniflare ${packageVersion("miniflare")}, hono ${packageVersion("hono")}, @a2a-js/sdk ${packageVersion("@a2a-js/sdk")}, express ${packageVersion("express")}, agents ${packageVersion("agents")}`,
  );
  if (scenarios.length) {
    try {
      await sendMessageBench(scenarios, cpu);
    } catch (error) {
      console.error("\nSendMessage benchmark failed:", error);
      process.exitCode = 1;
    }
  }
  if (index) {
    try {
      // A row missing from the index (or a failed call) fails the run.
      if (!(await runIndexBench())) process.exitCode = 1;
    } catch (error) {
      console.error("\nindex benchmark failed:", error);
      process.exitCode = 1;
    }
  }
  if (history) {
    try {
      // Unmet targets are printed (as for (b)/(a)); only a failure to measure fails the run.
      await runHistoryBench();
    } catch (error) {
      console.error("\nhistory benchmark failed:", error);
      process.exitCode = 1;
    }
  }
  if (window) {
    try {
      // Unmet targets are printed; only a failure to measure fails the run.
      await runWindowBench();
    } catch (error) {
      console.error("\nwindow benchmark failed:", error);
      process.exitCode = 1;
    }
  }
  if (push) {
    try {
      // Missing, duplicated or out-of-order deliveries fail the run (printed loudly).
      if (!(await runPushBench())) process.exitCode = 1;
    } catch (error) {
      console.error("\npush benchmark failed:", error);
      process.exitCode = 1;
    }
  }
  if (stream) {
    try {
      // Unmet targets are printed; a wrong stream output (or a failure to measure) fails the run.
      if (!(await runStreamBench())) process.exitCode = 1;
    } catch (error) {
      console.error("\nstream benchmark failed:", error);
      process.exitCode = 1;
    }
  }
  if (memory) {
    try {
      // Unmet targets are printed; only a failure to measure fails the run.
      await runMemoryBench();
    } catch (error) {
      console.error("\nmemory benchmark failed:", error);
      process.exitCode = 1;
    }
  }
  if (memoryTurn) {
    try {
      // Unmet targets are printed; a wrong answer (the model's request without the
      // recalled memory, or with it where there is none) or a failure to measure fails the run.
      await runMemoryTurnBench();
    } catch (error) {
      console.error("\nmemory-turn benchmark failed:", error);
      process.exitCode = 1;
    }
  }
}

/** Scenarios a-e: SendMessage throughput, interleaved. */
async function sendMessageBench(scenarios, cpu) {
  console.log("\nSendMessage throughput");
  console.log(
    `  load      ${CONCURRENCY} concurrent clients (closed loop, keep-alive fetch); per scenario ${WARMUP} s warm-up + ${SECONDS} s measured, in ${ROUNDS} interleaved slices; one scenario loaded at a time`,
  );
  console.log("  request   JSON-RPC SendMessage (v1, A2A-Version: 1.0), blocking, one text part\n");

  let firstCall = null;
  let perMessage = null;
  let countFailed = false;
  if (scenarios.some((s) => s.key !== "d")) {
    try {
      const counts = await countStatements();
      const e = describeLog(counts.edgelink.followUp);
      const ef = describeLog(counts.edgelink.first);
      const f = describeLog(counts.floor.followUp);
      perMessage = e;
      firstCall = { extra: ef.statements - e.statements, ddl: ef.ddl };
      const met = e.statements <= TARGET_STATEMENTS && e.txns <= TARGET_TXNS;
      console.log("SQLite work of one SendMessage (counted by logging every sql.exec at run time)");
      say(
        `Edgelink, existing context: ${e.statements} statements per message in the context object (${e.writes} writes, ${e.reads} reads) in ${e.txns} transactionSync (target <= ${TARGET_STATEMENTS} in <= ${TARGET_TXNS}: ${met ? "met" : "NOT MET"}), and ${e.indexStatements} statements in the index object during the message (read-your-writes: a quiet conversation's new task goes to the index with its answer; a second one within limits.indexFlushMs marks the conversation in the index, after which answers make no index call and the window's rows go in one call)`,
        "  ",
        HANG,
      );
      say(
        `Edgelink, new context:      ${ef.statements} statements in ${ef.txns} transactionSync (the above, and the new database's schema, ${ef.ddl} CREATE TABLE/INDEX), index object ${ef.indexStatements} during the message`,
        "  ",
        HANG,
      );
      say(
        `floor (a):                  ${f.statements} statements, ${f.txns} transactionSync, no index object`,
        "  ",
        HANG,
      );
      if (process.env.BENCH_SQL) {
        console.log("  Edgelink follow-up, statement by statement:");
        for (const q of counts.edgelink.followUp.context) console.log(`    ${q.slice(0, 150)}`);
        for (const q of counts.edgelink.followUp.index)
          console.log(`    index: ${q.slice(0, 143)}`);
      }
      console.log("");
    } catch (error) {
      console.log(`!!! Could not count the statements: ${error.message}\n`);
      countFailed = true;
    }
  }
  // Pages per message of (b) and (e), and with the peer (p) in the run, of (a) and (p) too.
  const withPeer = scenarios.some((s) => s.key === "p");
  const walKeys = scenarios
    .map((s) => s.key)
    .filter((key) => key === "b" || key === "e" || (withPeer && key in PEER_WAL_KINDS));
  let pagesByKey = null;
  if (walKeys.length) {
    try {
      const pages = await measureWalPages(
        40,
        walKeys.map((key) => PEER_WAL_KINDS[key]),
      );
      pagesByKey = Object.fromEntries(walKeys.map((key) => [key, pages[PEER_WAL_KINDS[key]]]));
      const names = {
        a: "the floor (a)",
        e: "the alternative (e)",
        p: "the peer (p)",
        b: "Edgelink (b)",
      };
      say(
        `SQLite pages written per SendMessage (WAL frames, one client, 40 messages into a warm conversation; independent of the machine's load): ${walKeys.map((key) => `${names[key]} ${fmt(pagesByKey[key], 1)}`).join(", ")}. A commit's cost grows with its pages (bench/wal-pages.mjs).`,
        "",
        "  ",
      );
      console.log("");
      // With the peer in the run: a new conversation's first message too (its schema).
      if (withPeer) {
        const fresh = await measureWalPages(
          10,
          walKeys.map((key) => PEER_WAL_KINDS[key]),
          true,
        );
        say(
          `SQLite pages written by the first SendMessage of a new conversation (WAL frames, 10 messages, each without a conversation; its object's schema included): ${walKeys.map((key) => `${names[key]} ${fmt(fresh[PEER_WAL_KINDS[key]], 1)}`).join(", ")}. Instructions: node bench/wire-instructions.mjs 10 floor,peer,edgelink fresh.`,
          "",
          "  ",
        );
        console.log("");
      }
    } catch (error) {
      console.log(`!!! Could not measure the pages written: ${error.message}\n`);
      countFailed = true;
    }
  }

  // Instructions per message of the same four, with the peer in the run (each server under
  // callgrind, one after the other, before any load: load-independent).
  let instructionsByKey = null;
  if (withPeer && process.env.BENCH_INSTRUCTIONS !== "0") {
    if (!valgrindAvailable()) {
      console.log("Instructions per message: skipped, valgrind is not installed.\n");
    } else {
      const keys = PEER_KEYS.filter((key) => scenarios.some((s) => s.key === key));
      process.stdout.write(
        "Instructions per SendMessage under callgrind (a minute per server to start)...",
      );
      try {
        const counted = await measureWireInstructions(
          30,
          keys.map((key) => PEER_WAL_KINDS[key]),
        );
        instructionsByKey = Object.fromEntries(
          keys.map((key) => [key, counted[PEER_WAL_KINDS[key]]]),
        );
        console.log(
          ` ${keys.map((key) => `(${key}) ${fmt(instructionsByKey[key] / 1e6, 3)} M`).join(", ")}\n`,
        );
      } catch (error) {
        console.log(`\n!!! Could not count the instructions: ${error.message}\n`);
        countFailed = true;
      }
    }
  }

  // All servers up front (idle ones use no CPU), then the load in interleaved slices, so
  // background load on a shared machine spreads over all scenarios instead of hitting one.
  const live = [];
  const serverOutput = new Map();
  try {
    for (const scenario of scenarios) {
      const server = await scenario.start();
      const url = server.url + (scenario.path ?? "");
      live.push({ scenario, server, load: null });
      const load = createLoad({
        url,
        headers: V1_HEADERS,
        contextFor: scenario.contexts ? await scenario.contexts(url) : scenario.contextFor,
        concurrency: scenario.streaming ? STREAM_CONCURRENCY : CONCURRENCY,
        maxRequests: MAX_REQUESTS,
        timeoutMs: TIMEOUT_MS,
        serverPid: server.pid,
        streaming: scenario.streaming ?? false,
      });
      live.at(-1).load = load;
    }
    // Load order: the new-context scenarios write many new files and leave the disk busy
    // for a moment, so they run next to each other and never right before (a) or (b).
    const rank = {
      a0: 0,
      a: 1,
      ar: 1.5,
      b: 2,
      bo: 2,
      e: 3,
      p: 3.1,
      bs: 3.3,
      es: 3.6,
      d: 4,
      c: 5,
      "a-new": 6,
    };
    const order = [...live].sort((x, y) => rank[x.scenario.key] - rank[y.scenario.key]);
    process.stdout.write("warming up");
    for (const { scenario, load } of order) {
      process.stdout.write(` ${scenario.key}`);
      await load.slice(WARMUP * 1000, false);
    }
    process.stdout.write(`; measuring ${ROUNDS} rounds`);
    for (let round = 1; round <= ROUNDS; round++) {
      // Alternate the direction (… c a' then a' c …) so a steady drift favours no one.
      const thisRound = round % 2 ? [...order].reverse() : order;
      for (const { load } of thisRound) await load.slice((SECONDS * 1000) / ROUNDS, true);
      process.stdout.write(".");
    }
    process.stdout.write("\n");
  } finally {
    for (const { scenario, server } of live) {
      if (server.output) serverOutput.set(scenario.key, server.output());
      await server.stop();
    }
  }
  const rows = live.map(({ scenario, load }) => ({ scenario, r: load.result() }));

  console.log("");
  printTable(rows);
  const by = Object.fromEntries(rows.map(({ scenario, r }) => [scenario.key, r]));
  const ratio = (x, y) => (by[x] && by[y] ? by[x].rps / by[y].rps : NaN);

  console.log("\nRatios");
  if (by.b && by.a) {
    const v = ratio("b", "a");
    const cpu = by.b.serverCpuMsPerRequest;
    say(
      `(b)/(a)  Edgelink vs the minimal durable floor: ${fmt(v, 2)} (target >= ${fmt(TARGET_RATIO, 2)}: ${v >= TARGET_RATIO ? "met" : "NOT MET"}). Per request Edgelink uses ${fmt(cpu, 2)} ms of workerd CPU (target <= ${fmt(TARGET_CPU_MS, 1)}: ${cpu <= TARGET_CPU_MS ? "met" : "NOT MET"}), the floor ${fmt(by.a.serverCpuMsPerRequest, 2)} ms: ${fmt(cpu / by.a.serverCpuMsPerRequest, 2)}× the floor's CPU${by.a.serverCpuMsPerRequest >= TARGET_CPU_MS ? ` (the floor alone costs more than ${fmt(TARGET_CPU_MS, 1)} ms here, so the absolute target cannot be met on this machine in this run; the ratio is the figure to read)` : ""}${perMessage ? `; Edgelink writes ${perMessage.statements} statements per message (floor 3); a busy conversation sends the tenant index its rows in one call per limits.indexFlushMs` : ""}.`,
      "  ",
      "           ",
    );
  }
  if (by.a && by.a0) {
    say(
      `(a)/(a0) the floor's Durable Object call and 3 statements vs the route alone: ${fmt(ratio("a", "a0"), 2)} (${fmt(by.a.serverCpuMsPerRequest - by.a0.serverCpuMsPerRequest, 2)} ms CPU per request for the object)`,
    );
  }
  if (by.c && by.a) say(`(c)/(a)  Edgelink on new contexts vs floor: ${fmt(ratio("c", "a"), 2)}`);
  if (by.c && by["a-new"]) {
    say(`(c)/(a') the same, against the floor on new contexts: ${fmt(ratio("c", "a-new"), 2)}`);
  }
  if (by.b && by.d) say(`(b)/(d)  Edgelink vs @a2a-js/sdk: ${fmt(ratio("b", "d"), 2)}`);
  if (by.e && by.a) {
    say(
      `(e)/(a)  the on-platform alternative (@a2a-js/sdk in a Durable Object, each task one JSON row) vs the floor: ${fmt(ratio("e", "a"), 2)} (${fmt(by.e.serverCpuMsPerRequest, 2)} ms workerd CPU per request)`,
    );
  }
  if (by.b && by.e) {
    const v = ratio("b", "e");
    const cpuB = by.b.serverCpuMsPerRequest;
    const cpuE = by.e.serverCpuMsPerRequest;
    say(
      `(b)/(e)  Edgelink vs that alternative: ${fmt(v, 2)} (target >= ${fmt(TARGET_VS_ALTERNATIVE, 2)}: ${v >= TARGET_VS_ALTERNATIVE ? "met" : "NOT MET"}); workerd CPU per message ${fmt(cpuB, 2)} vs ${fmt(cpuE, 2)} ms (target below (e)'s: ${cpuB < cpuE ? "met" : "NOT MET"}). Edgelink also keeps the conversation history, the event log and the tenant index.`,
    );
  }
  if (by.ar && by.e) {
    say(
      `(ar)/(e) Edgelink's rows written by hand (a diagnostic, not a floor) vs the alternative: ${fmt(ratio("ar", "e"), 2)} (${fmt(by.ar.serverCpuMsPerRequest, 2)} vs ${fmt(by.e.serverCpuMsPerRequest, 2)} ms workerd CPU per message): what Edgelink's rows cost with no code around them.`,
    );
  }
  if (by.b && by.ar) {
    say(
      `(b)/(ar) Edgelink vs its own rows written by hand: ${fmt(ratio("b", "ar"), 2)} (${fmt(by.b.serverCpuMsPerRequest - by.ar.serverCpuMsPerRequest, 2)} ms workerd CPU per message more): what Edgelink's code costs beyond its rows (validation, ids, the models, the answer, the tenant index).`,
    );
  }

  if (by.bs && by.es) {
    say(
      `(bs)/(es) Edgelink vs that alternative, SendStreamingMessage with ${STREAM_CHUNKS} chunks: ${fmt(ratio("bs", "es"), 2)}; workerd CPU per stream ${fmt(by.bs.serverCpuMsPerRequest, 2)} vs ${fmt(by.es.serverCpuMsPerRequest, 2)} ms (Edgelink writes each chunk to the artifact and the event log as it streams; the alternative rewrites the task's JSON row at each event)`,
    );
  }

  printPeerComparison(
    peerFigures(by, pagesByKey, instructionsByKey),
    Object.fromEntries(rows.map(({ scenario }) => [scenario.key, scenario.label])),
    say,
  );

  if (by.c && by.b) {
    const extra = by.c.serverCpuMsPerRequest - by.b.serverCpuMsPerRequest;
    console.log("\nWhy (c) differs from (b)");
    say(
      `A first message has no Durable Object yet. workerd creates the object and a new SQLite database for it on disk (database file, WAL and shared-memory file); before the task's own statements the object builds its baseline schema (${firstCall ? `${firstCall.extra} more statements, ${firstCall.ddl} of them CREATE TABLE/INDEX` : "see above"}), and its first commits write every page of the fresh schema. Here that is ${fmt(extra, 2)} ms more workerd CPU per request (${fmt(by.c.serverCpuMsPerRequest, 2)} vs ${fmt(by.b.serverCpuMsPerRequest, 2)} ms) plus file-system waits.`,
    );
    if (by.a && by["a-new"]) {
      const floorExtra = by["a-new"].serverCpuMsPerRequest - by.a.serverCpuMsPerRequest;
      const share = Math.max(0, Math.min(1, floorExtra / extra));
      say(
        `The floor pays it too: (a') costs ${fmt(floorExtra, 2)} ms more CPU per request than (a), and (c) reaches ${fmt(ratio("c", "a-new"), 2)} of (a'). So ${fmt(share * 100, 0)}% of the extra cost of a first message is the platform creating the object and its database${share >= 0.8 ? ", not Edgelink" : "; the rest is Edgelink's own first-call work"}.`,
      );
    }
    say(
      "In production a new object also has to be placed (possibly in another location than the Worker), so a conversation's first message stays the expensive one; follow-ups reuse the warm object.",
    );
  }

  console.log("\nWhat limits these figures");
  for (const line of [
    "Local workerd is not production: one workerd process on this machine runs the Worker and all Durable Objects on one thread; SQLite commits go to the local disk, not to Cloudflare's replicated storage; there is no network between Worker and objects. Absolute figures say little about production; the ratios compare the same work on equal terms.",
    "Requests go to a Miniflare direct socket into the worker (no wrangler dev proxy, no Miniflare entry worker), which is closer to production than mf.ready's URL.",
    `One ${cpu.length}-core machine runs the load generator and the server under test, so they compete for CPU (CPU columns: 100% = one core; 'other CPU' is everything else running on the machine meanwhile).`,
    "What each side keeps durable: the SDK (d) nothing (InMemoryTaskStore, on Node); the floor (a) one task row; the alternative (e) one JSON row per task, rewritten at each of its events; the peer (p) the same, with the `agents` Agent's own tables beside it; Edgelink (b, c) the task, its message in the conversation history, its artifact and its event log, and its row in the tenant's index object.",
    "Closed-loop clients: throughput = concurrency / latency, and latency includes the client's own fetch and JSON work.",
  ]) {
    say(line, "  - ", "    ");
  }
  const noisy = rows.filter(({ r }) => r.otherCpuPct > NOISY_CPU_PCT);
  if (noisy.length) {
    console.log("");
    say(
      `!!! Other processes used more than ${NOISY_CPU_PCT}% of a core during ${noisy.map(({ scenario }) => scenario.key).join(", ")}: the machine was not quiet, so these figures are noisy. Rerun when it is idle.`,
      "",
      "    ",
    );
  }

  const failed = rows.filter(({ r }) => r.errors.measured + r.errors.unmeasured > 0);
  if (countFailed) process.exitCode = 1;
  if (failed.length) {
    console.log(`\n${"!".repeat(78)}`);
    console.log("!!! ERRORS: some requests failed; figures of these scenarios are not valid:");
    for (const { scenario, r } of failed) {
      console.log(
        `!!!   ${scenario.label.trim()}: ${r.errors.measured} errors in measured windows + ${r.errors.unmeasured} in warm-up or straddling a window`,
      );
      for (const sample of r.errors.samples) console.log(`!!!     e.g. ${sample}`);
      const said = serverOutput.get(scenario.key);
      if (said)
        console.log(
          `!!!     server output: ${said.slice(0, 600).replaceAll("\n", "\n!!!       ")}`,
        );
    }
    console.log("!".repeat(78));
    process.exitCode = 1;
  } else {
    console.log(
      `\nAll ${rows.reduce((n, { r }) => n + r.totalSent, 0)} responses checked: HTTP 200, completed task, echoed artifact. No errors.`,
    );
  }
  if (rows.some(({ r }) => r.cappedByCount)) {
    console.log(`(note: a scenario hit BENCH_MAX_REQUESTS=${MAX_REQUESTS} and stopped early)`);
  }
}

const interrupt = () => {
  cleanupTempDirs();
  cleanupHistoryTemp();
  cleanupWindowTemp();
  cleanupStreamTemp();
  process.exit(130);
};
process.on("SIGINT", interrupt);
process.on("SIGTERM", interrupt);

try {
  await main();
} catch (error) {
  console.error("\nbenchmark failed:", error);
  process.exitCode = 1;
} finally {
  cleanupTempDirs();
  cleanupHistoryTemp();
  cleanupWindowTemp();
  cleanupStreamTemp();
}
