/**
 * The Node side of the streaming benchmark. bench/stream.mjs bundles this file with
 * esbuild and runs it in child processes, one job each, so every measurement starts from
 * a fresh heap; the result is one JSON line on stdout.
 *
 *   time PLAN     pipeline (1) and the AI SDK over the inputs of PLAN, after a warm-up,
 *                 in interleaved rounds (ours, AI SDK, ..., then the other way round);
 *                 wall and CPU time per stream
 *   heap SIDE IN  (needs --expose-gc) the peak live heap growth of one stream through
 *                 SIDE (ours, streamText, lowMemory) for input IN ("recorded" or a delta
 *                 count): a full collection at 20 points along the stream and at its end,
 *                 against a collected heap with the input already built
 *   check IN      every pipeline once over IN, their output compared with the text the
 *                 input's deltas add up to
 */
import { readFileSync } from "node:fs";
import { type AiSdkVariant, aiSdkRun } from "./stream-aisdk";
import { type StreamInput, streamInput, syntheticInput } from "./stream-input";
import { oursRun, textOfFrames } from "./stream-ours";

type Side = "ours" | AiSdkVariant;

export interface TimePlanEntry {
  input: string;
  sides: Side[];
  rounds: number;
  /** Streams per timed sample: short streams are timed in groups. */
  group: Partial<Record<Side, number>>;
  warmup: number;
}

const RECORDED = process.env.STREAM_RECORDED_PATH ?? "";

function makeInput(key: string): StreamInput {
  if (key === "recorded") return streamInput("recorded", readFileSync(RECORDED, "utf8"));
  return syntheticInput(Number(key));
}

async function once(side: Side, input: StreamInput): Promise<void> {
  if (side === "ours") await oursRun(input);
  else await aiSdkRun(input, side);
}

/** Median-free raw samples: ms of wall and of CPU (this process, user + system) per stream. */
async function time(plan: TimePlanEntry[]) {
  const out: { input: string; events: number; side: Side; wall: number[]; cpu: number[] }[] = [];
  for (const entry of plan) {
    const input = makeInput(entry.input);
    const samples = new Map(
      entry.sides.map((side) => [side, { wall: [] as number[], cpu: [] as number[] }]),
    );
    for (const side of entry.sides) for (let i = 0; i < entry.warmup; i++) await once(side, input);
    for (let round = 0; round < entry.rounds; round++) {
      const order = round % 2 ? [...entry.sides].reverse() : entry.sides;
      for (const side of order) {
        const group = entry.group[side] ?? 1;
        const cpu0 = process.cpuUsage();
        const start = performance.now();
        for (let i = 0; i < group; i++) await once(side, input);
        const wall = (performance.now() - start) / group;
        const cpu = process.cpuUsage(cpu0);
        const s = samples.get(side);
        s?.wall.push(wall);
        s?.cpu.push((cpu.user + cpu.system) / 1000 / group);
      }
    }
    for (const [side, s] of samples)
      out.push({ input: entry.input, events: input.events, side, ...s });
  }
  return out;
}

async function heap(side: Side, key: string) {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error("run with --expose-gc");
  const input = makeInput(key);
  // One untimed stream first: code, caches and the model object exist before the baseline.
  await once(side, makeInput("recorded"));
  await once(side, input);
  gc();
  gc();
  const base = process.memoryUsage().heapUsed;
  let peak = base;
  const deltasTotal = key === "recorded" ? 1 : Number(key);
  const every = Math.max(1, Math.floor(deltasTotal / 20));
  let next = every;
  const probe = (deltas: number) => {
    if (deltas < next) return;
    next = deltas + every;
    gc();
    peak = Math.max(peak, process.memoryUsage().heapUsed);
  };
  const started = performance.now();
  let result: unknown;
  if (side === "ours") result = await oursRun(input, { onDelta: probe });
  else result = await aiSdkRun(input, side, { onDelta: probe });
  // The end of the stream, with the run's result still alive (what a caller holds).
  gc();
  peak = Math.max(peak, process.memoryUsage().heapUsed);
  const ms = performance.now() - started;
  return {
    side,
    input: key,
    events: input.events,
    baseMB: base / 2 ** 20,
    growthMB: (peak - base) / 2 ** 20,
    ms,
    kept: result !== undefined,
  };
}

async function check(key: string) {
  const input = makeInput(key);
  const ours = await oursRun(input, { keep: true });
  const sdk = await aiSdkRun(input, "streamText", { keep: true });
  const low = await aiSdkRun(input, "lowMemory", { keep: true });
  return {
    input: key,
    events: input.events,
    chunks: input.chunks.length,
    bytes: input.bytes,
    ours: {
      batches: ours.batches,
      frames: ours.frames,
      sseBytes: ours.bytes,
      deltas: ours.deltas,
      ok: textOfFrames(ours.sse) === input.text,
    },
    streamText: { deltas: sdk.deltas, ok: sdk.text === input.text },
    lowMemory: { deltas: low.deltas, ok: low.text === input.text },
  };
}

const [mode, a, b] = process.argv.slice(2);
let result: unknown;
if (mode === "time") result = await time(JSON.parse(a ?? "[]") as TimePlanEntry[]);
else if (mode === "heap") result = await heap(a as Side, b ?? "recorded");
else if (mode === "check") result = await check(a ?? "recorded");
else throw new Error(`unknown mode ${mode}`);
process.stdout.write(`${JSON.stringify(result)}\n`);
