/**
 * The load generator: `concurrency` closed loops, each sending one JSON-RPC SendMessage
 * at a time with Node's fetch (undici, keep-alive connections). A load runs in slices
 * (warm-up or measured) so run.mjs can interleave scenarios. Every response is checked:
 * HTTP 200, a JSON-RPC result holding a completed task in the right context with the
 * echoed artifact. Bounded in time and in count; talks to 127.0.0.1 only.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { STREAM_PREFIX, streamChunks } from "./stream-chunks.mjs";

/**
 * One v1 SendMessage request body, as all servers receive it. A null `contextId` sends
 * none: the server starts a conversation and issues its id.
 */
export function sendMessageBody(id, contextId, text) {
  const context = contextId === null ? "" : `"contextId":"${contextId}",`;
  return `{"jsonrpc":"2.0","id":${id},"method":"SendMessage","params":{"message":{"messageId":"${crypto.randomUUID()}","role":"ROLE_USER",${context}"parts":[{"text":"${text}"}]}}}`;
}

/** The same request as SendStreamingMessage (the streaming scenarios). */
export function streamMessageBody(id, contextId, text) {
  return sendMessageBody(id, contextId, text).replace(
    '"method":"SendMessage"',
    '"method":"SendStreamingMessage"',
  );
}

/**
 * Why an SSE answer is not a successful streamed echo, or null if it is one: every frame a
 * JSON-RPC result, the task (or its first event) in the request's context, the artifact's
 * chunks (bench/stream-chunks.mjs) in order, and the task completed at the end.
 */
export function checkStream(status, text, contextId, expectedChunks) {
  if (status !== 200) return `HTTP ${status}: ${text.slice(0, 200)}`;
  const chunks = [];
  let state = null;
  let context = null;
  for (const frame of text.split("\n\n")) {
    const data = frame
      .split("\n")
      .filter((line) => line.startsWith("data:"))
      .map((line) => line.slice(5).trimStart())
      .join("\n");
    if (data === "") continue;
    let body;
    try {
      body = JSON.parse(data);
    } catch {
      return `frame not JSON: ${data.slice(0, 200)}`;
    }
    if (body.error) return `JSON-RPC error ${JSON.stringify(body.error).slice(0, 300)}`;
    const r = body.result ?? {};
    const event = r.task ?? r.statusUpdate ?? r.artifactUpdate ?? r.message;
    if (!event) return `frame without an event: ${data.slice(0, 200)}`;
    context ??= event.contextId;
    if (r.task) state = r.task.status?.state ?? state;
    if (r.statusUpdate) state = r.statusUpdate.status?.state ?? state;
    if (r.artifactUpdate) {
      const update = r.artifactUpdate;
      if ((update.append ?? false) !== chunks.length > 0)
        return `chunk ${chunks.length + 1}: append ${update.append}`;
      chunks.push(update.artifact?.parts?.[0]?.text);
    }
  }
  if (contextId !== null && context !== contextId)
    return `stream in context ${context}, not ${contextId}`;
  if (state !== "TASK_STATE_COMPLETED") return `stream ended with the task ${state}`;
  if (JSON.stringify(chunks) !== JSON.stringify(expectedChunks))
    return `chunks ${JSON.stringify(chunks).slice(0, 200)}`;
  return null;
}

/**
 * Why a response is not a successful blocking SendMessage, or null if it is one. With a
 * null `contextId` (none sent) any issued id will do.
 */
export function checkResponse(status, text, contextId, expectedText) {
  if (status !== 200) return `HTTP ${status}: ${text.slice(0, 200)}`;
  let body;
  try {
    body = JSON.parse(text);
  } catch {
    return `not JSON: ${text.slice(0, 200)}`;
  }
  if (body.error) return `JSON-RPC error ${JSON.stringify(body.error).slice(0, 300)}`;
  const task = body.result?.task;
  if (!task) return `no result.task: ${text.slice(0, 200)}`;
  if (task.status?.state !== "TASK_STATE_COMPLETED") return `task is ${task.status?.state}`;
  if (
    contextId === null
      ? typeof task.contextId !== "string" || task.contextId === ""
      : task.contextId !== contextId
  )
    return `task in context ${task.contextId}, not ${contextId ?? "a new one"}`;
  const echoed = task.artifacts?.[0]?.parts?.[0]?.text;
  if (echoed !== expectedText) return `artifact says ${JSON.stringify(echoed)}`;
  return null;
}

