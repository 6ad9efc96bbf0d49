/**
 * Where the time goes: runs one workerd scenario under the benchmark's load and takes a
 * V8 CPU profile of the worker's isolate (Worker and Durable Objects share it locally)
 * through the inspector. Prints self time per source module and per function, in ms per
 * request, and writes the .cpuprofile (open it in Chrome DevTools > Performance).
 *
 *   node bench/profile.mjs [edgelink|floor|rows|sdk] [seconds]
 *   node bench/profile.mjs edgelink-stream [seconds]
 *   node bench/profile.mjs stream [seconds] [input]
 *   node bench/profile.mjs store [seconds]
 *   node bench/profile.mjs memory-turn [seconds]
 *   node bench/profile.mjs loop [seconds]
 *
 * `edgelink-stream` profiles the echo agent's streamed answer of 20 artifact chunks under
 * the (bs) scenario's load (4 clients, follow-ups in issued contexts); "per request" is
 * per stream.
 *
 * `stream` profiles the streaming bench's agent (bench/stream-worker.ts, pipeline (2)):
 * SendStreamingMessage turns replaying `input` ("recorded", the default, or
 * "synthetic:N"), each in a context prepared before the profile starts, run back to back
 * by the worker itself; "per request" then means per streamed turn.
 *
 * `store` profiles Edgelink's TaskStore alone writing one echo message per call (bench/
 * sql-cost-worker.ts, kind `store`), 8 calls at a time over 16 objects.
 *
 * `memory-turn` profiles the memory-turn bench's agent (bench/memory-turn-worker.ts):
 * blocking turns back to back, with memory on (recall and extraction), with recall alone,
 * then without memory, each profiled alone, so the summaries' differences are what memory
 * costs. Its
 * summaries add the isolate's idle time per turn (waits: storage, the other object).
 *
 * Profiling slows the isolate down, so compare shares and modules, not absolute rps.
 */
import { copyFileSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLoad, openContexts, processCpuSeconds } from "./load.mjs";
import { fillMemory, memoryTurn, startMemoryTurnServer } from "./memory-turn.mjs";
import { agentBindings, benchRun, cleanupTempDirs, startWorkerd } from "./servers.mjs";

const target = process.argv[2] ?? "edgelink";
const seconds = Number(process.argv[3] ?? 5);
const INSPECTOR_PORT = 9329;
const entries = {
  edgelink: [
    "echo-worker.ts",
    { EDGELINK_CONTEXT: "EdgelinkContext", EDGELINK_INDEX: "EdgelinkIndex" },
  ],
  "edgelink-stream": [
    "echo-worker.ts",
    { EDGELINK_CONTEXT: "EdgelinkContext", EDGELINK_INDEX: "EdgelinkIndex" },
  ],
  floor: ["floor-worker.ts", { FLOOR_CONTEXT: "FloorContext", FLOOR_ROWS: "FloorRowsContext" }],
  rows: ["floor-worker.ts", { FLOOR_CONTEXT: "FloorContext", FLOOR_ROWS: "FloorRowsContext" }],
  sdk: ["sdk-do-worker.ts", { SDK_CONTEXT: "SdkContext" }],
  store: ["sql-cost-worker.ts", { SQL_COST: "SqlCost" }],
  stream: [
    "stream-worker.ts",
    { EDGELINK_CONTEXT: "EdgelinkContext", EDGELINK_INDEX: "EdgelinkIndex" },
  ],
  "memory-turn": ["memory-turn-worker.ts", {}],
  loop: [
    "loop-worker.ts",
    { EDGELINK_CONTEXT: "EdgelinkContext", EDGELINK_INDEX: "EdgelinkIndex" },
  ],
};
const streamInput = process.argv[4] ?? "recorded";
if (!entries[target] || !(seconds > 0 && seconds <= 60)) {
  console.error(
    "usage: node bench/profile.mjs [edgelink|edgelink-stream|floor|rows|sdk|store|memory-turn] [seconds (1-60)]\n       node bench/profile.mjs stream [seconds (1-60)] [recorded|synthetic:N]",
  );
  process.exit(2);
}

