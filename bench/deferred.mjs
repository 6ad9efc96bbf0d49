/**
 * What a streamed turn leaves behind: workerd's CPU second by second after one agent sample
 * of bench/stream.mjs (60 fresh contexts, one untimed echo turn each, then the timed
 * SendStreamingMessage on the recorded stream), with nothing else sent. The stream bench's
 * clock stops SETTLE_MS (1.5 s) after the call; this shows what comes later and where it
 * lands instead (in whichever sample runs then).
 *
 *   node bench/deferred.mjs [seconds after the call, default 30]
 */
import { processCpuSeconds } from "./load.mjs";
import { cleanupTempDirs, startAgentBench } from "./servers.mjs";

const seconds = Number(process.argv[2] ?? 30);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const { server, call } = await startAgentBench("stream-worker.ts");
/** workerd's CPU (ms) in each second of `n`. */
async function perSecond(n) {
  const out = [];
  let before = processCpuSeconds(server.pid);
  for (let i = 0; i < n; i++) {
    await sleep(1000);
    const now = processCpuSeconds(server.pid);
    out.push(Math.round((now - before) * 1000));
    before = now;
  }
  return out;
}
try {
  // Warm the isolate (compile, first objects) and let that settle.
  const { contexts: warm } = await call({ side: "prepare", input: "recorded", count: 10 });
  await call({ side: "agent", input: "recorded", contexts: warm });
  await sleep(25_000);
  console.log(`idle, before the sample: ${(await perSecond(5)).join(" ")} ms per second`);
  const cpu0 = processCpuSeconds(server.pid);
  const { contexts } = await call({ side: "prepare", input: "recorded", count: 60 });
  const cpu1 = processCpuSeconds(server.pid);
  await sleep(1500);
  const cpu2 = processCpuSeconds(server.pid);
  await call({ side: "agent", input: "recorded", contexts });
  const cpu3 = processCpuSeconds(server.pid);
  const after = await perSecond(seconds);
  const ms = (a, b) => Math.round((b - a) * 1000);
  console.log(
    `prepare 60 contexts: ${ms(cpu0, cpu1)} ms; its 1.5 s settle: ${ms(cpu1, cpu2)} ms; the timed call: ${ms(cpu2, cpu3)} ms`,
  );
  console.log(`then, second by second: ${after.join(" ")} ms`);
  const settle = after.slice(0, 2).reduce((a, b) => a + b, 0);
  const later = after.slice(2).reduce((a, b) => a + b, 0);
  console.log(
    `seconds 1-2 (about the bench's settle window): ${settle} ms; seconds 3-${seconds}: ${later} ms (${(later / contexts.length).toFixed(2)} ms per context)`,
  );
} finally {
  await server.stop();
  cleanupTempDirs();
}
