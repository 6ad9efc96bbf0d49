/**
 * The streaming bench's workerd rows for the short streams only (the empty answer and
 * the recorded 12-event stream), with the AI SDK / agent ratio: about 40 s, for A/B runs
 * of the agent's per-call cost. `npm run bench` (scenario `stream`) is the full report.
 *
 *   node bench/stream-quick.mjs [repeats]
 */
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { runIfMain } from "./env.mjs";
import { cleanupTempDirs } from "./servers.mjs";
import { measureWorkerd } from "./stream.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const RECORDED = join(
  here,
  "..",
  "test",
  "fixtures",
  "providers",
  "openai-chat",
  "text-with-usage.sse",
);
const repeats = Number(process.argv[2] ?? 1);

async function run() {
  const text = readFileSync(RECORDED, "utf8");
  let ok = true;
  for (let i = 0; i < repeats; i++) {
    const { rows, checks } = await measureWorkerd(text, () => {}, ["synthetic:0", "recorded"]);
    ok &&= checks.every(
      (c) => (c.ok ?? c.textMatches) && (!c.finalState || c.finalState === "TASK_STATE_COMPLETED"),
    );
    const cpu = (input, side) => rows.find((r) => r.input === input && r.side === side)?.cpuMs;
    const line = ["synthetic:0", "recorded"].map(
      (input) =>
        `${input === "recorded" ? "recorded" : "empty"}: agent ${cpu(input, "agent").toFixed(2)} ms, AI SDK ${cpu(input, "aisdk").toFixed(2)} ms (${(cpu(input, "aisdk") / cpu(input, "agent")).toFixed(2)}×)`,
    );
    console.log(line.join("; "));
  }
  if (!ok) console.log("!!! an output did not check out");
  return ok;
}

await runIfMain(import.meta.url, "stream-quick", run, cleanupTempDirs);
