/**
 * Scenario (a): the minimal durable floor. A bare Hono route on the same workerd that
 * makes one Durable Object RPC, and the object inserts a task row and updates it twice
 * (submitted -> working -> completed): 3 SQLite statements, no transactionSync, one
 * commit. No zod, no models, no index object, no event log; the response is hand-built
 * JSON of the same shape Edgelink answers. It answers "what does the least durable A2A
 * server cost on this platform?", and Edgelink, which persists far more (messages,
 * artifacts, state history, events, the tenant index), is measured against it.
 *
 * Scenario (a0), POST /bare: the same Hono route answering without any Durable Object
 * (it parses the body and builds the same answer), to show what the Worker alone costs.
 *
 * A new object (scenario a') first creates its one table.
 */
import { DurableObject } from "cloudflare:workers";
import { Hono } from "hono";

interface Env {
  FLOOR_CONTEXT: DurableObjectNamespace<FloorContext>;
}

/** One conversation's object: three statements per message. */
export class FloorContext extends DurableObject<Env> {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    ctx.storage.sql.exec(
      `CREATE TABLE IF NOT EXISTS tasks (
        id TEXT PRIMARY KEY, context_id TEXT NOT NULL, state TEXT NOT NULL,
        body TEXT NOT NULL, updated_at TEXT NOT NULL
      )`,
    );
  }

  /** Returns the v1 task as a JSON string; `message` is the request's v1 message. */
  async send(contextId: string, message: Record<string, unknown>): Promise<string> {
    const sql = this.ctx.storage.sql;
    const taskId = `${contextId}.${crypto.randomUUID().replaceAll("-", "")}`;
    message.contextId = contextId;
    message.taskId = taskId;
    const text = `echo: ${textOf(message)}`;
    const at = new Date().toISOString();
    sql.exec(
      "INSERT INTO tasks (id, context_id, state, body, updated_at) VALUES (?, ?, 'submitted', ?, ?)",
      taskId,
      contextId,
      JSON.stringify(message),
      at,
    );
    sql.exec("UPDATE tasks SET state = 'working', updated_at = ? WHERE id = ?", at, taskId);
    const done = new Date().toISOString();
    sql.exec(
      "UPDATE tasks SET state = 'completed', body = ?, updated_at = ? WHERE id = ?",
      text,
      done,
      taskId,
    );
    return `{"id":"${taskId}","contextId":"${contextId}","status":{"state":"TASK_STATE_COMPLETED","timestamp":"${done}"},"artifacts":[{"artifactId":"${crypto.randomUUID()}","name":"result","parts":[{"text":${JSON.stringify(text)}}]}],"history":[${JSON.stringify(message)}]}`;
  }
}

function textOf(message: Record<string, unknown>): string {
  const parts = message.parts as { text?: string }[];
  return parts.map((p) => p.text ?? "").join("");
}

type Rpc = { id: unknown; params: { message: Record<string, unknown> } };

const reply = (id: unknown, task: string) =>
  `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"task":${task}}}`;

const app = new Hono<{ Bindings: Env }>();

app.post("/", async (c) => {
  const rpc = await c.req.json<Rpc>();
  const message = rpc.params.message;
  const contextId = (message.contextId as string | undefined) ?? crypto.randomUUID();
  const ns = c.env.FLOOR_CONTEXT;
  const task = await ns.get(ns.idFromName(`/${contextId}`)).send(contextId, message);
  return c.body(reply(rpc.id, task), 200, { "Content-Type": "application/json" });
});

/** (a0): the route alone, no storage: parse, build the same answer, reply. */
app.post("/bare", async (c) => {
  const rpc = await c.req.json<Rpc>();
  const message = rpc.params.message;
  const contextId = (message.contextId as string | undefined) ?? crypto.randomUUID();
  const taskId = `${contextId}.${crypto.randomUUID().replaceAll("-", "")}`;
  message.taskId = taskId;
  const text = `echo: ${textOf(message)}`;
  const task = `{"id":"${taskId}","contextId":"${contextId}","status":{"state":"TASK_STATE_COMPLETED","timestamp":"${new Date().toISOString()}"},"artifacts":[{"artifactId":"${crypto.randomUUID()}","name":"result","parts":[{"text":${JSON.stringify(text)}}]}],"history":[${JSON.stringify(message)}]}`;
  return c.body(reply(rpc.id, task), 200, { "Content-Type": "application/json" });
});

export default app;
