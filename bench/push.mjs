/**
 * The webhook push benchmark (`npm run bench`, scenario key `push`; also
 * `node bench/push.mjs` alone). See bench/README.md, "Push notifications".
 *
 * One Edgelink agent (push-worker.ts) on workerd, a Node HTTP receiver on 127.0.0.1, and
 * blocking SendMessage requests that register the receiver inline
 * (`configuration.taskPushNotificationConfig`) and ask the handler for timestamped status
 * updates. All tasks live in one context, so one Durable Object delivers everything.
 *
 *   (1) burst: N status updates emitted at once; deliveries per second from the first
 *       to the last arrival, and how long after emission each update arrived (queueing
 *       behind the earlier ones included);
 *   (2) paced: updates 20 ms apart, so each is alone in the outbox: the delay one state
 *       change takes to reach the webhook, p50/p99.
 *
 * Every delivery is checked: each event id (`X-A2A-Event-Id`, "taskId~seq") exactly once,
 * in increasing order, every status update present in order, and the task's completion last.
 */
import { createServer } from "node:http";
import { envNumber, runIfMain } from "./env.mjs";
import { machineCpuSeconds, processCpuSeconds } from "./load.mjs";
import { cleanupTempDirs, startWorkerd } from "./servers.mjs";

const BURST = envNumber("BENCH_PUSH_EVENTS", 500, 10, 20_000, { integer: true });
const BURST_ROUNDS = envNumber("BENCH_PUSH_ROUNDS", 3, 1, 20, { integer: true });
const PACED = 200;
const PACED_GAP_MS = 20;
const WAIT_MS = 120_000;
/** After the last expected event, how long to keep listening for duplicates. */
const GRACE_MS = 300;
const DOS = { EDGELINK_CONTEXT: "EdgelinkContext", EDGELINK_INDEX: "EdgelinkIndex" };
const now = () => performance.timeOrigin + performance.now();

// ---- the receiver -----------------------------------------------------------------------

function startReceiver() {
  const arrivals = [];
  const waiters = new Set();
  const server = createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      const at = now();
      res.writeHead(200).end();
      arrivals.push({
        at,
        path: req.url,
        eventId: String(req.headers["x-a2a-event-id"] ?? ""),
        signed: Boolean(req.headers["x-a2a-signature"]),
        body: Buffer.concat(chunks).toString("utf8"),
      });
      for (const w of waiters) w();
    });
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      resolve({
        url: `http://127.0.0.1:${port}/hook`,
        arrivals,
        /** Resolves once `done(arrivals)` holds, or rejects after `ms`. */
        until(done, ms) {
          return new Promise((ok, fail) => {
            const check = () => {
              if (!done(arrivals)) return;
              clearTimeout(timer);
              waiters.delete(check);
              ok();
            };
            const timer = setTimeout(() => {
              waiters.delete(check);
              fail(new Error(`timed out after ${ms} ms`));
            }, ms);
            waiters.add(check);
            check();
          });
        },
        close: () =>
          new Promise((done) => {
            server.closeAllConnections?.();
            server.close(() => done());
          }),
      });
    });
  });
}

// ---- one run ----------------------------------------------------------------------------

let rpcId = 0;

async function sendMessage(agentUrl, contextId, text, hookUrl) {
  const body = {
    jsonrpc: "2.0",
    id: ++rpcId,
    method: "SendMessage",
    params: {
      message: {
        messageId: crypto.randomUUID(),
        role: "ROLE_USER",
        ...(contextId ? { contextId } : {}),
        parts: [{ text }],
      },
      configuration: { taskPushNotificationConfig: { url: hookUrl } },
    },
  };
  const response = await fetch(agentUrl, {
    method: "POST",
    headers: { "Content-Type": "application/json", "A2A-Version": "1.0" },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(WAIT_MS),
  });
  const text_ = await response.text();
  let json;
  try {
    json = JSON.parse(text_);
  } catch {
    throw new Error(`SendMessage: HTTP ${response.status}, not JSON: ${text_.slice(0, 300)}`);
  }
  if (!response.ok || json.error || !json.result?.task) {
    throw new Error(`SendMessage: HTTP ${response.status}: ${text_.slice(0, 400)}`);
  }
  const task = json.result.task;
  if (task.status?.state !== "TASK_STATE_COMPLETED") {
    throw new Error(`SendMessage: task ended ${task.status?.state}`);
  }
  return task;
}

