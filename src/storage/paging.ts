import { A2AError } from "../protocol/errors";
import type { TaskState } from "../protocol/task-state";
import { type Cursor, decodeCursor, encodeCursor } from "./ids";
import { sqlLimit } from "./sql-limit";

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

/** A page that can also end early: the token of a page that stops after `rows[index]`. */
export interface CuttablePage<R> extends Page<R> {
  tokenAfter(index: number): string;
}

/** InvalidParams naming the page token (forged, of another listing, or expired). */
export const badPageToken = (why: string) =>
  new A2AError("InvalidParams", why, {}, [
    { field: "params.pageToken", description: "unknown or expired page token" },
  ]);

/** Where a page starts: after the task listed last (its place, then its id). */
export interface ListPosition {
  updatedAt: string;
  taskId: string;
  /** Its place in a listing by sequence (see `ListSource.bySeq`). */
  place?: number;
}

/** A page of a snapshot, before it becomes a token: the rows past it tell if more follow. */
export interface SnapshotPage<R> {
  /** At most `pageSize + 1` rows, each with `updated_at` as listed (its place). */
  rows: R[];
  totalSize: number;
  /** The snapshot these rows were listed in: the next page's. */
  snapshot: number;
}

/**
 * One page of a task table (a conversation's `tasks` or a tenant's `task_index`), newest
 * status first (A2A §3.1.4), with a keyset cursor on (updated_at, id) so deep pages cost
 * the same as the first. Pages after the first list the table as the first page saw it
 * (its snapshot, see `listingSteps` in schema.ts): a task updated between two reads keeps
 * the place it had, so none is skipped or listed twice; tasks created since are not in
 * this listing (a new one, from the first page, shows them on top); tasks deleted since
 * are left out; filters apply to each task as it is now, except `statusTimestampAfter`,
 * which applies to the time it is listed at.
 */
export function queryPage<R extends Record<string, SqlStorageValue>>(
  sql: SqlStorage,
  source: ListSource,
  q: PageQuery,
): CuttablePage<R & { id: string; updated_at: string }> {
  const cursor = q.pageToken ? decodeCursor(q.pageToken) : null;
  if (q.pageToken && !cursor) throw badPageToken("pageToken is not a token this server issued");
  const page = listSnapshot<R>(sql, source, q, cursor, cursor?.snapshot ?? null);
  const shown = page.rows.slice(0, q.pageSize);
  const tokenAfter = (index: number) => {
    const row = shown[index];
    if (!row) return "";
    const cursor: Cursor = { updatedAt: row.updated_at, taskId: row.id, snapshot: page.snapshot };
    if (source.bySeq) cursor.place = row.place as number;
    return encodeCursor(cursor);
  };
  return {
    rows: shown,
    totalSize: page.totalSize,
    nextPageToken: page.rows.length > q.pageSize ? tokenAfter(shown.length - 1) : "",
    tokenAfter,
  };
}

/** The table a listing reads, and how many moves its snapshots keep. */
export interface ListSource {
  table: string;
  id: string;
  columns: string;
  keep: number;
  /**
   * The listing follows the table's `row_seq` (a conversation's tasks, indexed by it): no
   * index by (updated_at, id) is needed, and a token holds the last row's place.
   */
  bySeq?: boolean;
}

/**
 * The rows of one page of a snapshot after `after` (the first page when null), at most
 * `pageSize + 1`; `snapshot` null lists the table as it is now and names that snapshot.
 * A snapshot this table never had, or one older than the moves kept, is InvalidParams
 * naming the page token.
 */
