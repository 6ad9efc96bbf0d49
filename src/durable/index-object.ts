import { DurableObject } from "cloudflare:workers";
import { type PageQuery, queryPage } from "./paging";
import { hasSchema, INDEX_LISTING_KEEP, INDEX_MIGRATIONS, migrate } from "./schema";

/** One task's entry in a tenant's index: enough to filter, sort and find its object. */
export interface IndexRow {
  taskId: string;
  contextId: string;
  state: string;
  createdAt: string;
  updatedAt: string;
}

export interface IndexPage {
  rows: { taskId: string; contextId: string }[];
  totalSize: number;
  nextPageToken: string;
}

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
    if (!this.vacant) migrate(ctx.storage, INDEX_MIGRATIONS);
  }

  private ready(): void {
    if (!this.vacant) return;
    migrate(this.ctx.storage, INDEX_MIGRATIONS);
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

  async query(q: PageQuery): Promise<IndexPage> {
    if (this.vacant) return { rows: [], totalSize: 0, nextPageToken: "" };
    const page = queryPage<{ context_id: string }>(
      this.ctx.storage.sql,
      { table: "task_index", id: "task_id", columns: "context_id", keep: INDEX_LISTING_KEEP },
      q,
    );
    return {
      rows: page.rows.map((r) => ({ taskId: r.id, contextId: r.context_id })),
      totalSize: page.totalSize,
      nextPageToken: page.nextPageToken,
    };
  }
}
