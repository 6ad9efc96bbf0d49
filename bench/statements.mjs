/**
 * Which SQL statements SQLite prepares, or prepares again, in a streamed model turn: the
 * streaming bench's agent (bench/stream-worker.ts, pipeline (2)) on workerd under gdb,
 * with breakpoints on `sqlite3_prepare_v3` and `sqlite3Reprepare` printing each
 * statement's text. A statement taken from workerd's cache is not prepared; one that
 * SQLite finds expired (a schema change since, or a bound LIMIT) is prepared again at its
 * next step, which costs about what a first prepare does (30–60 k instructions).
 *
 *   node bench/statements.mjs [contexts]
 *   node bench/statements.mjs echo [messages]
 *   node bench/statements.mjs fresh [messages]
 *
 * `echo` counts the same for blocking SendMessage follow-ups of the echo agent
 * (bench/loop-worker.ts: `messages` sent in a loop into one conversation, three times),
 * per message: what `npm run bench`'s scenario (b) prepares. `fresh` counts the same for
 * first messages, each into a new conversation (its database made), after two to warm up.
 *
 * Makes `contexts` conversations with one untimed model turn each (as bench/stream.mjs
 * does), waits for their index flushes, then streams one turn into each, twice, and
 * prints what each round prepared, per call. Needs `gdb` (apt-get install gdb); slow to
 * start (a minute), so keep `contexts` small.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { openContexts } from "./load.mjs";
import { cleanupTempDirs, runWorkerdUnder, startAgentBench, startWorkerd } from "./servers.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const EDGELINK_DOS = { EDGELINK_CONTEXT: "EdgelinkContext", EDGELINK_INDEX: "EdgelinkIndex" };
const fresh = process.argv[2] === "fresh";
const echo = fresh || process.argv[2] === "echo";
const count = Number(process.argv[echo ? 3 : 2] ?? (echo ? 40 : 3));
if (!(count >= 1 && count <= (echo ? 500 : 50))) {
  console.error(
    "usage: node bench/statements.mjs [contexts 1-50]\n       node bench/statements.mjs echo|fresh [messages 1-500]",
  );
  process.exit(2);
}
const dir = mkdtempSync(join(tmpdir(), "edgelink-statements-"));
const log = join(dir, "gdb.log");
const commands = join(dir, "gdb.cmds");
writeFileSync(
  commands,
  [
    "set pagination off",
    "set confirm off",
    "set print thread-events off",
    `set logging file ${log}`,
    "set logging redirect on",
    "set logging enabled on",
    ...["SIGPIPE", "SIGUSR1", "SIGUSR2", "SIG34"].map((s) => `handle ${s} nostop noprint pass`),
    "break sqlite3_prepare_v3",
    'commands\nsilent\nprintf "PREPARE\\t%s\\n", (const char*)$rsi\ncontinue\nend',
    "break sqlite3Reprepare",
    'commands\nsilent\nprintf "REPREPARE\\t%s\\n", (const char*)sqlite3_sql($rdi)\ncontinue\nend',
    "run",
  ].join("\n"),
);
runWorkerdUnder(dir, `gdb -q -batch -x ${commands} --args`);

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
process.stdout.write("starting workerd under gdb...");
const { server, call } = echo
  ? { server: await startWorkerd(join(here, "loop-worker.ts"), EDGELINK_DOS) }
  : await startAgentBench("stream-worker.ts");
console.log(" ready");
/** The log's lines since the last call (gdb writes it as the breakpoints fire). */
let seen = 0;
function since() {
  const lines = readFileSync(log, "utf8").split("\n");
  const out = lines.slice(seen, -1);
  seen = lines.length - 1;
  return out;
}

/** What each round prepared, per call. */
function tally(title) {
  const counts = new Map();
  for (const line of since()) {
    const [kind, sql = ""] = line.split("\t");
    if (kind !== "PREPARE" && kind !== "REPREPARE") continue;
    const text = sql.replace(/\s+/g, " ").slice(0, 110);
    const key = `${kind === "PREPARE" ? "prepared  " : "REPREPARED"} ${text}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  const all = [...counts.values()].reduce((a, b) => a + b, 0);
  console.log(`\n${title} ${(all / count).toFixed(1)} prepared in all`);
  for (const [key, n] of [...counts].sort((a, b) => b[1] - a[1])) {
    console.log(`  ${(n / count).toFixed(1).padStart(5)}  ${key}`);
  }
}

try {
  if (fresh) {
    const headers = { "Content-Type": "application/json", "A2A-Version": "1.0" };
    await openContexts(server.url, headers, 2, 60_000);
    await sleep(2500);
    since();
    await openContexts(server.url, headers, count, 60_000);
    await sleep(2500); // their index flushes land in the round
    tally(
      `${count} first messages, each into a new conversation, per message (index flushes included):`,
    );
  } else if (echo) {
    const headers = { "Content-Type": "application/json", "A2A-Version": "1.0" };
    const [contextId] = await openContexts(server.url, headers, 1, 60_000);
    for (const round of ["first", "second", "third"]) {
      const response = await fetch(`${server.url}bench/loop`, {
        method: "POST",
        body: JSON.stringify({ contextId, count }),
      });
      const { completed } = await response.json();
      if (completed !== count) throw new Error(`${completed} of ${count} completed`);
      await sleep(2500); // the window's index flush lands in the round
      tally(`${round} ${count} messages, per message (index flushes included):`);
    }
  } else await streamRounds();
} finally {
  await server.stop();
  cleanupTempDirs();
  rmSync(dir, { recursive: true, force: true });
}

async function streamRounds() {
  const { contexts } = await call({ side: "prepare", input: "recorded", count });
  await sleep(2500); // their index flushes and alarm moves land first
  since();
  for (const round of ["first streamed turn", "second streamed turn"]) {
    await call({ side: "agent", input: "recorded", contexts });
    await sleep(2500);
    tally(`${round}, per call (${count} calls, index flush included):`);
  }
}
