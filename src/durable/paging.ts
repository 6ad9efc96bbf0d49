import { A2AError } from "../models/errors";
import type { TaskState } from "../models/task-state";
import { decodeCursor, encodeCursor } from "./ids";

/** Filters and position of one ListTasks page. */
export interface PageQuery {
  state?: TaskState;
  statusTimestampAfter?: string;
  pageSize: number;
  pageToken?: string;
}

export interface Page<R> {
  rows: R[];
  totalSize: number;
  /** Empty on the last page (§3.1.4). */
  nextPageToken: string;
}

/**
 * One page of a task table (a conversation's `tasks` or a tenant's `task_index`), newest
 * status first, with a keyset cursor on (updated_at, id) so deep pages cost the same as
 * the first.
 */
export function queryPage<R extends Record<string, SqlStorageValue>>(
  sql: SqlStorage,
  source: { table: string; id: string; columns: string },
  q: PageQuery,
): Page<R & { id: string; updated_at: string }> {
  const cursor = q.pageToken ? decodeCursor(q.pageToken) : null;
  if (q.pageToken && !cursor) {
    throw new A2AError("InvalidParams", "pageToken is not a token this server issued", {}, [
      { field: "params.pageToken", description: "unknown page token" },
    ]);
  }
  const where: string[] = [];
  const args: SqlStorageValue[] = [];
  if (q.state) {
    where.push("state = ?");
    args.push(q.state);
  }
  if (q.statusTimestampAfter) {
    where.push("updated_at >= ?");
    args.push(q.statusTimestampAfter);
  }
  const clause = () => (where.length ? `WHERE ${where.join(" AND ")}` : "");
  const totalSize = sql
    .exec<{ n: number }>(`SELECT COUNT(*) AS n FROM ${source.table} ${clause()}`, ...args)
    .one().n;
  if (cursor) {
    where.push(`(updated_at < ? OR (updated_at = ? AND ${source.id} < ?))`);
    args.push(cursor.updatedAt, cursor.updatedAt, cursor.taskId);
  }
  const rows = sql
    .exec<R & { id: string; updated_at: string }>(
      `SELECT ${source.id} AS id, updated_at, ${source.columns} FROM ${source.table} ${clause()}
       ORDER BY updated_at DESC, ${source.id} DESC LIMIT ?`,
      ...args,
      q.pageSize + 1,
    )
    .toArray();
  const shown = rows.slice(0, q.pageSize);
  const last = shown.at(-1);
  return {
    rows: shown,
    totalSize,
    nextPageToken:
      rows.length > q.pageSize && last
        ? encodeCursor({ updatedAt: last.updated_at, taskId: last.id })
        : "",
  };
}
