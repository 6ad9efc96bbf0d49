/**
 * The tenant index's ceiling (`BENCH_SCENARIOS=index npm run bench`, or
 * `node bench/index.mjs`): how many task state changes per second one index object
 * (src/index/index-object.ts) absorbs, by rows per call, as conversation objects' outbox
 * flushes deliver them. Closed loop, `BENCH_INDEX_CALLERS` concurrent callers (default 16),
 * each call one RPC carrying N rows; workerd's CPU per row from /proc. Every row is
 * counted back out of the index at the end; a missing row fails the run.
 *
 * Then the sharded index (`limits.indexShards`): the same closed loop sending 10-row calls
 * of conversations picked at random to their shard of 1, 4 and 8 (calls/s into all shards
 * together), and the cost of ListTasks' fan-out: one page of 50 read from an index of
 * BENCH_INDEX_LIST_ROWS rows spread over 1, 4 and 8 shards (every shard asked, the pages
 * merged), latency one request at a time and throughput at the callers' concurrency.
 *
 * Env: BENCH_INDEX_SECONDS (measured per configuration, default 4), BENCH_INDEX_CALLERS,
 * BENCH_INDEX_LIST_ROWS (default 5000).
 */
import { envNumber, runIfMain } from "./env.mjs";
import { machineCpuSeconds, processCpuSeconds } from "./load.mjs";
import { cleanupTempDirs, startWorkerd } from "./servers.mjs";

const SECONDS = envNumber("BENCH_INDEX_SECONDS", 4, 1, 60);
const CALLERS = envNumber("BENCH_INDEX_CALLERS", 16, 1, 256, { integer: true });
const LIST_ROWS = envNumber("BENCH_INDEX_LIST_ROWS", 5000, 100, 100_000, { integer: true });
const BATCHES = [1, 10, 100];
const SHARD_COUNTS = [1, 4, 8];
const SHARDED_ROWS = 10;

async function drive(url, ms, { method = "POST", callers = CALLERS } = {}) {
  let calls = 0;
  let failed = 0;
  const latencies = [];
  const until = performance.now() + ms;
  await Promise.all(
    Array.from({ length: callers }, async () => {
      while (performance.now() < until) {
        const t0 = performance.now();
        const response = await fetch(url, { method });
        await response.text();
        latencies.push(performance.now() - t0);
        if (response.ok) calls++;
        else failed++;
      }
    }),
  );
  return { calls, failed, latencies };
}

const percentile = (sorted, p) =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? 0;

/** Runs `measure` for each config in two interleaved rounds, adding up calls, time and CPU. */
async function rounds(server, configs, measure) {
  for (const round of [configs, [...configs].reverse()]) {
    for (const c of round) {
      const cpu0 = processCpuSeconds(server.pid);
      const machine0 = machineCpuSeconds();
      const t0 = performance.now();
      const result = await measure(c);
      const seconds = (performance.now() - t0) / 1000;
      const cpu = processCpuSeconds(server.pid) - cpu0;
      c.calls += result.calls;
      c.failed += result.failed;
      c.latencies.push(...result.latencies);
      c.seconds += seconds;
      c.cpu += cpu;
      c.other += machineCpuSeconds() - machine0 - cpu;
    }
  }
}

const blank = () => ({ calls: 0, failed: 0, latencies: [], seconds: 0, cpu: 0, other: 0 });
const otherCpu = (c) => `${((100 * c.other) / c.seconds).toFixed(0)}%`;

/** Calls/s into 1, 4 and 8 shards; every row counted back. */
async function shardedCeiling(server) {
  const configs = SHARD_COUNTS.map((shards) => ({
    shards,
    tenant: `ceiling-${shards}`,
    sent: 0,
    ...blank(),
  }));
  const url = (c) =>
    `${server.url}sharded?rows=${SHARDED_ROWS}&shards=${c.shards}&tenant=${c.tenant}`;
  for (const c of configs) c.sent += (await drive(url(c), 500)).calls * SHARDED_ROWS;
  await rounds(server, configs, async (c) => {
    const result = await drive(url(c), (SECONDS * 1000) / 2);
    c.sent += result.calls * SHARDED_ROWS;
    return result;
  });
  let ok = true;
  console.log(
    `\n  Sharded index: ${CALLERS} callers, each call ${SHARDED_ROWS} rows of one of 4096 conversations, to its shard`,
  );
  console.log("  shards  calls/s    rows/s  workerd CPU ms/call  p50 ms  p99 ms  other CPU");
  for (const c of configs) {
    const response = await fetch(`${server.url}count?shards=${c.shards}&tenant=${c.tenant}`);
    const { count } = await response.json();
    if (count !== c.sent || c.failed) {
      ok = false;
      console.log(
        `  !!! ${c.shards} shards: ${c.sent} rows sent, the shards hold ${count}; ${c.failed} calls failed`,
      );
    }
    const sorted = [...c.latencies].sort((a, b) => a - b);
    console.log(
      `  ${String(c.shards).padStart(6)}${(c.calls / c.seconds).toFixed(0).padStart(9)}${((c.calls * SHARDED_ROWS) / c.seconds).toFixed(0).padStart(10)}${((c.cpu * 1000) / c.calls).toFixed(2).padStart(21)}${percentile(sorted, 0.5).toFixed(1).padStart(8)}${percentile(sorted, 0.99).toFixed(1).padStart(8)}${otherCpu(c).padStart(11)}`,
    );
  }
  return ok;
}

