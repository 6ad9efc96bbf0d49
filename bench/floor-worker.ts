/**
 * Scenario (a): the platform floor. A bare Hono route on the same workerd that does the
 * I/O Edgelink does for one blocking SendMessage, and nothing else: no zod, no models,
 * no rendering; the response is hand-built JSON from the stored bodies.
 *
 * I/O mirrored, in Edgelink's order and with its SQL text (src/durable/task-store.ts,
 * context-object.ts, index-object.ts, schema.ts), for a new task in an existing context:
 *
 *   Worker -> context object: 1 RPC.
 *   Context object, 36 statements in 4 transactionSync blocks (37 on an object's first
 *   call, which also claims it for its tenant and context):
 *     claim (once)     1  INSERT meta (tenant, context_id) ON CONFLICT DO NOTHING
 *     create (txn)     4  INSERT tasks / SELECT MAX(seq) history_items /
 *                         INSERT history_items / INSERT index_outbox..SELECT
 *     ->working        1  SELECT * tasks
 *              (txn)   4  INSERT state_history / UPDATE tasks / INSERT events RETURNING /
 *                         INSERT index_outbox..SELECT
 *     run: read task   5  SELECT tasks, history_items, state_history, artifact_parts, artifacts
 *     after handler    1  SELECT state
 *     artifact guard   1  SELECT state
 *     putArtifact      1  SELECT * tasks
 *              (txn)   5  SELECT COUNT artifact_parts / SELECT 1 artifacts /
 *                         INSERT artifacts / INSERT artifact_parts / INSERT events RETURNING
 *     complete guard   1  SELECT state
 *     ->completed      1  SELECT * tasks
 *              (txn)   4  INSERT state_history / UPDATE tasks / INSERT events RETURNING /
 *                         INSERT index_outbox..SELECT
 *     flush outbox     3  SELECT index_outbox / SELECT meta tenant / SELECT meta context_id
 *     -> index object: 1 RPC, 1 statement in 1 transactionSync (INSERT task_index ON
 *                         CONFLICT DO UPDATE)
 *     acknowledge      1  DELETE index_outbox
 *     read-back        5  SELECT tasks, history_items, state_history, artifact_parts, artifacts
 *   A new object first runs the schema migration (12 statements, 10 of them CREATE TABLE/
 *   INDEX, in 1 transactionSync) and the restart check (SELECT id FROM tasks WHERE state
 *   IN ...), as Edgelink's does; a new index object, its own migration (5 statements).
 *
 * The awaits match too (only the index RPC is real I/O), so both commit the context's
 * SQLite database twice per request (before the index RPC and after the acknowledge) and
 * the index's once: three synced commits, as strace shows for both.
 *
 * bench/run.mjs checks this list against Edgelink at run time: it runs both workers with
 * every sql.exec and transactionSync logged and compares the statement lists.
 */
import { DurableObject } from "cloudflare:workers";
import { Hono } from "hono";
// The table definitions only (plain SQL strings), so both write into identical tables.
// The real migration runner too: schema work is the platform's cost, not the framework's.
import { CONTEXT_MIGRATIONS, INDEX_MIGRATIONS, migrate } from "../src/durable/schema";

interface Env {
  FLOOR_CONTEXT: DurableObjectNamespace<FloorContext>;
  FLOOR_INDEX: DurableObjectNamespace<FloorIndex>;
}

interface IndexRow {
  taskId: string;
  contextId: string;
  state: string;
  createdAt: string;
  updatedAt: string;
}

