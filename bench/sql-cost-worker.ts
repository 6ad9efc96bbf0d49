/**
 * bench/sql-cost.mjs's worker: one Durable Object class that does one of six things per
 * call, so their costs can be told apart (see that file):
 *
 * - `call`: nothing, the object call alone;
 * - `floor`: the floor's 3 statements (bench/floor-worker.ts: insert a task, update it twice);
 * - `sdk`: what scenario (e)'s object (bench/sdk-do-worker.ts) writes and reads for one echo
 *   message: the task as one JSON row, loaded and then saved as each of its 4 events
 *   arrives (as @a2a-js/sdk's result manager does; the first load finds nothing);
 * - `store`: what Edgelink's TaskStore writes for one echo message, through the real store
 *   on Edgelink's real schema (a task created working with its message in the
 *   conversation history, then its artifact and its completion in one transaction: the
 *   same 6 statements in 2 transactions as a blocking SendMessage), and a read of the task
 *   as the answer renders it;
 * - `merged`: the same rows as `store` (copied from one echo it wrote), but the task
 *   inserted already completed and everything in one transaction of 4 statements: what
 *   merging a fast handler's two transactions could save at most;
 * - `alarm`: one `setAlarm` that moves the object's alarm (10 s and 60 s ahead in turn), as
 *   a conversation's index backstop and its settling do once each per quiet turn.
 *
 * The Worker in front is one `fetch` that calls the object and answers its string.
 */
import { DurableObject } from "cloudflare:workers";
import { HistoryStore } from "../src/conversation/history/history-store";
import { TaskStore } from "../src/conversation/tasks/task-store";
import type { Item } from "../src/history/items";
import type { Message } from "../src/protocol/message";
import { submittedTask } from "../src/protocol/task";
import { CONTEXT_SCHEMA } from "../src/storage/schema";
import { ensureSchema } from "../src/storage/schema-version";
import { createTaskRows, loadTaskRow, saveTaskRow } from "./sdk-task-rows";

interface Env {
  SQL_COST: DurableObjectNamespace<SqlCost>;
}

const KINDS = ["call", "floor", "sdk", "store", "merged", "alarm"] as const;
type Kind = (typeof KINDS)[number];

/** The index acknowledges what it was sent about this often (as `limits.indexFlushMs` does). */
const ACK_EVERY = 50;

