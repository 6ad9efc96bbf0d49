import { DurableObject } from "cloudflare:workers";
import { A2AError, type ErrorData } from "../models/errors";
import { type ListPosition, listSnapshot, type PageQuery } from "./paging";
import { hasSchema, INDEX_FRESH, INDEX_LISTING_KEEP, INDEX_MIGRATIONS, migrate } from "./schema";

/** One task's entry in a tenant's index: enough to filter, sort and find its object. */
export interface IndexRow {
  taskId: string;
  contextId: string;
  state: string;
  createdAt: string;
  updatedAt: string;
}

/** What one shard is asked for one ListTasks page (see `listSnapshot`). */
export interface ShardQuery extends Omit<PageQuery, "pageToken"> {
  /** The last task listed so far, across all shards; null for the first page. */
  after: ListPosition | null;
  /** This shard's snapshot, from the page token; null for the first page. */
  snapshot: number | null;
}

/** One shard's part of a page: up to `pageSize + 1` rows, at their place in the snapshot. */
export interface ShardPage {
  rows: { taskId: string; contextId: string; updatedAt: string }[];
  totalSize: number;
  snapshot: number;
}

/** A shard's answer: a bad page token crosses the RPC boundary as data (like ContextRpc). */
export type ShardResult = { ok: true; value: ShardPage } | { ok: false; error: ErrorData };

/** The index's RPC surface as callers use it (see ContextRpc for why). */
export type IndexRpc = Pick<IndexObject, "upsert" | "query" | "remove">;

/**
 * A tenant's task index, for ListTasks across conversations. Conversation objects push
 * rows here after each state change (from a transactional outbox, so none is lost);
 * the index only answers which tasks, in which order, and where they live.
 */
export class IndexObject<Env = unknown> extends DurableObject<Env> {
  /**
   * True until the first write: a read (ListTasks of a caller or tenant with no task yet)
   * creates no schema and answers an empty page.
   */
  private vacant: boolean;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.vacant = !hasSchema(ctx.storage);
    if (!this.vacant) migrate(ctx.storage, INDEX_MIGRATIONS, INDEX_FRESH);
  }

  private ready(): void {
    if (!this.vacant) return;
    migrate(this.ctx.storage, INDEX_MIGRATIONS, INDEX_FRESH);
    this.vacant = false;
  }

  /**
   * Applies rows; an older update never overwrites a newer one. No explicit transaction:
   * the statements join the object's implicit one, which the platform commits once for
   * the upserts of many conversations arriving together (a `transactionSync` per call
   * forced a commit per call and was the index's main cost). One call's rows still
   * commit together: nothing is awaited between them.
   */
  async upsert(rows: IndexRow[]): Promise<void> {
    this.ready();
    const sql = this.ctx.storage.sql;
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
  }

  /** Forgets tasks their conversation pruned (retention). */
  async remove(taskIds: string[]): Promise<void> {
    if (this.vacant) return;
    const sql = this.ctx.storage.sql;
    this.ctx.storage.transactionSync(() => {
      for (const id of taskIds) sql.exec("DELETE FROM task_index WHERE task_id = ?", id);
    });
  }

  /**
   * This shard's rows of one page. A vacant shard (never written) answers none, creates
   * nothing, and names snapshot 0: every row it gets later is newer than that.
   */
  async query(q: ShardQuery): Promise<ShardResult> {
    if (this.vacant) return { ok: true, value: { rows: [], totalSize: 0, snapshot: 0 } };
    try {
      const page = listSnapshot<{ context_id: string }>(
        this.ctx.storage.sql,
        { table: "task_index", id: "task_id", columns: "context_id", keep: INDEX_LISTING_KEEP },
        q,
        q.after,
        q.snapshot,
      );
      return {
        ok: true,
        value: {
          rows: page.rows.map((r) => ({
            taskId: r.id,
            contextId: r.context_id,
            updatedAt: r.updated_at,
          })),
          totalSize: page.totalSize,
          snapshot: page.snapshot,
        },
      };
    } catch (error) {
      if (error instanceof A2AError) return { ok: false, error: error.toData() };
      throw error;
    }
  }
}