/** ListTasks' index listing over 1, 4 and 8 shards of the same number of rows. */
async function fanOut(server) {
  const configs = SHARD_COUNTS.map((shards) => ({ shards, tenant: `list-${shards}`, ...blank() }));
  const serial = SHARD_COUNTS.map((shards) => ({ shards, tenant: `list-${shards}`, ...blank() }));
  for (const c of configs) {
    for (let sent = 0; sent < LIST_ROWS; sent += 100) {
      const response = await fetch(
        `${server.url}sharded?rows=100&shards=${c.shards}&tenant=${c.tenant}`,
        {
          method: "POST",
        },
      );
      await response.text();
    }
  }
  const url = (c) => `${server.url}list?shards=${c.shards}&tenant=${c.tenant}&pageSize=50`;
  for (const c of configs) await drive(url(c), 300, { method: "GET" });
  await rounds(server, serial, (c) =>
    drive(url(c), (SECONDS * 1000) / 2, { method: "GET", callers: 1 }),
  );
  await rounds(server, configs, (c) => drive(url(c), (SECONDS * 1000) / 2, { method: "GET" }));
  console.log(
    `\n  ListTasks fan-out: the first page (50 of ${LIST_ROWS} rows, totalSize counted) read from every shard and merged`,
  );
  console.log(
    "  shards  1 client: p50 ms  p99 ms  lists/s | " +
      `${CALLERS} clients: lists/s  p50 ms  workerd CPU ms/list  other CPU`,
  );
  let ok = true;
  for (const [i, c] of configs.entries()) {
    const one = serial[i];
    const s1 = [...one.latencies].sort((a, b) => a - b);
    const sN = [...c.latencies].sort((a, b) => a - b);
    if (c.failed || one.failed) {
      ok = false;
      console.log(`  !!! ${c.shards} shards: ${c.failed + one.failed} lists failed`);
    }
    console.log(
      `  ${String(c.shards).padStart(6)}${percentile(s1, 0.5).toFixed(2).padStart(18)}${percentile(s1, 0.99).toFixed(2).padStart(8)}${(one.calls / one.seconds).toFixed(0).padStart(9)} |${(c.calls / c.seconds).toFixed(0).padStart(19)}${percentile(sN, 0.5).toFixed(1).padStart(8)}${((c.cpu * 1000) / c.calls).toFixed(2).padStart(21)}${otherCpu(c).padStart(11)}`,
    );
  }
  return ok;
}

/** @returns {Promise<boolean>} */
export async function runIndexBench() {
  console.log("\nTenant index ceiling (bench/index.mjs)");
  const server = await startWorkerd("index-worker.ts", {
    EDGELINK_INDEX: "EdgelinkIndex",
    TX_INDEX: "TxIndex",
  });
  const configs = [];
  for (const tx of [0, 1]) {
    for (const rows of BATCHES) {
      const name = `index/bench-${tx}-${rows}`;
      configs.push({
        tx,
        rows,
        name,
        url: `${server.url}upsert?rows=${rows}&tx=${tx}&index=${encodeURIComponent(name)}`,
        sent: 0,
        calls: 0,
        seconds: 0,
        cpu: 0,
        other: 0,
        failed: 0,
      });
    }
  }
  try {
    for (const c of configs) {
      const warm = await drive(c.url, 500);
      c.sent += warm.calls * c.rows;
      c.failed += warm.failed;
    }
    // Two rounds, the order flipped in the second, so background load spreads out.
    for (const round of [configs, [...configs].reverse()]) {
      for (const c of round) {
        const cpu0 = processCpuSeconds(server.pid);
        const machine0 = machineCpuSeconds();
        const t0 = performance.now();
        const { calls, failed } = await drive(c.url, (SECONDS * 1000) / 2);
        const seconds = (performance.now() - t0) / 1000;
        const cpu = processCpuSeconds(server.pid) - cpu0;
        c.calls += calls;
        c.sent += calls * c.rows;
        c.failed += failed;
        c.seconds += seconds;
        c.cpu += cpu;
        c.other += machineCpuSeconds() - machine0 - cpu;
      }
    }
    let ok = true;
    console.log(
      `  ${CALLERS} concurrent callers, closed loop; each call one RPC from the Worker to one index object carrying N new rows; ${SECONDS} s per line in 2 interleaved rounds`,
    );
    console.log(
      "\n  commit                 rows/call  calls/s    rows/s  workerd CPU ms/row  ms/call  other CPU",
    );
    for (const c of configs) {
      const response = await fetch(
        `${server.url}upsert?rows=0&count=1&tx=${c.tx}&index=${encodeURIComponent(c.name)}`,
        {
          method: "POST",
        },
      );
      const { count } = await response.json();
      if (count !== c.sent || c.failed) {
        ok = false;
        console.log(
          `  !!! ${c.name}: ${c.sent} rows sent, the index holds ${count}; ${c.failed} calls failed`,
        );
      }
      const rowsPerS = (c.calls * c.rows) / c.seconds;
      console.log(
        `  ${(c.tx ? "transactionSync per call" : "implicit (as shipped)").padEnd(24)}${String(c.rows).padStart(7)}${(c.calls / c.seconds).toFixed(0).padStart(9)}${rowsPerS.toFixed(0).padStart(10)}${((c.cpu * 1000) / (c.calls * c.rows)).toFixed(3).padStart(20)}${((c.cpu * 1000) / c.calls).toFixed(2).padStart(9)}${`${((100 * c.other) / c.seconds).toFixed(0)}%`.padStart(11)}`,
      );
    }
    if (!(await shardedCeiling(server))) ok = false;
    if (!(await fanOut(server))) ok = false;
    console.log(
      ok
        ? "\n  Every row sent is in the index (counted back); every list answered."
        : "\n!!! INDEX ERRORS: rows missing or calls failed",
    );
    return ok;
  } finally {
    await server.stop();
  }
}

await runIfMain(import.meta.url, "index", runIndexBench, cleanupTempDirs);