const parse = (body) => {
  try {
    return JSON.parse(body);
  } catch {
    return null;
  }
};
const isCompletion = (a) => parse(a.body)?.statusUpdate?.status?.state === "TASK_STATE_COMPLETED";

/**
 * Sends one message ("burst N" or "paced N gap"), waits for the task's completion to
 * arrive at the receiver, and checks and measures its deliveries.
 */
async function run(agentUrl, receiver, contextId, text, expected, serverPid) {
  const start = receiver.arrivals.length;
  const cpu0 = processCpuSeconds(serverPid);
  const machine0 = machineCpuSeconds();
  const own0 = process.cpuUsage();
  const sent = now();
  const task = await sendMessage(agentUrl, contextId, text, receiver.url);
  const taskId = task.id;
  const mine = (list) => list.slice(start).filter((a) => a.eventId.startsWith(`${taskId}~`));
  await receiver.until((list) => mine(list).some(isCompletion), WAIT_MS);
  const cpu1 = processCpuSeconds(serverPid);
  const machine1 = machineCpuSeconds();
  const own = process.cpuUsage(own0);
  const wallS = (now() - sent) / 1000;
  // Everything but workerd and this process (the receiver), in % of one core.
  const otherCpuPct =
    cpu0 !== null && cpu1 !== null && machine0 !== null && machine1 !== null
      ? (100 * (machine1 - machine0 - (cpu1 - cpu0) - (own.user + own.system) / 1e6)) / wallS
      : NaN;
  await new Promise((r) => setTimeout(r, GRACE_MS));
  const got = mine(receiver.arrivals);

  const errors = [];
  const strays = receiver.arrivals
    .slice(start)
    .filter((a) => !a.eventId.startsWith(`${taskId}~`) && !a.stray);
  for (const a of strays) {
    a.stray = true;
    errors.push(`delivery for another task: ${a.eventId || "(no event id)"} at ${a.path}`);
  }
  // Exactly once, in order.
  const seqs = got.map((a) => Number(a.eventId.slice(taskId.length + 1)));
  const seen = new Set();
  for (const [i, seq] of seqs.entries()) {
    if (!Number.isInteger(seq)) errors.push(`bad event id ${got[i].eventId}`);
    else if (seen.has(seq)) errors.push(`duplicate delivery of ${got[i].eventId}`);
    else if (i > 0 && seq < seqs[i - 1]) {
      errors.push(`out of order: ${got[i].eventId} after ${got[i - 1].eventId}`);
    }
    seen.add(seq);
  }
  const gaps = seqs.filter((s, i) => i > 0 && s !== seqs[i - 1] + 1).length;
  if (gaps) errors.push(`${gaps} gaps in the event sequence (missing deliveries)`);
  if (got.some((a) => !a.signed)) errors.push("a delivery without X-A2A-Signature");
  if (!parse(got[0]?.body ?? "")?.task) errors.push("the first delivery is not the task snapshot");
  if (!isCompletion(got.at(-1) ?? { body: "" })) errors.push("the last delivery is not completion");

  // The handler's timestamped updates: each exactly once, in order.
  const updates = [];
  for (const a of got) {
    const text = parse(a.body)?.statusUpdate?.status?.message?.parts?.[0]?.text ?? "";
    const m = /^(\d+) (\d+)$/.exec(text);
    if (m) updates.push({ i: Number(m[1]), emitted: Number(m[2]), at: a.at });
  }
  if (updates.length !== expected) {
    errors.push(`${updates.length} of ${expected} status updates arrived`);
  }
  if (updates.some((u, i) => u.i !== i)) errors.push("status updates not in emission order");

  const first = got[0]?.at ?? NaN;
  const last = got.at(-1)?.at ?? NaN;
  return {
    taskId,
    contextId: task.contextId,
    deliveries: got.length,
    spanMs: last - first,
    perSecond: ((got.length - 1) * 1000) / (last - first),
    firstAfterSendMs: first - sent,
    delays: updates.map((u) => u.at - u.emitted),
    otherCpuPct,
    cpuMsPerDelivery: cpu0 !== null && cpu1 !== null ? ((cpu1 - cpu0) * 1000) / got.length : NaN,
    errors,
  };
}

