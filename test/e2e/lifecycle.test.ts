/**
 * The loop a developer lives in, on the state it leaves: `wrangler dev` serving an agent
 * with tasks, an input-required task, a webhook whose receiver is down, and memory behind
 * API keys; stopped with Ctrl-C, started again; killed with SIGKILL, started again; a source
 * file saved so it hot-reloads. After each, every route still answers and nothing that was
 * acknowledged is lost: tasks (found by the ids issued before, with no EDGELINK_ID_KEY
 * set), their listing, the pending webhook delivery, the memory.
 */
// @ts-nocheck -- Node-only test (the repository has no @types/node).
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DevServer, freePort, startDev } from "./support/dev-server";

const REPO = decodeURIComponent(new URL("../../", import.meta.url).pathname).replace(/\/$/, "");
const KEY = "lifecycle-user-key-0123456789";

/** The agent's source, as the developer edits it: `revision` is what a hot reload changes. */
function agentSource(revision: number): string {
  return `import { defineAgent, textOf } from ${JSON.stringify(`${REPO}/src/index`)};
import { memory } from ${JSON.stringify(`${REPO}/src/memory/index`)};

const REVISION = ${revision};

const worker = defineAgent({
  card: { name: "Lifecycle agent", description: "Asks, answers, waits" },
  auth: { apiKeys: { secret: "AGENT_API_KEYS" } },
  memory: memory({ api: true }),
  push: {},
  async handler(ctx) {
    const text = textOf(ctx.message.parts).trim();
    if (ctx.task.stateHistory.some((s) => s.newState === "input-required")) {
      return \`rev \${REVISION}: thanks, \${text}\`;
    }
    if (text === "ask") return ctx.requestInput("What is your name?");
    if (text === "slow") await new Promise((r) => setTimeout(r, 1500));
    return \`rev \${REVISION}: \${text}\`;
  },
});

export const { EdgelinkContext, EdgelinkIndex, EdgelinkMemory } = worker;
export default worker;
`;
}

const CONFIG = `name = "edgelink-lifecycle"
main = "agent.ts"
compatibility_date = "2026-11-01"
compatibility_flags = ["nodejs_compat"]

[[durable_objects.bindings]]
name = "EDGELINK_CONTEXT"
class_name = "EdgelinkContext"

[[durable_objects.bindings]]
name = "EDGELINK_INDEX"
class_name = "EdgelinkIndex"

[[durable_objects.bindings]]
name = "EDGELINK_MEMORY"
class_name = "EdgelinkMemory"

[[migrations]]
tag = "v1"
new_sqlite_classes = ["EdgelinkContext", "EdgelinkIndex", "EdgelinkMemory"]
`;

type Json = Record<string, unknown>;

let dir: string;
let port: number;
let server: DevServer;
let hook: ReturnType<typeof createServer>;
let hookUrl: string;
/** While true, the webhook receiver answers 503 (Retry-After: 1). */
let receiverDown = true;
const delivered: string[] = [];

function start(): Promise<DevServer> {
  return startDev({
    cwd: dir,
    command: [
      join(REPO, "node_modules", ".bin", "wrangler"),
      "dev",
      "--persist-to",
      join(dir, "state"),
      "--var",
      `AGENT_API_KEYS:${KEY}`,
    ],
    port,
  });
}

