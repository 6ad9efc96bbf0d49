/**
 * Where the time goes: runs one workerd scenario under the benchmark's load and takes a
 * V8 CPU profile of the worker's isolate (Worker and Durable Objects share it locally)
 * through the inspector. Prints self time per source module and per function, in ms per
 * request, and writes the .cpuprofile (open it in Chrome DevTools > Performance).
 *
 *   node bench/profile.mjs [edgelink|floor] [seconds]
 *
 * Profiling slows the isolate down, so compare shares and modules, not absolute rps.
 */
import { copyFileSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLoad, openContexts } from "./load.mjs";
import { cleanupTempDirs, startWorkerd } from "./servers.mjs";

const target = process.argv[2] ?? "edgelink";
const seconds = Number(process.argv[3] ?? 5);
const INSPECTOR_PORT = 9329;
const entries = {
  edgelink: [
    "echo-worker.ts",
    { EDGELINK_CONTEXT: "EdgelinkContext", EDGELINK_INDEX: "EdgelinkIndex" },
  ],
  floor: ["floor-worker.ts", { FLOOR_CONTEXT: "FloorContext" }],
};
if (!entries[target] || !(seconds > 0 && seconds <= 60)) {
  console.error("usage: node bench/profile.mjs [edgelink|floor] [seconds (1-60)]");
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

/** Maps a line of the (unminified) bundle to the source module esbuild put there. */
function moduleMapper(bundlePath) {
  const marks = [];
  readFileSync(bundlePath, "utf8")
    .split("\n")
    .forEach((line, i) => {
      const m = /^\/\/ ((?:\.\.\/)*(?:node_modules|src|bench)\/\S+)$/.exec(line);
      if (m) marks.push([i, m[1].replace(/^(\.\.\/)+/, "")]);
    });
  return (line) => {
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
  const add = (map, key, t) => map.set(key, (map.get(key) ?? 0) + t);
  for (const [id, t] of time) {
    const frame = nodes.get(id).callFrame;
    if (frame.functionName === "(idle)") continue;
    busy += t;
    let where;
    if (frame.url) where = moduleOf(frame.lineNumber);
    else {
      // Native code: charge it to the nearest JavaScript caller's module.
      let up = parent.get(id);
      while (up !== undefined && !nodes.get(up).callFrame.url) up = parent.get(up);
      const caller = up === undefined ? "" : ` <- ${moduleOf(nodes.get(up).callFrame.lineNumber)}`;
      where = `native ${frame.functionName || "(anonymous)"}${caller}`;
    }
    add(byModule, where, t);
    add(
      byFunction,
      `${frame.functionName || "(anonymous)"}  ${frame.url ? moduleOf(frame.lineNumber) : "native"}`,
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
    `\nbusy (non-idle) isolate time: ${ms(busy)} ms per request over ${requests} requests`,
  );
  print("self time by source module (native calls charged to their caller's module)", byModule, 25);
  print("self time by function", byFunction, 30);
}

const [entry, durableObjects] = entries[target];
const server = await startWorkerd(entry, durableObjects, { inspectorPort: INSPECTOR_PORT });
try {
  const headers = { "Content-Type": "application/json", "A2A-Version": "1.0" };
  // Edgelink refuses client-chosen context ids by default: follow up in issued ones.
  const ids = target === "edgelink" ? await openContexts(server.url, headers, 16, 10_000) : null;
  const load = createLoad({
    url: server.url,
    headers,
    contextFor: (client) => (ids ? ids[client] : `profile-${client}`),
    concurrency: 16,
    maxRequests: 1_000_000,
    timeoutMs: 10_000,
    serverPid: server.pid,
  });
  await load.slice(2000, false);
  const targets = await (await fetch(`http://127.0.0.1:${INSPECTOR_PORT}/json`)).json();
  const user = targets.find((t) => t.webSocketDebuggerUrl?.endsWith("/core:user:"));
  if (!user)
    throw new Error(`no user worker among inspector targets: ${targets.map((t) => t.title)}`);
  const cdp = await connect(user.webSocketDebuggerUrl);
  await cdp.call("Profiler.enable");
  await cdp.call("Profiler.setSamplingInterval", { interval: 100 });
  await cdp.call("Profiler.start");
  await load.slice(seconds * 1000, true);
  const { result } = await cdp.call("Profiler.stop");
  cdp.close();
  const r = load.result();
  const out = join(tmpdir(), `edgelink-bench-${target}-${Date.now()}.cpuprofile`);
  writeFileSync(out, JSON.stringify(result.profile));
  copyFileSync(server.scriptPath, out.replace(/\.cpuprofile$/, ".bundle.mjs"));
  console.log(
    `${target}: ${r.rps.toFixed(0)} rps while profiled, ${r.serverCpuMsPerRequest.toFixed(2)} ms workerd CPU per request, ${r.errors.measured + r.errors.unmeasured} errors`,
  );
  summarize(result.profile, moduleMapper(server.scriptPath), r.requests);
  console.log(`\nprofile: ${out}\nbundle:  ${out.replace(/\.cpuprofile$/, ".bundle.mjs")}`);
} finally {
  await server.stop();
  cleanupTempDirs();
}