/** A tiny Chrome DevTools Protocol client over the inspector's WebSocket. */
async function connect(url) {
  const ws = new WebSocket(url);
  await new Promise((resolve, reject) => {
    ws.addEventListener("open", resolve, { once: true });
    ws.addEventListener("error", reject, { once: true });
  });
  let id = 0;
  const pending = new Map();
  ws.addEventListener("message", (event) => {
    const message = JSON.parse(event.data);
    pending.get(message.id)?.(message);
    pending.delete(message.id);
  });
  const call = (method, params = {}) =>
    new Promise((resolve) => {
      pending.set(++id, resolve);
      ws.send(JSON.stringify({ id, method, params }));
    });
  return { call, close: () => ws.close() };
}

/** Maps a frame in the (unminified) bundle to the source module esbuild put there. */
function moduleMapper(bundlePath) {
  const marks = [];
  readFileSync(bundlePath, "utf8")
    .split("\n")
    .forEach((line, i) => {
      const m = /^\/\/ ((?:\.\.\/)*(?:node_modules|src|bench)\/\S+)$/.exec(line);
      if (m) marks.push([i, m[1].replace(/^(\.\.\/)+/, "")]);
    });
  // Frames of workerd's own modules (node-internal:…) are not lines of the bundle.
  return ({ url, lineNumber: line }) => {
    if (url !== "worker.mjs") return url;
    let found = "?";
    for (const [start, name] of marks) {
      if (start > line) break;
      found = name;
    }
    return found.replace(/^node_modules\/(@[^/]+\/[^/]+|[^/]+)\/.*/, "$1 (package)");
  };
}