async function call(
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: Json }> {
  const response = await fetch(`${server.baseUrl}${path}`, {
    method,
    headers: {
      "X-API-Key": KEY,
      "A2A-Version": "1.0",
      ...(body ? { "Content-Type": "application/json" } : {}),
    },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  const text = await response.text();
  let parsed: Json = {};
  try {
    parsed = text ? (JSON.parse(text) as Json) : {};
  } catch {
    parsed = { text };
  }
  return { status: response.status, body: parsed };
}

async function send(text: string, extra: Json = {}, configuration: Json = {}): Promise<Json> {
  const { status, body } = await call("POST", "/message:send", {
    message: { messageId: crypto.randomUUID(), role: "ROLE_USER", parts: [{ text }], ...extra },
    configuration,
  });
  expect(status, JSON.stringify(body)).toBe(200);
  const task = body.task as Json;
  if (!made.ids.includes(task.id)) made.ids.push(task.id);
  return task;
}

const textOf = (task: Json) =>
  ((task.artifacts as Json[]) ?? [])
    .flatMap((a) => a.parts as Json[])
    .map((p) => p.text ?? "")
    .join("");

async function until<T>(
  check: () => Promise<T | undefined> | T | undefined,
  ms = 20_000,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out\n${server?.output().slice(-3000)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** What the developer made before each restart, checked after it. */
const made: { done?: Json; asking?: Json; pushed?: Json; contextId?: string; ids: unknown[] } = {
  ids: [],
};

/** Every kind of route answers, and everything acknowledged is still there. */
async function checkEverything(stage: string): Promise<void> {
  const card = await call("GET", "/.well-known/agent-card.json");
  expect(card.status, `${stage}: card ${JSON.stringify(card.body)}`).toBe(200);
  const done = await call("GET", `/tasks/${made.done?.id}`);
  expect(done.status, `${stage}: GetTask ${JSON.stringify(done.body)}`).toBe(200);
  expect(textOf(done.body)).toBe("rev 1: first");
  const asking = await call("GET", `/tasks/${made.asking?.id}`);
  expect(asking.status, stage).toBe(200);
  const listed = await call("GET", `/tasks?contextId=${made.contextId}`);
  expect(listed.status, `${stage}: ListTasks ${JSON.stringify(listed.body)}`).toBe(200);
  expect((listed.body.tasks as Json[]).map((t) => t.id).sort()).toEqual([...made.ids].sort());
  const facts = await call("GET", "/memory?kind=fact");
  expect(facts.status, `${stage}: memory ${JSON.stringify(facts.body)}`).toBe(200);
  expect((facts.body.items as Json[]).map((f) => f.claim)).toContain("The user lives in Lisbon");
  const configs = await call("GET", `/tasks/${made.pushed?.id}/pushNotificationConfigs`);
  expect(configs.status, stage).toBe(200);
  // A new task in the same conversation still works.
  const next = await send(`after ${stage}`, { contextId: made.contextId });
  expect(next.status).toMatchObject({ state: "TASK_STATE_COMPLETED" });
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "edgelink-lifecycle-"));
  writeFileSync(join(dir, "wrangler.toml"), CONFIG);
  writeFileSync(join(dir, "agent.ts"), agentSource(1));
  port = await freePort();
  hook = createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (chunk: string) => (body += chunk));
    req.on("end", () => {
      if (receiverDown) {
        res.statusCode = 503;
        res.setHeader("Retry-After", "1");
      } else {
        delivered.push(body);
        res.statusCode = 200;
      }
      res.end();
    });
  });
  await new Promise<void>((resolve) => hook.listen(0, "127.0.0.1", resolve));
  hookUrl = `http://127.0.0.1:${hook.address().port}/hook`;
  server = await start();
}, 120_000);

afterAll(async () => {
  await server?.kill();
  await new Promise((resolve) => hook?.close(resolve));
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("wrangler dev stopped, killed and reloaded on the state it left", () => {
  it("B1: tasks, an input-required task, a pending webhook and memory outlive Ctrl-C, SIGKILL and a hot reload", async () => {
    // The work, acknowledged before anything stops.
    made.done = await send("first");
    made.contextId = String(made.done.contextId);
    expect(textOf(made.done)).toBe("rev 1: first");
    made.asking = await send("ask", { contextId: made.contextId });
    expect(made.asking.status).toMatchObject({ state: "TASK_STATE_INPUT_REQUIRED" });
    made.pushed = await send("slow", { contextId: made.contextId }, { returnImmediately: true });
    const config = await call("POST", `/tasks/${made.pushed.id}/pushNotificationConfigs`, {
      url: hookUrl,
      token: "lifecycle",
    });
    expect(config.status, JSON.stringify(config.body)).toBe(200);
    const fact = await call("POST", "/memory/facts", { claim: "The user lives in Lisbon" });
    expect(fact.status, JSON.stringify(fact.body)).toBe(200);
    // The slow task ends while the receiver is down: its delivery waits, retried.
    await until(async () => {
      const got = await call("GET", `/tasks/${made.pushed?.id}`);
      return (got.body.status as Json)?.state === "TASK_STATE_COMPLETED" ? true : undefined;
    });

    // Ctrl-C, and again on the same state.
    await server.stop();
    server = await start();
    await checkEverything("a clean stop");
    // The receiver comes back: the delivery acknowledged before the stop arrives now.
    receiverDown = false;
    await until(() =>
      delivered.some(
        (b) => b.includes(String(made.pushed?.id)) && b.includes("TASK_STATE_COMPLETED"),
      )
        ? true
        : undefined,
    );

    // SIGKILL: nothing gets to finish; what was acknowledged is on disk.
    await server.kill();
    server = await start();
    await checkEverything("SIGKILL");
    // The input-required task resumes where it stopped.
    const answered = await send("Ana", { taskId: made.asking.id, contextId: made.contextId });
    expect(answered.status).toMatchObject({ state: "TASK_STATE_COMPLETED" });
    expect(textOf(answered)).toBe("rev 1: thanks, Ana");

    // A saved source file: wrangler dev reloads the Worker, the state stays.
    writeFileSync(join(dir, "agent.ts"), agentSource(2));
    await until(async () => {
      const task = await send("which revision?", { contextId: made.contextId });
      return textOf(task).startsWith("rev 2") ? true : undefined;
    }, 60_000);
    await checkEverything("a hot reload");
    expect(server.output()).not.toContain("StorageOutdated");
  }, 240_000);
});