// The SQL text below is copied from src/durable/task-store.ts and context-object.ts.
const Q = {
  claim:
    "INSERT INTO meta (key, value) VALUES ('tenant', ?), ('context_id', ?) ON CONFLICT (key) DO NOTHING",
  insertTask: `INSERT INTO tasks (id, context_id, state, status_message, status_timestamp, metadata, created_at, updated_at)
         VALUES (?, ?, ?, NULL, ?, ?, ?, ?)`,
  lastSeq: "SELECT MAX(seq) AS s FROM history_items",
  insertItem:
    "INSERT INTO history_items (id, seq, task_id, type, body, chunks) VALUES (?, ?, ?, ?, ?, 0)",
  touchIndex: `INSERT INTO index_outbox (task_id, state, created_at, updated_at)
       SELECT id, state, created_at, updated_at FROM tasks WHERE id = ?
       ON CONFLICT (task_id) DO UPDATE SET state = excluded.state, updated_at = excluded.updated_at`,
  row: "SELECT * FROM tasks WHERE id = ?",
  state: "SELECT state FROM tasks WHERE id = ?",
  insertHistory: `INSERT INTO state_history (task_id, seq, previous_state, new_state, timestamp)
           VALUES (?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM state_history WHERE task_id = ?), ?, ?, ?)`,
  setStatus:
    "UPDATE tasks SET state = ?, status_message = ?, status_timestamp = ?, updated_at = ? WHERE id = ?",
  logEvent: "INSERT INTO events (task_id, body) VALUES (?, ?) RETURNING seq",
  readMessages: "SELECT * FROM history_items WHERE task_id = ? ORDER BY seq",
  readHistory:
    "SELECT previous_state, new_state, timestamp FROM state_history WHERE task_id = ? ORDER BY seq",
  readParts:
    "SELECT artifact_id, body FROM artifact_parts WHERE task_id = ? ORDER BY artifact_id, idx",
  readArtifacts: "SELECT artifact_id, header FROM artifacts WHERE task_id = ? ORDER BY seq",
  countParts:
    "SELECT COALESCE(MAX(idx) + 1, 0) AS n FROM artifact_parts WHERE task_id = ? AND artifact_id = ?",
  knownArtifact: "SELECT 1 FROM artifacts WHERE task_id = ? AND artifact_id = ?",
  insertArtifact: `INSERT INTO artifacts (task_id, artifact_id, seq, header)
             VALUES (?, ?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM artifacts WHERE task_id = ?), ?)`,
  insertPart: "INSERT INTO artifact_parts (task_id, artifact_id, idx, body) VALUES (?, ?, ?, ?)",
  outbox: "SELECT task_id, state, created_at, updated_at FROM index_outbox",
  meta: "SELECT value FROM meta WHERE key = ?",
  acknowledge: "DELETE FROM index_outbox WHERE task_id = ? AND updated_at = ? AND state = ?",
  orphans: "SELECT id FROM tasks WHERE state IN (?, ?)",
  upsertIndex: `INSERT INTO task_index (task_id, context_id, state, created_at, updated_at)
           VALUES (?, ?, ?, ?, ?)
           ON CONFLICT (task_id) DO UPDATE SET state = excluded.state, updated_at = excluded.updated_at
           WHERE excluded.updated_at >= task_index.updated_at`,
} as const;

