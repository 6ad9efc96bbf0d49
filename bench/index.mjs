/**
 * The tenant index's ceiling (`BENCH_SCENARIOS=index npm run bench`, or
 * `node bench/index.mjs`): how many task state changes per second one index object
 * (src/durable/index-object.ts) absorbs, by rows per call, as conversation objects' outbox
 * flushes deliver them. Closed loop, `BENCH_INDEX_CALLERS` concurrent callers (default 16),
 * each call one RPC carrying N rows; workerd's CPU per row from /proc. Every row is
 * counted back out of the index at the end; a missing row fails the run.
 *
 * Env: BENCH_INDEX_SECONDS (measured per configuration, default 4), BENCH_INDEX_CALLERS.
 */
import { envNumber, runIfMain } from "./env.mjs";
import { machineCpuSeconds, processCpuSeconds } from "./load.mjs";
import { cleanupTempDirs, startWorkerd } from "./servers.mjs";

const SECONDS = envNumber("BENCH_INDEX_SECONDS", 4, 1, 60);
const CALLERS = envNumber("BENCH_INDEX_CALLERS", 16, 1, 256, { integer: true });
const BATCHES = [1, 10, 100];

async function drive(url, ms) {
  let calls = 0;
  let failed = 0;
  const until = performance.now() + ms;
  await Promise.all(
    Array.from({ length: CALLERS }, async () => {
      while (performance.now() < until) {
        const response = await fetch(url, { method: "POST" });
        await response.text();
        if (response.ok) calls++;
        else failed++;
      }
    }),
  );
  return { calls, failed };
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
    console.log(
      ok
        ? "\n  Every row sent is in the index (counted back)."
        : "\n!!! INDEX ERRORS: rows missing or calls failed",
    );
    return ok;
  } finally {
    await server.stop();
  }
}

await runIfMain(import.meta.url, "index", runIndexBench, cleanupTempDirs);
