/**
 * Where the pages of `wal-pages.mjs` go: the same messages into one warm conversation of
 * the echo agent, then each WAL frame written by the measured messages is attributed to
 * the B-tree (table or index) that owns its page, read from a copy of the database with
 * SQLite's `dbstat` (Python's sqlite3 module). A diagnostic for schema work.
 *
 *   node bench/wal-trees.mjs [messages]            blocking SendMessage
 *   node bench/wal-trees.mjs [messages] stream     SendStreamingMessage of 20 chunks
 *
 * Each message is a new task in one warm conversation (the benchmark's follow-ups).
 */
import { execFileSync } from "node:child_process";
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import {
  checkResponse,
  checkStream,
  openContexts,
  sendMessageBody,
  streamMessageBody,
} from "./load.mjs";
import { cleanupTempDirs, startWorkerd } from "./servers.mjs";
import { STREAM_PREFIX, streamChunks } from "./stream-chunks.mjs";

const PAGE = 4096;
const FRAME = 24 + PAGE;
const HEADERS = { "Content-Type": "application/json", "A2A-Version": "1.0" };
const count = Number(process.argv[2] ?? 40);
const streamed = process.argv[3] === "stream";

const wals = (d, out = []) => {
  for (const e of readdirSync(d, { withFileTypes: true })) {
    const p = join(d, e.name);
    if (e.isDirectory()) wals(p, out);
    else if (e.name.endsWith(".sqlite-wal")) out.push(p);
  }
  return out;
};

const server = await startWorkerd("echo-worker.ts", {
  EDGELINK_CONTEXT: "EdgelinkContext",
  EDGELINK_INDEX: "EdgelinkIndex",
});
try {
  const state = join(dirname(server.scriptPath), "state");
  const [contextId] = await openContexts(server.url, HEADERS, 1, 10_000);
  const send = async (i) => {
    const text = streamed ? `${STREAM_PREFIX}pages ${i}` : `pages ${i}`;
    const r = await fetch(server.url, {
      method: "POST",
      headers: HEADERS,
      body: (streamed ? streamMessageBody : sendMessageBody)(i, contextId, text),
    });
    const body = await r.text();
    const problem = streamed
      ? checkStream(r.status, body, contextId, streamChunks(text))
      : checkResponse(r.status, body, contextId, `echo: ${text}`);
    if (problem) throw new Error(problem);
  };
  for (let i = 0; i < 10; i++) await send(i);
  const before = new Map(wals(state).map((p) => [p, statSync(p).size]));
  for (let i = 0; i < count; i++) await send(10 + i);
  const copy = mkdtempSync(join(tmpdir(), "wal-trees-"));
  const totals = new Map();
  let commits = 0;
  for (const wal of wals(state)) {
    const start = Math.max(32, before.get(wal) ?? 32);
    let bytes;
    try {
      bytes = readFileSync(wal);
    } catch {
      continue; // an idle object closed and its WAL went (checkpointed)
    }
    const pages = [];
    for (let at = start; at + FRAME <= bytes.length; at += FRAME) {
      pages.push(bytes.readUInt32BE(at));
      // A frame's second field is the database's size in pages on a commit's last frame.
      if (bytes.readUInt32BE(at + 4) !== 0) commits++;
    }
    if (pages.length === 0) continue;
    const db = join(copy, "db.sqlite");
    copyFileSync(wal.replace(/-wal$/, ""), db);
    copyFileSync(wal, `${db}-wal`);
    const owners = JSON.parse(
      execFileSync("python3", [
        "-c",
        "import sqlite3,sys,json;c=sqlite3.connect(sys.argv[1]);print(json.dumps(dict(c.execute('select pageno,name from dbstat').fetchall())))",
        db,
      ]).toString(),
    );
    for (const p of pages) {
      const name = owners[p] ?? (p === 1 ? "sqlite_schema" : `free page ${p}`);
      totals.set(name, (totals.get(name) ?? 0) + 1);
    }
  }
  const rows = [...totals].sort((a, b) => b[1] - a[1]);
  let sum = 0;
  for (const [name, n] of rows) {
    sum += n;
    console.log(`${(n / count).toFixed(2).padStart(6)}  ${name}`);
  }
  const kind = streamed ? "streamed message (20 chunks)" : "blocking message";
  console.log(`${(sum / count).toFixed(2).padStart(6)}  pages per ${kind} (${count} messages)`);
  console.log(`${(commits / count).toFixed(2).padStart(6)}  commits per ${kind} (every object)`);
} finally {
  await server.stop();
  cleanupTempDirs();
}