// ---- output -----------------------------------------------------------------------------

function say(text, first = "  ", rest = first) {
  const width = 100;
  let line = first;
  let prefix = first;
  for (const word of text.split(" ")) {
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
const quantile = (sorted, q) =>
  sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] : NaN;
const stats = (values) => {
  const s = [...values].sort((a, b) => a - b);
  return { p50: quantile(s, 0.5), p99: quantile(s, 0.99), min: s[0], max: s.at(-1), n: s.length };
};

// ---- the benchmark ----------------------------------------------------------------------

/** Runs the push section and prints it; returns true if every delivery checked out. */
export async function runPushBench() {
  console.log("\nWebhook push benchmark (bench/push.mjs)");
  const receiver = await startReceiver();
  const server = await startWorkerd("push-worker.ts", DOS);
  const burst = [];
  let paced;
  let warm;
  try {
    process.stdout.write("  measuring");
    // Warm-up: creates the object and its database, the isolate's signing key, connections.
    // It names no context (the agent refuses client-chosen ids by default): every later
    // message goes to the one it was issued.
    warm = await run(server.url, receiver, null, "burst 100", 100, server.pid);
    const contextId = warm.contextId;
    process.stdout.write(".");
    for (let r = 0; r < BURST_ROUNDS; r++) {
      burst.push(await run(server.url, receiver, contextId, `burst ${BURST}`, BURST, server.pid));
      process.stdout.write(".");
    }
    paced = await run(
      server.url,
      receiver,
      contextId,
      `paced ${PACED} ${PACED_GAP_MS}`,
      PACED,
      server.pid,
    );
    process.stdout.write(" done\n");
  } finally {
    await server.stop();
    await receiver.close();
  }

  say(
    `one agent on workerd (Miniflare direct socket), one Node http receiver on 127.0.0.1 answering 200 at once; every task in one context, so one Durable Object sends every delivery; one webhook config per task (registered inline in SendMessage), so its deliveries go one after another. Each delivery: the event read from SQLite, the v1 StreamResponse JSON, an ES256 JWT signed for it (X-A2A-Signature), the POST, and the outbox row marked delivered.`,
    "  ",
    "  ",
  );

  console.log(`\n(1) deliveries per second, one object, bursts of ${BURST} status updates`);
  for (const [i, r] of burst.entries()) {
    const d = stats(r.delays);
    say(
      `burst ${i + 1}: ${r.deliveries} deliveries in ${fmt(r.spanMs, 0)} ms = ${fmt(r.perSecond, 0)}/s (first after ${fmt(r.firstAfterSendMs, 0)} ms); arrival after emission p50 ${fmt(d.p50, 0)} ms, max ${fmt(d.max, 0)} ms (queued behind the burst); workerd CPU ${fmt(r.cpuMsPerDelivery, 2)} ms per delivery; other CPU ${fmt(r.otherCpuPct, 0)}%`,
      "  ",
      "    ",
    );
  }
  const rates = burst.map((r) => r.perSecond).sort((a, b) => a - b);
  const cpuMs = burst.map((r) => r.cpuMsPerDelivery).sort((a, b) => a - b);
  say(
    `median of ${burst.length}: ${fmt(quantile(rates, 0.5), 0)} deliveries/s (${fmt(1000 / quantile(rates, 0.5), 2)} ms each), ${fmt(quantile(cpuMs, 0.5), 2)} ms of workerd CPU per delivery`,
    "  ",
    "    ",
  );

  const p = stats(paced.delays);
  console.log(
    `\n(2) delay from state change to webhook arrival, ${PACED} status updates ${PACED_GAP_MS} ms apart`,
  );
  say(
    `p50 ${fmt(p.p50, 1)} ms, p99 ${fmt(p.p99, 1)} ms (min ${fmt(p.min, 1)}, max ${fmt(p.max, 1)}; ${p.n} updates, ${paced.deliveries} deliveries with the task snapshot and the working/completed changes; other CPU ${fmt(paced.otherCpuPct, 0)}%)`,
    "  ",
    "    ",
  );
  say(
    "measured from the handler's Date.now() when it called ctx.status (carried in the status text) to the receiver's clock when the POST's body had arrived; same machine, same clock; workerd's Date.now() has millisecond resolution, so single figures are ±1 ms.",
    "  ",
    "  ",
  );

  console.log("\nWhat limits these figures");
  for (const line of [
    "Local workerd is not production: the alarm that sends deliveries is workerd's local alarm (set when the event is written, fired at once), SQLite writes go to the local disk, and the Worker, the object and the receiver share this machine's CPU.",
    "One config delivers sequentially by design: a later event waits until the earlier one is acknowledged, so (1) is one object's in-order rate = 1 / (one POST's round trip + its bookkeeping). Different configs and different objects deliver in parallel; this measures neither.",
    "The receiver is on loopback and answers at once: a real webhook's network round trip and processing time add to every delivery and, for one config, divide its rate.",
    "Signing is included: every delivery signs a fresh ES256 JWT (here with the isolate's ephemeral key, as there is no PUSH_SIGNING_KEYS secret; a configured key costs the same).",
    "Every delivery commits its outbox row (marked delivered) to SQLite on the local disk before the next starts; BENCH_TMPDIR=/dev/shm takes the disk out.",
    "'other CPU' is the machine's busy time outside workerd and this process (the receiver) during the run, in % of one core; above 25% the run says it was noisy.",
    "In a burst the handler writes all its events before the first is delivered, so (1)'s arrival delays grow with the event's place in the queue; (2) is the delay of an event that finds the outbox empty.",
  ]) {
    say(line, "  - ", "    ");
  }

  const noisy = [...burst, paced].filter((r) => r.otherCpuPct > 25);
  if (noisy.length) {
    console.log("");
    say(
      "!!! Other processes used more than 25% of a core during some runs ('other CPU' above): the machine was not quiet, so these figures are noisy (p99 above all). Rerun when it is idle.",
      "",
      "    ",
    );
  }

  const runs = [["warm-up", warm], ...burst.map((r, i) => [`burst ${i + 1}`, r]), ["paced", paced]];
  const failed = runs.filter(([, r]) => r.errors.length);
  const total = runs.reduce((n, [, r]) => n + r.deliveries, 0);
  if (failed.length) {
    console.log(`\n${"!".repeat(78)}`);
    console.log("!!! PUSH ERRORS: deliveries missing, duplicated or out of order:");
    for (const [label, r] of failed) {
      for (const e of r.errors.slice(0, 10)) console.log(`!!!   ${label} (task ${r.taskId}): ${e}`);
    }
    console.log("!".repeat(78));
    return false;
  }
  console.log("");
  say(
    `All ${total} deliveries checked: each event id once, in increasing order, signed, every status update in order, the completion last. No errors.`,
    "",
  );
  return true;
}

await runIfMain(import.meta.url, "push", runPushBench, cleanupTempDirs);
