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
 *
 * Scenario (ar), POST /rows, a diagnostic and not a floor (it copies Edgelink's own
 * schema, so no target is set against it): the same route, the object writing what
 * Edgelink writes for a follow-up message in CONTEXT_SCHEMA (its indexes included): the task row
 * inserted working with its state history and its bounds in the log and the history, the
 * user's message in the history; then the artifact, the task completed; two transactions,
 * ids as long as Edgelink's sealed ones. No event row: a task made and ended in one turn
 * with nothing to read its events writes none (their seqs stay used, between the task's
 * floor and ceiling), as Edgelink's task store decides. No zod, no models, no index
 * object, a hand-built answer. (b)/(ar) is what Edgelink's code costs beyond its rows.
 */
import { DurableObject } from "cloudflare:workers";
import { Hono } from "hono";
import { CONTEXT_SCHEMA } from "../src/storage/schema";
import { ensureSchema } from "../src/storage/schema-version";

interface Env {
  FLOOR_CONTEXT: DurableObjectNamespace<FloorContext>;
  FLOOR_ROWS: DurableObjectNamespace<FloorRowsContext>;
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

/** (ar): Edgelink's rows for a follow-up message, written by hand. */
export class FloorRowsContext extends DurableObject<Env> {
  private seq = 0;
  private position = 0;
  private rowSeq = 0;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    ensureSchema(ctx.storage, CONTEXT_SCHEMA);
    // Like Edgelink, the counters are known in memory after one read at start.
    const sql = ctx.storage.sql;
    this.seq = sql
      .exec<{ n: number }>(
        `SELECT MAX(COALESCE((SELECT MAX(seq) FROM events), 0),
           COALESCE((SELECT MAX(event_ceiling) FROM tasks), 0)) AS n`,
      )
      .one().n;
    this.position = sql
      .exec<{ n: number }>("SELECT COALESCE(MAX(seq), 0) AS n FROM history_items")
      .one().n;
    this.rowSeq = sql
      .exec<{ n: number }>("SELECT COALESCE(MAX(row_seq), 0) AS n FROM tasks")
      .one().n;
  }

  async send(contextId: string, message: Record<string, unknown>): Promise<string> {
    const storage = this.ctx.storage;
    const sql = storage.sql;
    // As long as a sealed task id (nonce, the context id encrypted, tag; base64url).
    const taskId = base64url(crypto.getRandomValues(new Uint8Array(28 + contextId.length)));
    message.contextId = contextId;
    message.taskId = taskId;
    const text = `echo: ${textOf(message)}`;
    const at = new Date().toISOString();
    const history = [{ previousState: "submitted", newState: "working", timestamp: at }];
    // The message's place in the history: the task's history floor and, as it ends, ceiling.
    const position = ++this.position;
    storage.transactionSync(() => {
      // The task's conversation-local key is its first row_seq, as Edgelink makes it.
      const rowSeq = ++this.rowSeq;
      sql.exec(
        `INSERT INTO tasks (key, id, context_id, state, status_message, status_timestamp, metadata, state_history, created_at, updated_at, index_pending, row_seq, event_floor, history_floor)
         VALUES (?5, ?1, ?2, 'working', NULL, ?3, '{}', ?4, ?3, ?3, 1, ?5, ?6, ?7)`,
        taskId,
        contextId,
        at,
        JSON.stringify(history),
        rowSeq,
        this.seq + 1,
        position,
      );
      sql.exec(
        "INSERT INTO history_items (id, seq, task_id, type, body, chunks) VALUES (?, ?, ?, 'message', ?, 0)",
        `msg_a2a_${message.messageId}`,
        position,
        taskId,
        JSON.stringify({ type: "message", ...message }),
      );
    });
    const done = new Date().toISOString();
    const artifactId = crypto.randomUUID();
    const part = JSON.stringify({ text });
    history.push({ previousState: "working", newState: "completed", timestamp: done });
    storage.transactionSync(() => {
      sql.exec(
        `INSERT INTO artifacts (task_key, artifact_id, seq, header, parts)
         VALUES ((SELECT key FROM tasks WHERE id = ?1), ?2,
           (SELECT COALESCE(MAX(seq), 0) + 1 FROM artifacts WHERE task_key = (SELECT key FROM tasks WHERE id = ?1)), ?3, ?4)`,
        taskId,
        artifactId,
        JSON.stringify({ artifactId, name: "result" }),
        `[${part}]`,
      );
      sql.exec(
        `UPDATE tasks SET state = 'completed', status_timestamp = ?2, updated_at = ?2, state_history = ?3, row_seq = ?4, index_pending = 1, status_message = NULL, event_ceiling = ?5, history_ceiling = ?6 WHERE id = ?1`,
        taskId,
        done,
        JSON.stringify(history),
        ++this.rowSeq,
        // working, the artifact, completed: three seqs used, no row written.
        this.seq + 3,
        position,
      );
      this.seq += 3;
    });
    return `{"id":"${taskId}","contextId":"${contextId}","status":{"state":"TASK_STATE_COMPLETED","timestamp":"${done}"},"artifacts":[{"artifactId":"${artifactId}","name":"result","parts":[{"text":${JSON.stringify(text)}}]}],"history":[${JSON.stringify(message)}]}`;
  }
}

function base64url(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes))
    .replaceAll("+", "-")
    .replaceAll("/", "_")
    .replace(/=+$/, "");
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

/** (ar): the same route, the object writing Edgelink's rows. */
app.post("/rows", async (c) => {
  const rpc = await c.req.json<Rpc>();
  const message = rpc.params.message;
  const contextId = (message.contextId as string | undefined) ?? crypto.randomUUID();
  const ns = c.env.FLOOR_ROWS;
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