export class SqlCost extends DurableObject<Env> {
  private readonly store: TaskStore;
  private calls = 0;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    ensureSchema(ctx.storage, CONTEXT_SCHEMA);
    ctx.storage.sql.exec(
      `CREATE TABLE IF NOT EXISTS floor_tasks (
        id TEXT PRIMARY KEY, context_id TEXT NOT NULL, state TEXT NOT NULL,
        body TEXT NOT NULL, updated_at TEXT NOT NULL
      )`,
    );
    createTaskRows(ctx.storage.sql);
    this.store = new TaskStore(ctx.storage, new HistoryStore<Item>(ctx.storage, 1 << 20));
  }

  async run(kind: Kind, contextId: string, text: string): Promise<string> {
    const taskId = `${contextId}.${crypto.randomUUID().replaceAll("-", "")}`;
    if (kind === "floor") this.floor(taskId, contextId, text);
    else if (kind === "sdk") this.sdk(taskId, contextId, text);
    else if (kind === "store") return this.echo(taskId, contextId, text);
    else if (kind === "merged") return this.merged(taskId, contextId, text);
    else if (kind === "alarm")
      await this.ctx.storage.setAlarm(Date.now() + (++this.calls % 2 ? 10_000 : 60_000));
    return taskId;
  }

  /** The `alarm` kind's alarms are never due while it runs; one that fires does nothing. */
  override async alarm(): Promise<void> {}

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

  /** `sdk`: the task saved as its events arrive (submitted, working, artifact, completed). */
  private sdk(taskId: string, contextId: string, text: string): void {
    const sql = this.ctx.storage.sql;
    const task: Record<string, unknown> = {
      id: taskId,
      contextId,
      status: { state: 1, timestamp: new Date().toISOString() },
      artifacts: [],
      history: [
        {
          messageId: crypto.randomUUID(),
          role: 1,
          parts: [{ content: { $case: "text", value: text } }],
        },
      ],
    };
    const save = () => saveTaskRow(sql, taskId, contextId, JSON.stringify(task));
    const load = () => loadTaskRow(sql, taskId);
    load();
    save();
    load();
    task.status = { state: 2, timestamp: new Date().toISOString() };
    save();
    load();
    const part = { content: { $case: "text", value: `echo: ${text}` } };
    task.artifacts = [{ artifactId: crypto.randomUUID(), name: "result", parts: [part] }];
    save();
    load();
    task.status = { state: 3, timestamp: new Date().toISOString() };
    save();
  }

  /** `merged`'s rows: one echo's, as `store` wrote them. */
  private template: {
    task: Record<string, SqlStorageValue>;
    item: Record<string, SqlStorageValue>;
    artifact: Record<string, SqlStorageValue>;
    events: Record<string, SqlStorageValue>[];
  } | null = null;
  private seq = 0;
  private eventSeq = 0;

  /** `store`'s rows for one echo message, the task written once (completed), one transaction. */
  private merged(taskId: string, contextId: string, text: string): string {
    const sql = this.ctx.storage.sql;
    if (!this.template) {
      const id = this.echo(`${contextId}.template.${crypto.randomUUID()}`, contextId, text);
      this.template = {
        task: sql.exec("SELECT * FROM tasks WHERE id = ?", id).one(),
        item: sql.exec("SELECT * FROM history_items WHERE task_id = ?", id).one(),
        artifact: sql.exec("SELECT * FROM artifacts WHERE task_id = ?", id).one(),
        events: sql.exec("SELECT * FROM events WHERE task_id = ?", id).toArray(),
      };
      this.seq = Number(sql.exec("SELECT MAX(seq) AS s FROM history_items").one().s) + 1;
      this.eventSeq = Number(sql.exec("SELECT MAX(seq) AS s FROM events").one().s) + 1;
    }
    const t = this.template;
    this.ctx.storage.transactionSync(() => {
      const now = new Date().toISOString();
      sql.exec(
        `INSERT INTO tasks (id, context_id, state, status_message, status_timestamp, metadata, state_history, created_at, updated_at, index_pending, row_seq) VALUES (?1, ?2, ?3, NULL, ?4, ?5, ?6, ?7, ?4, 1, ?8)`,
        taskId,
        contextId,
        "completed",
        now,
        t.task.metadata,
        t.task.state_history,
        now,
        this.seq,
      );
      sql.exec(
        "INSERT INTO history_items (id, seq, task_id, type, body, chunks) VALUES (?, ?, ?, ?, ?, 0)",
        crypto.randomUUID(),
        this.seq++,
        taskId,
        t.item.type,
        t.item.body,
      );
      sql.exec(
        "INSERT INTO artifacts (task_id, artifact_id, seq, header, parts) VALUES (?1, ?2, 1, ?3, ?4)",
        taskId,
        crypto.randomUUID(),
        t.artifact.header,
        t.artifact.parts,
      );
      const e = t.events;
      sql.exec(
        "INSERT INTO events (seq, task_id, body) VALUES (?1, ?2, ?3), (?1 + 1, ?2, ?4), (?1 + 2, ?2, ?5)",
        this.eventSeq,
        taskId,
        e[0]?.body ?? "",
        e[1]?.body ?? "",
        e[2]?.body ?? "",
      );
      this.eventSeq += 3;
    });
    return taskId;
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
    if (!(KINDS as readonly string[]).includes(kind)) {
      return new Response(`kind must be one of ${KINDS.join(", ")}`, { status: 400 });
    }
    const stub = env.SQL_COST.get(env.SQL_COST.idFromName(contextId));
    return new Response(await stub.run(kind, contextId, "hello"));
  },
};
