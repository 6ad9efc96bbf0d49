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
   * The listing clock (see `listingSteps` in schema.ts), kept here instead of by triggers
   * (schema v3): read from `list_clock` at the first write, advanced as rows take their
   * `row_seq`, and written back once per call. `oldestMove` is a lower bound of the moves
   * kept (null: none), so they are pruned only once some leave the INDEX_LISTING_KEEP
   * window. Null until read.
   */
  private listing: { clock: number; oldestMove: number | null } | null = null;

  /**
   * Applies rows; an older update never overwrites a newer one. No explicit transaction:
   * the statements join the object's implicit one, which the platform commits once for
   * the upserts of many conversations arriving together (a `transactionSync` per call
   * forced a commit per call and was the index's main cost). One call's rows still
   * commit together: nothing is awaited between them.
   *
   * A row inserted, or whose `updated_at` changes, takes the next value of the listing
   * clock; a change also records the row's old place in `list_moves`. The old places are
   * read first, one SELECT for the call; then the clock is written (before the rows, so
   * SQLite's counter is never behind a row, even if a later statement fails), the moves
   * in one INSERT, and the rows in one upsert per 23 or so.
   */
  async upsert(rows: IndexRow[]): Promise<void> {
    this.ready();
    if (rows.length === 0) return;
    const sql = this.ctx.storage.sql;
    const listing = this.listingClock();
    const start = listing.clock;
    const held = this.heldRows(rows);
    /** Each row to write and its `row_seq` as an offset from `start` (0: unchanged). */
    const writes: { row: IndexRow; offset: number }[] = [];
    const moves: SqlStorageValue[] = [];
    let clock = start;
    for (const r of rows) {
      const old = held.get(r.taskId);
      // Older than the row held: the upsert's WHERE would skip it anyway.
      if (old && r.updatedAt < old.updatedAt) continue;
      // Same place: only its state can change.
      if (old && r.updatedAt === old.updatedAt) {
        writes.push({ row: r, offset: 0 });
        continue;
      }
      clock++;
      // A place taken earlier in this call is in no snapshot: no token can hold it.
      if (old && old.rowSeq <= start) moves.push(clock, old.rowSeq, r.taskId, old.updatedAt);
      held.set(r.taskId, { updatedAt: r.updatedAt, rowSeq: clock });
      writes.push({ row: r, offset: clock - start });
    }
    if (clock > start) {
      sql.exec("UPDATE list_clock SET seq = MAX(seq, ?) WHERE id = 1", clock);
      listing.clock = clock;
    }
    // 4 bound values per move, at most 100 per statement.
    for (let i = 0; i < moves.length; i += 100) {
      const chunk = moves.slice(i, i + 100);
      sql.exec(
        `INSERT INTO list_moves (seq, prev_seq, task_id, old_updated_at) VALUES ${Array.from(
          { length: chunk.length / 4 },
          () => "(?, ?, ?, ?)",
        ).join(", ")}`,
        ...chunk,
      );
      listing.oldestMove ??= chunk[0] as number;
    }
    // The same pruning the trigger did at each move: the newest INDEX_LISTING_KEEP are kept.
    const expired = clock - INDEX_LISTING_KEEP;
    if (listing.oldestMove !== null && listing.oldestMove <= expired) {
      sql.exec("DELETE FROM list_moves WHERE seq <= ?", expired);
      listing.oldestMove = expired + 1;
    }
    // Many rows per statement (a statement's fixed cost is paid once), the clock and each
    // context id bound once (a row's `row_seq` is `?1` plus its offset, written into the
    // text); a statement takes at most 100 bound values here. `row_seq` changes exactly
    // when `updated_at` does, as the trigger's WHEN had it.
    for (let i = 0; i < writes.length; ) {
      const args: SqlStorageValue[] = [start];
      const contexts = new Map<string, number>();
      const values: string[] = [];
      for (; i < writes.length && args.length <= 100 - 5; i++) {
        const { row: r, offset } = writes[i] as { row: IndexRow; offset: number };
        let context = contexts.get(r.contextId);
        if (context === undefined) {
          args.push(r.contextId);
          context = args.length;
          contexts.set(r.contextId, context);
        }
        args.push(r.taskId, r.state, r.createdAt, r.updatedAt);
        const n = args.length;
        values.push(`(?${n - 3}, ?${context}, ?${n - 2}, ?${n - 1}, ?${n}, ?1 + ${offset})`);
      }
      sql.exec(
        `INSERT INTO task_index (task_id, context_id, state, created_at, updated_at, row_seq)
           VALUES ${values.join(", ")}
           ON CONFLICT (task_id) DO UPDATE SET state = excluded.state, updated_at = excluded.updated_at,
             row_seq = IIF(excluded.updated_at > task_index.updated_at, excluded.row_seq, task_index.row_seq)
           WHERE excluded.updated_at >= task_index.updated_at`,
        ...args,
      );
    }
  }

  /** The listing clock, read from SQLite at the first write (see `listing`). */
  private listingClock(): { clock: number; oldestMove: number | null } {
    if (this.listing === null) {
      const row = this.ctx.storage.sql
        .exec<{ clock: number; oldest: number | null }>(
          "SELECT seq AS clock, (SELECT MIN(seq) FROM list_moves) AS oldest FROM list_clock WHERE id = 1",
        )
        .one();
      this.listing = { clock: row.clock, oldestMove: row.oldest };
    }
    return this.listing;
  }

  /** The place each of these tasks holds now (absent: not in the index), 100 ids a SELECT. */
  private heldRows(rows: IndexRow[]): Map<string, { updatedAt: string; rowSeq: number }> {
    const held = new Map<string, { updatedAt: string; rowSeq: number }>();
    const ids =
      rows.length === 1 ? [(rows[0] as IndexRow).taskId] : [...new Set(rows.map((r) => r.taskId))];
    for (let i = 0; i < ids.length; i += 100) {
      const chunk = ids.slice(i, i + 100);
      const cursor = this.ctx.storage.sql.exec<{
        task_id: string;
        updated_at: string;
        row_seq: number;
      }>(
        `SELECT task_id, updated_at, row_seq FROM task_index WHERE task_id IN (${chunk.map(() => "?").join(", ")})`,
        ...chunk,
      );
      for (const r of cursor) held.set(r.task_id, { updatedAt: r.updated_at, rowSeq: r.row_seq });
    }
    return held;
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