export function listSnapshot<R extends Record<string, SqlStorageValue>>(
  sql: SqlStorage,
  source: ListSource,
  q: Omit<PageQuery, "pageToken">,
  cursor: ListPosition | null,
  snapshotAsked: number | null,
): SnapshotPage<R & { id: string; updated_at: string }> {
  const clock = sql.exec<{ seq: number }>("SELECT seq FROM list_clock WHERE id = 1").one().seq;
  const snapshot = snapshotAsked ?? clock;
  if (snapshot > clock) throw badPageToken("pageToken is not a token this server issued");
  if (snapshot < clock - source.keep) {
    throw badPageToken(
      `pageToken has expired: over ${source.keep} task updates since its first page; list again from the first page`,
    );
  }

  if (source.bySeq && cursor && cursor.place === undefined) {
    throw badPageToken(
      "pageToken was issued before this conversation's storage was upgraded; list again from the first page",
    );
  }
  const { table, id } = source;
  const current: string[] = [];
  const currentArgs: SqlStorageValue[] = [];
  if (q.state) {
    current.push("t.state = ?");
    currentArgs.push(q.state);
  }
  /** Conditions on where a task is listed (`pos`: its updated_at as of the snapshot). */
  const placed = (pos: string): { where: string[]; args: SqlStorageValue[] } => {
    const where = [...current];
    const args = [...currentArgs];
    if (q.statusTimestampAfter) {
      where.push(`${pos} >= ?`);
      args.push(q.statusTimestampAfter);
    }
    if (cursor && !source.bySeq) {
      where.push(`(${pos} < ? OR (${pos} = ? AND t.${id} < ?))`);
      args.push(cursor.updatedAt, cursor.updatedAt, cursor.taskId);
    }
    return { where, args };
  };
  /** Conditions on a task's place in a listing by sequence (`place`: as of the snapshot). */
  const after = (place: string, where: string[], args: SqlStorageValue[]) => {
    if (cursor?.place !== undefined) {
      where.push(`${place} < ?`);
      args.push(cursor.place);
    }
  };

  const totalWhere = [...current];
  const totalArgs = [...currentArgs];
  if (q.statusTimestampAfter) {
    totalWhere.push("t.updated_at >= ?");
    totalArgs.push(q.statusTimestampAfter);
  }
  const totalSize = sql
    .exec<{ n: number }>(
      `SELECT COUNT(*) AS n FROM ${table} t ${totalWhere.length ? `WHERE ${totalWhere.join(" AND ")}` : ""}`,
      ...totalArgs,
    )
    .one().n;

  const columns = source.columns
    .split(",")
    .map((c) => `t.${c.trim()}`)
    .join(", ");
  const limit = sqlLimit(q.pageSize + 1);
  // Unchanged since the snapshot: where they are (the update-order index serves this).
  const still = placed("t.updated_at");
  // Changed since: where they were, from the move that left the snapshot.
  const moved = placed("m.old_updated_at");
  if (source.bySeq) {
    after("t.row_seq", still.where, still.args);
    after("m.prev_seq", moved.where, moved.args);
    const rows = sql
      .exec<R & { id: string; updated_at: string; place: number }>(
        `SELECT * FROM (
           SELECT t.${id} AS id, t.updated_at AS updated_at, t.row_seq AS place, ${columns}
           FROM ${table} t
           WHERE ${["t.row_seq <= ?", ...still.where].join(" AND ")}
           ORDER BY t.row_seq DESC LIMIT ${limit})
         UNION ALL
         SELECT * FROM (
           SELECT t.${id} AS id, m.old_updated_at AS updated_at, m.prev_seq AS place, ${columns}
           FROM list_moves m JOIN ${table} t ON t.${id} = m.task_id
           WHERE ${["m.seq > ?", "m.prev_seq <= ?", ...moved.where].join(" AND ")}
           ORDER BY m.prev_seq DESC LIMIT ${limit})
         ORDER BY place DESC LIMIT ${limit}`,
        snapshot,
        ...still.args,
        snapshot,
        snapshot,
        ...moved.args,
      )
      .toArray();
    return { rows, totalSize, snapshot };
  }
  const rows = sql
    .exec<R & { id: string; updated_at: string }>(
      `SELECT * FROM (
         SELECT t.${id} AS id, t.updated_at AS updated_at, ${columns} FROM ${table} t
         WHERE ${["t.row_seq <= ?", ...still.where].join(" AND ")}
         ORDER BY t.updated_at DESC, t.${id} DESC LIMIT ${limit})
       UNION ALL
       SELECT * FROM (
         SELECT t.${id} AS id, m.old_updated_at AS updated_at, ${columns}
         FROM list_moves m JOIN ${table} t ON t.${id} = m.task_id
         WHERE ${["m.seq > ?", "m.prev_seq <= ?", ...moved.where].join(" AND ")}
         ORDER BY m.old_updated_at DESC, t.${id} DESC LIMIT ${limit})
       ORDER BY updated_at DESC, id DESC LIMIT ${limit}`,
      snapshot,
      ...still.args,
      snapshot,
      snapshot,
      ...moved.args,
    )
    .toArray();
  return { rows, totalSize, snapshot };
}