/**
 * Starts `count` conversations on a server that issues context ids (one message each,
 * no contextId sent) and answers the ids it issued, in order.
 */
export async function openContexts(url, headers, count, timeoutMs) {
  const ids = [];
  for (let i = 0; i < count; i++) {
    const text = `open ${i}`;
    const response = await fetch(url, {
      method: "POST",
      headers,
      body: sendMessageBody(i, null, text),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const body = await response.text();
    const problem = checkResponse(response.status, body, null, `echo: ${text}`);
    if (problem) throw new Error(`opening context ${i}: ${problem}`);
    ids.push(JSON.parse(body).result.task.contextId);
  }
  return ids;
}

const CLOCK_TICKS = 100; // USER_HZ on Linux
const SCHEDSTAT = existsSync("/proc/self/schedstat");

/**
 * CPU seconds (user+system, all threads) a process has used, or null off Linux. Read from
 * each thread's schedstat (nanoseconds) where the kernel has it: /proc/<pid>/stat counts
 * in 10 ms ticks, which made a 10 ms sample of a short stream worth 0, 1 or 2 ticks.
 * Threads that have exited are not counted; workerd's and Node's threads live as long as
 * the process.
 */
export function processCpuSeconds(pid) {
  if (!pid) return null;
  try {
    if (SCHEDSTAT) {
      let ns = 0;
      for (const tid of readdirSync(`/proc/${pid}/task`)) {
        try {
          ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").split(" ")[0]);
        } catch {
          // The thread ended between the listing and the read.
        }
      }
      return ns / 1e9;
    }
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  } catch {
    return null;
  }
}

/** CPU seconds all processes on the machine have used (busy time of all cores). */
export function machineCpuSeconds() {
  try {
    const line = readFileSync("/proc/stat", "utf8").split("\n")[0];
    const [user, nice, system, , , irq, softirq, steal] = line
      .trim()
      .split(/\s+/)
      .slice(1)
      .map(Number);
    return (user + nice + system + irq + softirq + steal) / CLOCK_TICKS;
  } catch {
    return null;
  }
}

/** Pids of this process's children named `name` (how we find Miniflare's workerd). */
export function childPids(name) {
  const pids = [];
  try {
    for (const entry of readdirSync("/proc")) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
        const comm = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
        const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
        if (ppid === process.pid && comm === name) pids.push(Number(entry));
      } catch {}
    }
  } catch {}
  return pids;
}

const ownCpuSeconds = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};

/**
 * A load against one server. `contextFor(client, seq)` names the contextId of a client's
 * seq-th request (seq keeps counting across slices), or null to send none. Call
 * `slice(ms, measured)` any number of times, then `result()`.
 */
