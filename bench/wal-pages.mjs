/**
 * SQLite pages one blocking SendMessage writes: Durable Objects' SQLite runs in WAL mode,
 * so every page a commit changes is appended to the object's `-wal` file as one frame
 * (a 24-byte header and the page). Sends messages one at a time into one warm
 * conversation of Edgelink's echo agent (b) and of the alternative (e), and divides the
 * growth of the `-wal` files under the run's state directory (every object: the
 * conversation, and for Edgelink its index shard) by the messages sent. Independent of
 * the machine's load, unlike CPU time: a schema or write-path change shows here exactly.
 *
 *   node bench/wal-pages.mjs [messages] [edgelink,alternative,floor,peer] [fresh]
 *
 * `fresh` sends each message to a new conversation instead (no contextId for Edgelink,
 * which issues one; a new client-named id for the others): the pages of a first message,
 * its object's schema included, after two fresh messages to warm the code.
 *
 * A commit's cost grows with the pages it writes (locally each is a write(2) before one
 * fsync; in production each page is also shipped to replicas), so this is the part of the
 * (b)/(e) gap that lies in what is stored, not in how the code runs.
 */
import { readdirSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { checkResponse, openContexts, sendMessageBody } from "./load.mjs";
import { cleanupTempDirs, startWorkerd } from "./servers.mjs";

const PAGE = 4096;
const FRAME = 24 + PAGE;
const HEADERS = { "Content-Type": "application/json", "A2A-Version": "1.0" };

/** Total bytes of every `-wal` file under `dir`. */
function walBytes(dir) {
  let total = 0;
  const walk = (d) => {
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      const path = join(d, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith(".sqlite-wal")) total += statSync(path).size;
    }
  };
  walk(dir);
  return total;
}

/**
 * A sender of checked blocking messages, one at a time, into one conversation of `server`
 * (issued by the server when it issues context ids, named by the client otherwise).
 * `timeoutMs` bounds each message (under valgrind a first message takes a minute).
 */
export async function oneConversation(server, entry, issuesContexts, timeoutMs = 10_000) {
  const contextId = issuesContexts
    ? (await openContexts(server.url, HEADERS, 1, timeoutMs))[0]
    : `one-conversation-${Date.now()}`;
  return sender(server, entry, () => contextId, timeoutMs);
}

/**
 * A sender of checked blocking messages, each the first of a new conversation: without a
 * contextId for a server that issues them, under a new client-named one otherwise.
 */
export function freshConversations(server, entry, issuesContexts, timeoutMs = 10_000) {
  const run = Date.now();
  return sender(server, entry, (i) => (issuesContexts ? null : `fresh-${run}-${i}`), timeoutMs);
}

function sender(server, entry, contextFor, timeoutMs) {
  return async (i) => {
    const contextId = contextFor(i);
    const text = `pages ${i}`;
    const response = await fetch(server.url, {
      method: "POST",
      headers: HEADERS,
      body: sendMessageBody(i, contextId, text),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const body = await response.text();
    const problem = checkResponse(response.status, body, contextId, `echo: ${text}`);
    if (problem) throw new Error(`${entry}: ${problem}`);
  };
}

/**
 * WAL frames per message for one server: `warm` messages first (the object's schema, its
 * first pages), then `count` measured; with `fresh`, each to a new conversation after two. SQLite checkpoints a WAL at 1,000 frames and then
 * reuses the file from its start, so `count` is kept well under that; a message after
 * which the files did not grow fails the measurement.
 */
async function framesPerMessage(entry, durableObjects, issuesContexts, count, fresh = false) {
  const warm = fresh ? 2 : 10;
  const server = await startWorkerd(entry, durableObjects);
  try {
    const state = join(dirname(server.scriptPath), "state");
    const send = fresh
      ? freshConversations(server, entry, issuesContexts)
      : await oneConversation(server, entry, issuesContexts);
    for (let i = 0; i < warm; i++) await send(i);
    let grown = 0;
    let last = walBytes(state);
    for (let i = 0; i < count; i++) {
      await send(warm + i);
      const now = walBytes(state);
      // Every message writes a page; none seen means the WAL was checkpointed and reused.
      if (now <= last) throw new Error(`${entry}: the WAL was checkpointed; send fewer messages`);
      grown += now - last;
      last = now;
    }
    return grown / FRAME / count;
  } finally {
    await server.stop();
  }
}

/** The servers whose pages can be counted: entry, Durable Objects, and whether it issues context ids. */
export const SERVERS = {
  edgelink: {
    entry: "echo-worker.ts",
    durableObjects: { EDGELINK_CONTEXT: "EdgelinkContext", EDGELINK_INDEX: "EdgelinkIndex" },
    issuesContexts: true,
  },
  alternative: {
    entry: "sdk-do-worker.ts",
    durableObjects: { SDK_CONTEXT: "SdkContext" },
    issuesContexts: false,
  },
  floor: {
    entry: "floor-worker.ts",
    durableObjects: { FLOOR_CONTEXT: "FloorContext", FLOOR_ROWS: "FloorRowsContext" },
    issuesContexts: false,
  },
  peer: {
    entry: "peer-worker.ts",
    durableObjects: { PEER_AGENT: "PeerAgent" },
    issuesContexts: false,
  },
};

/**
 * Pages written per message by each server named in `kinds`: Edgelink (b), the
 * alternative (e), and on request the floor (a) and the `agents` peer (p); with `fresh`,
 * per first message of a new conversation.
 */
export async function measureWalPages(
  count = 40,
  kinds = ["edgelink", "alternative"],
  fresh = false,
) {
  const pages = {};
  for (const kind of kinds) {
    const server = SERVERS[kind];
    if (!server) throw new Error(`wal pages: unknown server ${kind}`);
    pages[kind] = await framesPerMessage(
      server.entry,
      server.durableObjects,
      server.issuesContexts,
      count,
      fresh,
    );
  }
  return pages;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  try {
    const count = Number(process.argv[2] ?? 40);
    const kinds = process.argv[3]?.split(",") ?? ["edgelink", "alternative"];
    const fresh = process.argv[4] === "fresh";
    const pages = await measureWalPages(count, kinds, fresh);
    console.log(
      `SQLite pages written per ${fresh ? "first SendMessage of a new conversation" : "SendMessage"} (WAL frames, ${count} messages): ${kinds.map((k) => `${k} ${pages[k].toFixed(1)}`).join(", ")}`,
    );
  } finally {
    cleanupTempDirs();
  }
}