function summarize(profile, moduleOf, requests) {
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const time = new Map();
  profile.samples.forEach((id, i) => {
    time.set(id, (time.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });
  const byModule = new Map();
  const byFunction = new Map();
  let busy = 0;
  let idle = 0;
  const add = (map, key, t) => map.set(key, (map.get(key) ?? 0) + t);
  for (const [id, t] of time) {
    const frame = nodes.get(id).callFrame;
    if (frame.functionName === "(idle)") {
      idle += t;
      continue;
    }
    busy += t;
    let where;
    if (frame.url) where = moduleOf(frame);
    else {
      // Native code: charge it to the nearest JavaScript caller's module.
      let up = parent.get(id);
      while (up !== undefined && !nodes.get(up).callFrame.url) up = parent.get(up);
      const caller = up === undefined ? "" : ` <- ${moduleOf(nodes.get(up).callFrame)}`;
      where = `native ${frame.functionName || "(anonymous)"}${caller}`;
    }
    add(byModule, where, t);
    add(
      byFunction,
      `${frame.functionName || "(anonymous)"}  ${frame.url ? moduleOf(frame) : "native"}`,
      t,
    );
  }
  const ms = (t) => (t / 1000 / requests).toFixed(3);
  const print = (title, map, n) => {
    console.log(`\n${title}`);
    for (const [k, t] of [...map].sort((x, y) => y[1] - x[1]).slice(0, n)) {
      console.log(
        `${`${((t / busy) * 100).toFixed(1)}%`.padStart(7)} ${ms(t).padStart(7)} ms/req  ${k}`,
      );
    }
  };
  console.log(
    `\nbusy (non-idle) isolate time: ${ms(busy)} ms per request over ${requests} requests; idle ${ms(idle)} ms`,
  );
  print("self time by source module (native calls charged to their caller's module)", byModule, 25);
  print("self time by function", byFunction, 30);
  // Inclusive time: each sample charged once to every distinct function on its stack.
  const inclusive = new Map();
  for (const [id, t] of time) {
    if (nodes.get(id).callFrame.functionName === "(idle)") continue;
    const seen = new Set();
    for (let up = id; up !== undefined; up = parent.get(up)) {
      const frame = nodes.get(up).callFrame;
      if (!frame.url) continue;
      seen.add(`${frame.functionName || "(anonymous)"}  ${moduleOf(frame)}`);
    }
    for (const key of seen) add(inclusive, key, t);
  }
  print(
    "total time by function (itself and what it calls)",
    inclusive,
    Number(process.env.PROFILE_TOTALS ?? 40),
  );
}

const [entry, durableObjects] = entries[target];

/** Starts the V8 profiler on the worker's isolate; returns a function that stops it. */
async function startProfiler() {
  const targets = await (await fetch(`http://127.0.0.1:${INSPECTOR_PORT}/json`)).json();
  const user = targets.find((t) => t.webSocketDebuggerUrl?.endsWith("/core:user:"));
  if (!user)
    throw new Error(`no user worker among inspector targets: ${targets.map((t) => t.title)}`);
  const cdp = await connect(user.webSocketDebuggerUrl);
  await cdp.call("Profiler.enable");
  await cdp.call("Profiler.setSamplingInterval", { interval: 100 });
  await cdp.call("Profiler.start");
  return async () => {
    const { result } = await cdp.call("Profiler.stop");
    cdp.close();
    return result.profile;
  };
}

function save(profile, server, requests) {
  const out = join(tmpdir(), `edgelink-bench-${target}-${Date.now()}.cpuprofile`);
  writeFileSync(out, JSON.stringify(profile));
  copyFileSync(server.scriptPath, out.replace(/\.cpuprofile$/, ".bundle.mjs"));
  summarize(profile, moduleMapper(server.scriptPath), requests);
  console.log(`\nprofile: ${out}\nbundle:  ${out.replace(/\.cpuprofile$/, ".bundle.mjs")}`);
}

/** Profiles the stream worker's agent: streamed turns, each in its own prepared context. */
async function profileStream(server) {
  const call = (body) => benchRun(server, body);
  const prepare = async (count) =>
    (await call({ side: "prepare", input: streamInput, count })).contexts;
  const turns = async (contexts, check = false) =>
    call({ side: "agent", input: streamInput, contexts, check });
  // Warm up (and check the answer once), then time how many turns fit in `seconds`.
  const checked = await turns(await prepare(1), true);
  if (!checked.info.check?.textMatches || checked.info.check.finalState !== "TASK_STATE_COMPLETED")
    throw new Error(`wrong agent answer: ${JSON.stringify(checked.info.check)}`);
  const warm = await prepare(200);
  const t0 = performance.now();
  await turns(warm);
  const perTurnMs = (performance.now() - t0) / warm.length;
  const count = Math.max(20, Math.min(20_000, Math.round((seconds * 1000) / perTurnMs)));
  const contexts = await prepare(count);
  const stop = await startProfiler();
  const cpu0 = processCpuSeconds(server.pid);
  const w0 = performance.now();
  await turns(contexts);
  const wall = performance.now() - w0;
  const cpu = processCpuSeconds(server.pid) - cpu0;
  const profile = await stop();
  console.log(
    `stream (${streamInput}): ${count} turns in ${(wall / 1000).toFixed(1)} s while profiled, ${((cpu * 1000) / count).toFixed(2)} ms workerd CPU per turn`,
  );
  save(profile, server, count);
}

/** Profiles the TaskStore's writes of one echo message per call (see bench/sql-cost.mjs). */
async function profileStore(server) {
  let calls = 0;
  const drive = async (ms) => {
    const end = performance.now() + ms;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (performance.now() < end) {
          const response = await fetch(`${server.url}?kind=store&context=s-${calls++ % 16}`);
          const text = await response.text();
          if (!response.ok) throw new Error(`store: HTTP ${response.status}: ${text}`);
        }
      }),
    );
  };
  await drive(2000);
  calls = 0;
  const stop = await startProfiler();
  const cpu0 = processCpuSeconds(server.pid);
  await drive(seconds * 1000);
  const cpu = processCpuSeconds(server.pid) - cpu0;
  const profile = await stop();
  console.log(
    `store: ${calls} calls while profiled, ${((cpu * 1000) / calls).toFixed(2)} ms workerd CPU per call`,
  );
  save(profile, server, calls);
}

/**
 * Profiles SendMessage under the benchmark's load (16 clients), or, for `edgelink-stream`,
 * SendStreamingMessage under the (bs) scenario's (4 clients).
 */
