/**
 * Instructions one blocking SendMessage costs over HTTP, for the servers of
 * bench/wal-pages.mjs (the floor, the alternative, the peer, Edgelink): each runs on
 * workerd under valgrind's callgrind, takes `warm` messages into one conversation, then
 * the counter is zeroed, `count` messages are sent one at a time, and the whole process's
 * instructions are divided by `count`. Load-independent, unlike CPU time, and it covers
 * everything a message costs the process: the HTTP request, the Worker, the object's RPC,
 * SQLite and the commit (bench/loop.mjs counts Edgelink alone, looping inside its isolate).
 *
 *   node bench/wire-instructions.mjs [messages] [edgelink,alternative,floor,peer] [fresh]
 *
 * `fresh` sends every message to a new conversation (bench/wal-pages.mjs's
 * `freshConversations`), after two such to warm the code: what a first message costs,
 * its object's schema included.
 *
 * About a minute per server to start under valgrind. Needs valgrind (apt-get install
 * valgrind); `available()` says whether it is there.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { callgrindInto, cleanupTempDirs, runWorkerdUnder, startWorkerd } from "./servers.mjs";
import { freshConversations, oneConversation, SERVERS } from "./wal-pages.mjs";

/** Whether valgrind can be run here. */
export function available() {
  try {
    execFileSync("valgrind", ["--version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

/**
 * The total of callgrind's newest dump of `pid` in `dir`; with BENCH_CALLGRIND_KEEP=<dir>
 * the dump is kept there as `<kind>.out`, for callgrind_annotate.
 */
function dumpedTotal(dir, pid, kind) {
  execFileSync("callgrind_control", ["--dump", String(pid)], { stdio: "pipe" });
  const dumps = readdirSync(dir)
    .filter((f) => f.startsWith(`cg.${pid}.out.`))
    .sort((a, b) => Number(a.split(".").at(-1)) - Number(b.split(".").at(-1)));
  const text = readFileSync(join(dir, dumps.at(-1)), "utf8");
  const keep = process.env.BENCH_CALLGRIND_KEEP;
  if (keep) writeFileSync(join(keep, `${kind}.out`), text);
  const total = Number(/^(?:summary|totals): (\d+)/m.exec(text)?.[1]);
  if (!(total > 0)) throw new Error("callgrind wrote no total");
  return total;
}

/** Instructions per message of one server, started under callgrind for this count alone. */
async function instructionsPerMessage(kind, count, warm, fresh) {
  const { entry, durableObjects, issuesContexts } = SERVERS[kind];
  const dir = mkdtempSync(join(tmpdir(), "edgelink-wire-instructions-"));
  const previous = process.env.MINIFLARE_WORKERD_PATH;
  runWorkerdUnder(dir, callgrindInto(dir));
  let server;
  try {
    server = await startWorkerd(entry, durableObjects);
  } finally {
    // Only this server runs under valgrind; the load that follows runs workerd itself.
    if (previous === undefined) delete process.env.MINIFLARE_WORKERD_PATH;
    else process.env.MINIFLARE_WORKERD_PATH = previous;
  }
  try {
    const pid = readdirSync(dir)
      .filter((f) => f.startsWith("vg."))
      .map((f) => Number(f.split(".")[1]))
      .sort((a, b) => a - b)
      .at(-1);
    const send = fresh
      ? freshConversations(server, entry, issuesContexts, 300_000)
      : await oneConversation(server, entry, issuesContexts, 300_000);
    for (let i = 0; i < warm; i++) await send(i);
    // Let the warm messages' deferred work (index flushes, alarms) land before counting.
    await new Promise((resolve) => setTimeout(resolve, 2500));
    execFileSync("callgrind_control", ["--zero", String(pid)], { stdio: "pipe" });
    for (let i = 0; i < count; i++) await send(warm + i);
    return dumpedTotal(dir, pid, kind) / count;
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Instructions per blocking SendMessage of each server named in `kinds`, one server after
 * the other (each started under callgrind and stopped); with `fresh`, per first message
 * of a new conversation.
 */
export async function measureWireInstructions(
  count = 30,
  kinds = Object.keys(SERVERS),
  warm = 10,
  fresh = false,
) {
  const instructions = {};
  for (const kind of kinds) {
    if (!SERVERS[kind]) throw new Error(`wire instructions: unknown server ${kind}`);
    instructions[kind] = await instructionsPerMessage(kind, count, fresh ? 2 : warm, fresh);
  }
  return instructions;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  if (!available()) {
    console.error("bench/wire-instructions.mjs needs valgrind (apt-get install valgrind)");
    process.exit(2);
  }
  try {
    const count = Number(process.argv[2] ?? 30);
    const kinds = process.argv[3]?.split(",") ?? Object.keys(SERVERS);
    const fresh = process.argv[4] === "fresh";
    const instructions = await measureWireInstructions(count, kinds, 10, fresh);
    console.log(
      `instructions per ${fresh ? "first blocking SendMessage of a new conversation" : "blocking SendMessage"} over HTTP (callgrind, whole workerd process, ${count} messages): ${kinds.map((k) => `${k} ${(instructions[k] / 1e6).toFixed(3)} M`).join(", ")}`,
    );
  } finally {
    cleanupTempDirs();
  }
}
