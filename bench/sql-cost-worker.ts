/**
 * bench/sql-cost.mjs's worker: one Durable Object class that does one of three things per
 * call, so their costs can be told apart (see that file):
 *
 * - `call`: nothing, the object call alone;
 * - `floor`: the floor's 3 statements (bench/floor-worker.ts: insert a task, update it twice);
 * - `store`: what Edgelink's TaskStore writes for one echo message, through the real store
 *   on Edgelink's real schema (a task created working with its message in the
 *   conversation history, then its artifact and its completion in one transaction: the
 *   same 6 statements in 2 transactions as a blocking SendMessage), and a read of the task
 *   as the answer renders it.
 *
 * The Worker in front is one `fetch` that calls the object and answers its string.
 */
import { DurableObject } from "cloudflare:workers";
import { HistoryStore } from "../src/durable/history-store";
import { CONTEXT_FRESH, CONTEXT_MIGRATIONS, migrate } from "../src/durable/schema";
import { TaskStore } from "../src/durable/task-store";
import type { Item } from "../src/history/items";
import type { Message } from "../src/models/message";
import { submittedTask } from "../src/models/task";

interface Env {
  SQL_COST: DurableObjectNamespace<SqlCost>;
}

type Kind = "call" | "floor" | "store";

/** The index acknowledges what it was sent about this often (as `limits.indexFlushMs` does). */
const ACK_EVERY = 50;

export class SqlCost extends DurableObject<Env> {
  private readonly store: TaskStore;
  private calls = 0;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    migrate(ctx.storage, CONTEXT_MIGRATIONS, CONTEXT_FRESH);
    ctx.storage.sql.exec(
      `CREATE TABLE IF NOT EXISTS floor_tasks (
        id TEXT PRIMARY KEY, context_id TEXT NOT NULL, state TEXT NOT NULL,
        body TEXT NOT NULL, updated_at TEXT NOT NULL
      )`,
    );
    this.store = new TaskStore(ctx.storage, new HistoryStore<Item>(ctx.storage, 1 << 20));
  }

  async run(kind: Kind, contextId: string, text: string): Promise<string> {
    const taskId = `${contextId}.${crypto.randomUUID().replaceAll("-", "")}`;
    if (kind === "floor") this.floor(taskId, contextId, text);
    else if (kind === "store") return this.echo(taskId, contextId, text);
    return taskId;
  }

  /** The floor's statements, as bench/floor-worker.ts runs them. */
  private floor(taskId: string, contextId: string, text: string): void {
    const sql = this.ctx.storage.sql;
    const at = new Date().toISOString();
    sql.exec(
      "INSERT INTO floor_tasks (id, context_id, state, body, updated_at) VALUES (?, ?, 'submitted', ?, ?)",
      taskId,
      contextId,
      JSON.stringify({ role: "ROLE_USER", parts: [{ text }] }),
      at,
    );
    sql.exec("UPDATE floor_tasks SET state = 'working', updated_at = ? WHERE id = ?", at, taskId);
    sql.exec(
      "UPDATE floor_tasks SET state = 'completed', body = ?, updated_at = ? WHERE id = ?",
      `echo: ${text}`,
      new Date().toISOString(),
      taskId,
    );
  }

  /** The store's writes and read for one echo message (as ContextObject.admit/execute). */
  private echo(taskId: string, contextId: string, text: string): string {
    const now = new Date().toISOString();
    const message: Message = {
      messageId: crypto.randomUUID(),
      role: "user",
      parts: [{ type: "text", content: text }],
      contextId,
      taskId,
    };
    const submitted = submittedTask(taskId, contextId, message, now);
    const store = this.store;
    store.atomic(() => store.create(submitted, true));
    store.atomic(() => {
      store.putArtifact(
        taskId,
        {
          artifactId: crypto.randomUUID(),
          name: "result",
          parts: [{ type: "text", content: `echo: ${text}` }],
        },
        { append: false, lastChunk: true },
      );
      store.transition(taskId, "completed");
    });
    if (++this.calls % ACK_EVERY === 0) store.acknowledge(store.outbox());
    const task = store.read(taskId);
    if (task?.status.state !== "completed") throw new Error(`task ${taskId} did not complete`);
    return task.id;
  }
}

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const url = new URL(request.url);
    const kind = url.searchParams.get("kind") as Kind;
    const contextId = url.searchParams.get("context") ?? "c0";
    if (!["call", "floor", "store"].includes(kind)) {
      return new Response("kind must be call, floor or store", { status: 400 });
    }
    const stub = env.SQL_COST.get(env.SQL_COST.idFromName(contextId));
    return new Response(await stub.run(kind, contextId, "hello"));
  },
};