async function profileLoad(server) {
  const headers = { "Content-Type": "application/json", "A2A-Version": "1.0" };
  const streaming = target === "edgelink-stream";
  const concurrency = streaming ? 4 : 16;
  // Edgelink refuses client-chosen context ids by default: follow up in issued ones.
  const ids = target.startsWith("edgelink")
    ? await openContexts(server.url, headers, concurrency, 10_000)
    : null;
  const load = createLoad({
    url: server.url + (target === "rows" ? "rows" : ""),
    headers,
    contextFor: (client) => (ids ? ids[client] : `profile-${client}`),
    concurrency,
    streaming,
    maxRequests: 1_000_000,
    timeoutMs: 10_000,
    serverPid: server.pid,
  });
  await load.slice(2000, false);
  const stop = await startProfiler();
  await load.slice(seconds * 1000, true);
  const profile = await stop();
  const r = load.result();
  console.log(
    `${target}: ${r.rps.toFixed(0)} rps while profiled, ${r.serverCpuMsPerRequest.toFixed(2)} ms workerd CPU per request, ${r.errors.measured + r.errors.unmeasured} errors`,
  );
  save(profile, server, r.requests);
}

/**
 * Profiles blocking SendMessage one at a time into one warm conversation, sent by the
 * isolate itself (bench/loop-worker.ts, as bench/loop.mjs measures it): no load generator.
 */
async function profileLoop(server) {
  const headers = { "Content-Type": "application/json", "A2A-Version": "1.0" };
  const [contextId] = await openContexts(server.url, headers, 1, 10_000);
  const loop = async (count) => {
    const response = await fetch(`${server.url}bench/loop`, {
      method: "POST",
      body: JSON.stringify({ contextId, count }),
    });
    const { completed } = await response.json();
    if (completed !== count) throw new Error(`loop: ${completed} of ${count} completed`);
  };
  await loop(300);
  const t0 = performance.now();
  await loop(300);
  const count = Math.max(100, Math.round((seconds * 1000 * 300) / (performance.now() - t0)));
  const stop = await startProfiler();
  const cpu0 = processCpuSeconds(server.pid);
  await loop(count);
  const cpu = processCpuSeconds(server.pid) - cpu0;
  const profile = await stop();
  console.log(
    `loop: ${count} messages, ${((cpu * 1000) / count).toFixed(3)} ms workerd CPU per message`,
  );
  save(profile, server, count);
}

/**
 * Profiles blocking turns of the memory-turn agent one at a time: memory on, then off.
 * The server handles nothing else meanwhile, so idle time is the turn's waits.
 */
async function profileMemoryTurn(server) {
  const base = server.url;
  await fillMemory(base);
  let seq = 0;
  for (let i = 0; i < 40; i++) {
    for (const which of ["plain", "recall", "memory"]) await memoryTurn(base, which, seq++);
  }
  for (const which of ["memory", "recall", "plain"]) {
    const stop = await startProfiler();
    const cpu0 = processCpuSeconds(server.pid);
    const end = performance.now() + seconds * 1000;
    const times = [];
    while (performance.now() < end) times.push(await memoryTurn(base, which, seq++));
    const cpu = processCpuSeconds(server.pid) - cpu0;
    const profile = await stop();
    times.sort((a, b) => a - b);
    console.log(
      `\n==== ${which}: ${times.length} turns, median ${times[times.length >> 1].toFixed(2)} ms, ${((cpu * 1000) / times.length).toFixed(2)} ms workerd CPU per turn`,
    );
    save(profile, server, times.length);
    // Extraction's timers (after each memory turn) end before the next profile.
    await new Promise((resolve) => setTimeout(resolve, 600));
  }
}

const server = await (target === "memory-turn"
  ? startMemoryTurnServer({ inspectorPort: INSPECTOR_PORT })
  : startWorkerd(entry, durableObjects, {
      inspectorPort: INSPECTOR_PORT,
      ...(target === "stream"
        ? {
            bindings: agentBindings(),
          }
        : {}),
    }));
try {
  if (target === "stream") await profileStream(server);
  else if (target === "memory-turn") await profileMemoryTurn(server);
  else if (target === "store") await profileStore(server);
  else if (target === "loop") await profileLoop(server);
  else await profileLoad(server);
} finally {
  await server.stop();
  cleanupTempDirs();
}