/** A conversation's object: the rows of one blocking SendMessage, then the task back. */
export class FloorContext extends DurableObject<Env> {
  private claimed = false;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    migrate(ctx.storage, CONTEXT_MIGRATIONS);
    void ctx.blockConcurrencyWhile(async () => {
      ctx.storage.sql.exec(Q.orphans, "submitted", "working").toArray();
    });
  }

  /** Returns the v1 task as a JSON string; `message` is the request's v1 message. */
  async send(tenant: string, contextId: string, message: Record<string, unknown>) {
    const storage = this.ctx.storage;
    const sql = storage.sql;
    const all = (query: string, ...args: SqlStorageValue[]) => sql.exec(query, ...args).toArray();

    if (!this.claimed) {
      this.claimed = true;
      sql.exec(Q.claim, tenant, contextId);
    }
    const taskId = `${contextId}.${crypto.randomUUID().replaceAll("-", "")}`;
    message.contextId = contextId;
    message.taskId = taskId;
    const messageBody = JSON.stringify(message);
    const created = new Date().toISOString();
    storage.transactionSync(() => {
      sql.exec(Q.insertTask, taskId, contextId, "submitted", created, "{}", created, created);
      const seq = (sql.exec<{ s: number | null }>(Q.lastSeq).one().s ?? 0) + 1;
      const itemId = `msg_${crypto.randomUUID()}`;
      const item = `{"type":"message","id":"${itemId}","createdAt":"${created}","role":"user","content":[${JSON.stringify(textOf(message))}],"interrupted":false,"extra":{"a2a":${messageBody}}}`;
      sql.exec(Q.insertItem, itemId, seq, taskId, "message", item);
      sql.exec(Q.touchIndex, taskId);
    });

    const transition = (from: string, to: string) => {
      all(Q.row, taskId);
      storage.transactionSync(() => {
        const at = new Date().toISOString();
        sql.exec(Q.insertHistory, taskId, taskId, from, to, at);
        sql.exec(Q.setStatus, to, null, at, at, taskId);
        const event = `{"kind":"status-update","taskId":"${taskId}","contextId":"${contextId}","status":{"state":"${to}","message":null,"timestamp":"${at}"},"final":${to === "completed"}}`;
        sql.exec(Q.logEvent, taskId, event).one();
        sql.exec(Q.touchIndex, taskId);
      });
    };
    const readTask = () => {
      const row = all(Q.row, taskId)[0];
      const history = all(Q.readMessages, taskId);
      const states = all(Q.readHistory, taskId);
      const parts = all(Q.readParts, taskId);
      const artifacts = all(Q.readArtifacts, taskId);
      return { row, history, states, parts, artifacts };
    };

    transition("submitted", "working");
    readTask();
    await Promise.resolve(); // the handler call: `await agent.handler(run)`
    all(Q.state, taskId);

    // The echo's result artifact.
    all(Q.state, taskId);
    all(Q.row, taskId);
    const artifactId = crypto.randomUUID();
    const partBody = `{"type":"text","content":${JSON.stringify(`echo: ${textOf(message)}`)}}`;
    storage.transactionSync(() => {
      sql.exec(Q.countParts, taskId, artifactId).one();
      all(Q.knownArtifact, taskId, artifactId);
      const header = `{"artifactId":"${artifactId}","name":"result","description":null,"metadata":{},"kind":"result"}`;
      sql.exec(Q.insertArtifact, taskId, artifactId, taskId, header);
      sql.exec(Q.insertPart, taskId, artifactId, 0, partBody);
      const event = `{"kind":"artifact-update","taskId":"${taskId}","contextId":"${contextId}","artifact":${header.slice(0, -1)},"parts":[${partBody}]},"append":false,"lastChunk":false}`;
      sql.exec(Q.logEvent, taskId, event).one();
    });

    all(Q.state, taskId);
    transition("working", "completed");

    // Flush the outbox to the tenant's index object, then acknowledge.
    const outbox = all(Q.outbox);
    const metaTenant = all(Q.meta, "tenant")[0]?.value as string;
    all(Q.meta, "context_id");
    const rows: IndexRow[] = outbox.map((r) => ({
      taskId: r.task_id as string,
      contextId,
      state: r.state as string,
      createdAt: r.created_at as string,
      updatedAt: r.updated_at as string,
    }));
    const index = this.env.FLOOR_INDEX;
    await index.get(index.idFromName(`index/${encodeURIComponent(metaTenant)}`)).upsert(rows);
    for (const r of rows) sql.exec(Q.acknowledge, r.taskId, r.updatedAt, r.state);

    const t = readTask();
    const row = t.row as Record<string, string>;
    return `{"id":"${taskId}","contextId":"${contextId}","status":{"state":"TASK_STATE_${row.state.toUpperCase()}","timestamp":"${row.status_timestamp}"},"artifacts":[{"artifactId":"${artifactId}","name":"result","parts":[{"text":${JSON.stringify(`echo: ${textOf(message)}`)}}]}],"history":[${t.history.map((h) => JSON.stringify(JSON.parse(h.body as string).extra.a2a)).join(",")}]}`;
  }
}

function textOf(message: Record<string, unknown>): string {
  const parts = message.parts as { text?: string }[];
  return parts.map((p) => p.text ?? "").join("");
}

/** The tenant index: one upsert per flush, as src/durable/index-object.ts. */
export class FloorIndex extends DurableObject<Env> {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    migrate(ctx.storage, INDEX_MIGRATIONS);
  }

  async upsert(rows: IndexRow[]): Promise<void> {
    const sql = this.ctx.storage.sql;
    this.ctx.storage.transactionSync(() => {
      for (const r of rows) {
        sql.exec(Q.upsertIndex, r.taskId, r.contextId, r.state, r.createdAt, r.updatedAt);
      }
    });
  }
}

const app = new Hono<{ Bindings: Env }>();

app.post("/", async (c) => {
  const rpc = await c.req.json<{ id: unknown; params: { message: Record<string, unknown> } }>();
  const message = rpc.params.message;
  const contextId = (message.contextId as string | undefined) ?? crypto.randomUUID();
  const ns = c.env.FLOOR_CONTEXT;
  const task = await ns.get(ns.idFromName(`/${contextId}`)).send("", contextId, message);
  return c.body(`{"jsonrpc":"2.0","id":${JSON.stringify(rpc.id)},"result":{"task":${task}}}`, 200, {
    "Content-Type": "application/json",
  });
});

export default app;
