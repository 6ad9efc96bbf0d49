import { DurableObject } from "cloudflare:workers";
import { A2AError } from "../models/errors";
import type { TaskState } from "../models/task-state";
import { type Cursor, decodeCursor, encodeCursor } from "./ids";
import { INDEX_MIGRATIONS, migrate } from "./schema";

/** One task's entry in a tenant's index: enough to filter, sort and find its object. */
export interface IndexRow {
  taskId: string;
  contextId: string;
  state: string;
  createdAt: string;
  updatedAt: string;
}

export interface IndexQuery {
  state?: TaskState;
  statusTimestampAfter?: string;
  pageSize: number;
  pageToken?: string;
}

export interface IndexPage {
  rows: { taskId: string; contextId: string }[];
  totalSize: number;
  nextPageToken: string;
}

/** The index's RPC surface as callers use it (see ContextRpc for why). */
export type IndexRpc = Pick<IndexObject, "upsert" | "query">;

/**
 * A tenant's task index, for ListTasks across conversations. Conversation objects push
 * rows here after each state change (from a transactional outbox, so none is lost);
 * the index only answers which tasks, in which order, and where they live.
 */
export class IndexObject<Env = unknown> extends DurableObject<Env> {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    migrate(ctx.storage, INDEX_MIGRATIONS);
  }

  /** Applies rows; an older update never overwrites a newer one. */
  async upsert(rows: IndexRow[]): Promise<void> {
    const sql = this.ctx.storage.sql;
    this.ctx.storage.transactionSync(() => {
      for (const r of rows) {
        sql.exec(
          `INSERT INTO task_index (task_id, context_id, state, created_at, updated_at)
           VALUES (?, ?, ?, ?, ?)
           ON CONFLICT (task_id) DO UPDATE SET state = excluded.state, updated_at = excluded.updated_at
           WHERE excluded.updated_at >= task_index.updated_at`,
          r.taskId,
          r.contextId,
          r.state,
          r.createdAt,
          r.updatedAt,
        );
      }
    });
  }

  async query(q: IndexQuery): Promise<IndexPage> {
    const sql = this.ctx.storage.sql;
    let cursor: Cursor | null = null;
    if (q.pageToken) {
      cursor = decodeCursor(q.pageToken);
      if (!cursor) {
        throw new A2AError("InvalidParams", "pageToken is not a token this server issued", {}, [
          { field: "params.pageToken", description: "unknown page token" },
        ]);
      }
    }
    const where: string[] = [];
    const args: SqlStorageValue[] = [];
    if (q.state) {
      where.push("state = ?");
      args.push(q.state);
    }
    if (q.statusTimestampAfter) {
      where.push("updated_at > ?");
      args.push(q.statusTimestampAfter);
    }
    const filter = where.length ? `WHERE ${where.join(" AND ")}` : "";
    const totalSize = sql
      .exec<{ n: number }>(`SELECT COUNT(*) AS n FROM task_index ${filter}`, ...args)
      .one().n;
    if (cursor) {
      where.push("(updated_at < ? OR (updated_at = ? AND task_id < ?))");
      args.push(cursor.updatedAt, cursor.updatedAt, cursor.taskId);
    }
    const rows = sql
      .exec<{ task_id: string; context_id: string; updated_at: string }>(
        `SELECT task_id, context_id, updated_at FROM task_index
         ${where.length ? `WHERE ${where.join(" AND ")}` : ""}
         ORDER BY updated_at DESC, task_id DESC LIMIT ?`,
        ...args,
        q.pageSize + 1,
      )
      .toArray();
    const shown = rows.slice(0, q.pageSize);
    const last = shown.at(-1);
    return {
      rows: shown.map((r) => ({ taskId: r.task_id, contextId: r.context_id })),
      totalSize,
      nextPageToken:
        rows.length > q.pageSize && last
          ? encodeCursor({ updatedAt: last.updated_at, taskId: last.task_id })
          : "",
    };
  }
}