export function createLoad({
  url,
  headers,
  contextFor,
  concurrency,
  maxRequests,
  timeoutMs,
  serverPid,
  streaming = false,
}) {
  const seqs = new Array(concurrency).fill(0);
  const latencies = [];
  const errors = { measured: 0, unmeasured: 0, samples: [] };
  const totals = { seconds: 0, serverCpu: 0, clientCpu: 0, machineCpu: 0, sent: 0 };
  const sliceRps = [];
  /** Each measured slice's own figures, for medians over rounds (bench/peer.mjs). */
  const slices = [];
  let rpcId = 0;

  async function one(client) {
    const seq = seqs[client]++;
    const contextId = contextFor(client, seq);
    const text = `${streaming ? STREAM_PREFIX : "hello "}${client}-${seq}`;
    const body = (streaming ? streamMessageBody : sendMessageBody)(++rpcId, contextId, text);
    totals.sent++;
    try {
      const response = await fetch(url, {
        method: "POST",
        headers,
        body,
        signal: AbortSignal.timeout(timeoutMs),
      });
      const responseText = await response.text();
      if (streaming)
        return checkStream(response.status, responseText, contextId, streamChunks(text));
      return checkResponse(response.status, responseText, contextId, `echo: ${text}`);
    } catch (error) {
      return `request failed: ${error?.message ?? error}`;
    }
  }

  /** Runs the clients for `ms`; when `measured`, records what completes in that time. */
  async function slice(ms, measured) {
    const from = performance.now();
    const to = from + ms;
    const done0 = latencies.length;
    const cpu0 = {
      server: processCpuSeconds(serverPid),
      client: ownCpuSeconds(),
      machine: machineCpuSeconds(),
    };
    const loop = async (client) => {
      while (performance.now() < to && totals.sent < maxRequests) {
        const t0 = performance.now();
        const problem = await one(client);
        const t1 = performance.now();
        // A stream can outlast a slice: streaming loads count every request the slice
        // started, and the slice lasts until the last one ends (see `end` below).
        const inWindow = measured && (streaming || t1 <= to);
        if (problem) {
          if (inWindow) errors.measured++;
          else errors.unmeasured++; // warm-up, or finished after its window
          if (errors.samples.length < 3 && !errors.samples.includes(problem)) {
            errors.samples.push(problem);
          }
        } else if (inWindow) {
          latencies.push(t1 - t0);
        }
      }
    };
    let cpu1 = null;
    // Read the counters at the end of the window, not after the last stragglers (which a
    // streaming load counts, so its counters are read after them).
    const timer = setTimeout(
      () => {
        cpu1 = {
          server: processCpuSeconds(serverPid),
          client: ownCpuSeconds(),
          machine: machineCpuSeconds(),
        };
      },
      streaming ? 2 ** 31 - 1 : Math.max(0, ms),
    );
    await Promise.all(Array.from({ length: concurrency }, (_, i) => loop(i)));
    const end = performance.now();
    clearTimeout(timer);
    cpu1 ??= {
      server: processCpuSeconds(serverPid),
      client: ownCpuSeconds(),
      machine: machineCpuSeconds(),
    };
    if (!measured) return;
    const seconds = ((streaming ? end : Math.min(end, to)) - from) / 1000;
    totals.seconds += seconds;
    const done = latencies.length - done0;
    sliceRps.push(done / seconds);
    totals.clientCpu += cpu1.client - cpu0.client;
    const serverCpu =
      cpu0.server !== null && cpu1.server !== null ? cpu1.server - cpu0.server : NaN;
    totals.serverCpu += serverCpu;
    slices.push({ rps: done / seconds, serverCpuMsPerRequest: (serverCpu * 1000) / done });
    if (cpu0.machine !== null && cpu1.machine !== null)
      totals.machineCpu += cpu1.machine - cpu0.machine;
    else totals.machineCpu = NaN;
  }

  function result() {
    const sorted = [...latencies].sort((x, y) => x - y);
    const pct = (p) => (sorted.length ? sorted[Math.floor(p * (sorted.length - 1))] : NaN);
    const s = totals.seconds;
    const other = totals.machineCpu - totals.serverCpu - totals.clientCpu;
    return {
      requests: sorted.length,
      seconds: s,
      rps: sorted.length / s,
      sliceRpsMin: Math.min(...sliceRps),
      sliceRpsMax: Math.max(...sliceRps),
      slices,
      p50: pct(0.5),
      p99: pct(0.99),
      errors,
      totalSent: totals.sent,
      cappedByCount: totals.sent >= maxRequests,
      serverCpuPct: (totals.serverCpu / s) * 100,
      serverCpuMsPerRequest: (totals.serverCpu * 1000) / sorted.length,
      clientCpuPct: (totals.clientCpu / s) * 100,
      otherCpuPct: (Math.max(0, other) / s) * 100,
    };
  }

  return { slice, result };
}
