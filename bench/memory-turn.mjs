/**
 * A model turn with long-term memory on against the same turn without it, on the
 * answer's path (issue 26's target: at most 1.2×), and whether extraction delays the
 * answer (bench/memory-turn-worker.ts: one agent twice, memory on for one; the model
 * answers at once, extraction takes 300 ms). One user; the memory holds FACTS facts, so
 * recall finds some. Turns alternate between the two agents, round after round, so load
 * on a shared machine falls on both; the medians of wall time per blocking SendMessage
 * (each in a new conversation) and workerd's CPU per turn are compared.
 *
 *   node bench/memory-turn.mjs [turns per round] [rounds]
 */
import { runIfMain } from "./env.mjs";
import { processCpuSeconds } from "./load.mjs";
import { agentBindings, cleanupTempDirs, startWorkerd } from "./servers.mjs";

const TURNS = Number(process.argv[2] ?? 40);
const ROUNDS = Number(process.argv[3] ?? 5);
const FACTS = 200;
const EXTRACTION_MS = 300;
const TARGET = 1.2;
const USER = { "X-User": "bench-user", "Content-Type": "application/json", "A2A-Version": "1.0" };

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const fmt = (n, d = 2) => (Number.isFinite(n) ? n.toFixed(d) : "-");

/** One blocking SendMessage to `which` agent ("plain" or "memory"), in a new conversation: its wall ms. */
export async function memoryTurn(base, which, i) {
  const body = {
    jsonrpc: "2.0",
    id: i,
    method: "SendMessage",
    params: {
      message: {
        messageId: `m-${which}-${i}-${Math.random()}`,
        role: "ROLE_USER",
        parts: [{ text: `Book me a window seat to city ${i % 50}, as usual.` }],
      },
    },
  };
  const started = performance.now();
  const response = await fetch(`${base}${which}/`, {
    method: "POST",
    headers: USER,
    body: JSON.stringify(body),
  });
  const json = await response.json();
  const ms = performance.now() - started;
  const state = json.result?.task?.status?.state;
  if (state !== "TASK_STATE_COMPLETED")
    throw new Error(`${which} turn: ${JSON.stringify(json).slice(0, 300)}`);
  return ms;
}

/** The bench worker on workerd (`extraOptions` go to Miniflare, e.g. an inspector port). */
export function startMemoryTurnServer(extraOptions = {}) {
  return startWorkerd(
    "memory-turn-worker.ts",
    {
      PLAIN_CONTEXT: "PlainContext",
      PLAIN_INDEX: "PlainIndex",
      MEMORY_CONTEXT: "MemoryContext",
      MEMORY_INDEX: "MemoryIndex",
      EDGELINK_MEMORY: "EdgelinkMemory",
    },
    { ...extraOptions, bindings: { EDGELINK_ID_KEY: agentBindings().EDGELINK_ID_KEY } },
  );
}

/** Fills the bench user's memory with FACTS facts through the memory API. */
export async function fillMemory(base) {
  for (let i = 0; i < FACTS; i++) {
    const response = await fetch(`${base}memory/memory/facts`, {
      method: "POST",
      headers: USER,
      body: JSON.stringify({
        claim: `The user likes window seats on flight ${i} to city ${i % 50}.`,
      }),
    });
    if (!response.ok) throw new Error(`fill: ${response.status} ${await response.text()}`);
  }
}

export async function runMemoryTurnBench() {
  console.log("\nA model turn with long-term memory on (bench/memory-turn.mjs)");
  const server = await startMemoryTurnServer();
  try {
    const base = server.url;
    await fillMemory(base);
    // Warm-up: both agents' objects and code paths.
    for (let i = 0; i < 10; i++) {
      await memoryTurn(base, "plain", i);
      await memoryTurn(base, "memory", i);
    }
    const wall = { plain: [], memory: [] };
    const cpu = { plain: [], memory: [] };
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 ? ["memory", "plain"] : ["plain", "memory"];
      for (const which of order) {
        const c0 = processCpuSeconds(server.pid);
        const times = [];
        for (let i = 0; i < TURNS; i++)
          times.push(await memoryTurn(base, which, round * TURNS + i));
        cpu[which].push(((processCpuSeconds(server.pid) - c0) * 1000) / TURNS);
        wall[which].push(median(times));
        // The memory agent's extractions (300 ms each, off the answer's path) finish
        // before the next batch, so their CPU is not counted in the other agent's.
        if (which === "memory") await new Promise((r) => setTimeout(r, EXTRACTION_MS + 200));
      }
      process.stdout.write(".");
    }
    const p = { wall: median(wall.plain), cpu: median(cpu.plain) };
    const m = { wall: median(wall.memory), cpu: median(cpu.memory) };
    const ratio = m.wall / p.wall;
    console.log(
      `\n  ${ROUNDS} rounds of ${TURNS} blocking turns each; memory of ${FACTS} facts; extraction takes ${EXTRACTION_MS} ms`,
    );
    console.log(`  ${"".padEnd(16)}${"ms/turn".padStart(10)}${"CPU ms/turn".padStart(14)}`);
    console.log(
      `  ${"memory off".padEnd(16)}${fmt(p.wall).padStart(10)}${fmt(p.cpu).padStart(14)}`,
    );
    console.log(`  ${"memory on".padEnd(16)}${fmt(m.wall).padStart(10)}${fmt(m.cpu).padStart(14)}`);
    console.log(
      `  on/off: ${fmt(ratio)}× wall (target ≤ ${TARGET}×), ${fmt(m.cpu / p.cpu)}× CPU (CPU includes recall and the off-path extraction)`,
    );
    const waited = m.wall >= EXTRACTION_MS;
    console.log(
      `  extraction on the answer's path: ${waited ? "YES (the answer waited)" : `no (a turn takes ${fmt(m.wall)} ms; extraction ${EXTRACTION_MS} ms)`}`,
    );
    return ratio <= TARGET && !waited;
  } finally {
    await server.stop();
  }
}

await runIfMain(import.meta.url, "memory-turn", runMemoryTurnBench, cleanupTempDirs);
