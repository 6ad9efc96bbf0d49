import { DurableObject } from "cloudflare:workers";
import { A2AError, type ErrorData } from "../protocol/errors";
import { newLocalIdSecret } from "../storage/ids";
import { type ListPosition, listSnapshot, type PageQuery } from "../storage/paging";
import { INDEX_LISTING_KEEP, INDEX_MOVES_PRUNE_STEP, INDEX_SCHEMA } from "../storage/schema";
import {
  createSchema,
  openSchema,
  type StorageReport,
  storageReport,
} from "../storage/schema-version";

/** The key-value key under which a local run's generated id secret is kept. */
const LOCAL_ID_SECRET_KEY = "edgelink:local-id-secret";

/** A flush's rows (INDEX_BATCH_ROWS) in one JSON value, well under a value's 2 MB. */
const ROWS_PER_STATEMENT = 500;

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

/**
 * A shard's answer: a bad page token crosses the RPC boundary as data (like ContextRpc).
 * `marked`: asked with `marks`, the conversations that may hold answered tasks this shard
 * has no row of yet (see `IndexMark`); they send them, then the shard is asked again.
 */
export type ShardResult =
  | { ok: true; value: ShardPage }
  | { ok: true; marked: string[] }
  | { ok: false; error: ErrorData };

/**
 * A conversation's mark: set, its answers no longer wait for their rows to reach the
 * index (they wait in its SQLite for the window), and a listing has it send them first;
 * cleared when it sends its rows with nothing answered meanwhile.
 */
export interface IndexMark {
  contextId: string;
  on: boolean;
}

/** Marks are `meta` rows under this prefix (a key-value table every shard has). */
const MARK = "mark:";
/** Marked conversations a listing has send their rows, per shard at most. */
export const MAX_MARKS_PER_LISTING = 100;

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
  /**
   * Why this shard's storage cannot be used (made by a development build or a later release), if so: every
   * call answers it, and nothing is read or written.
   */
  private readonly refused: A2AError | null;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    const opened = openSchema(ctx.storage, INDEX_SCHEMA);
    this.vacant = opened.vacant;
    this.refused = opened.refused;
  }

  /**
   * The secret a local run without `EDGELINK_ID_KEY` makes its ids with: generated at the
   * first call and kept in this object's storage (wrangler dev's `.wrangler/state`), so a
   * restart or a reload opens the ids made before it. Only the object named
   * `LOCAL_ID_SECRET_OBJECT` is asked, and only from localhost (see `idKeys`); it is kept
   * in the key-value API, so the index's SQL schema never sees it.
   */
  async localIdSecret(): Promise<string> {
    const stored = await this.ctx.storage.get<string>(LOCAL_ID_SECRET_KEY);
    if (typeof stored === "string" && stored.length >= 32) return stored;
    const secret = newLocalIdSecret();
    await this.ctx.storage.put(LOCAL_ID_SECRET_KEY, secret);
    return secret;
  }

  private ready(): void {
    if (this.refused) throw this.refused;
    if (!this.vacant) return;
    createSchema(this.ctx.storage, INDEX_SCHEMA);
    this.vacant = false;
  }

  /**
   * The listing clock (`listing` in schema.ts), kept here as TaskStore keeps a conversation's:
   * `list_clock` (`stored`) is brought up to it only before a page names its snapshot, so
   * an upsert does not write it; on load the clock is the highest of `list_clock`, any
   * `row_seq` and any move, so it never goes back past a value a row, a move or a page
   * token holds. `pruned`: no move at or below it is left (moves are pruned by sequence).
   */
  private listing: { clock: number; stored: number; pruned: number } | null = null;

  /** The Worker's start-up check: is this object's storage what Edgelink needs? Writes nothing. */
  storageReport(): StorageReport {
    return storageReport(this.ctx.storage, this.refused);
  }

  /**
   * Applies rows; an older update never overwrites a newer one. No explicit transaction:
   * the statements join the object's implicit one, which the platform commits once for
   * the upserts of many conversations arriving together (a `transactionSync` per call
   * forced a commit per call and was the index's main cost). One call's rows still
   * commit together: nothing is awaited between them.
   *
   * The listing: each row takes the next clock value and keeps it as `row_seq` if new or
   * moved (the schema's trigger records a move's old place); a row that keeps its place
   * leaves its value unused. One statement per call, its rows as one JSON value: a bound
   * value costs workerd more than SQLite's parse (bench/README.md), and each task is
   * found once.
   */
  async upsert(rows: IndexRow[], mark?: IndexMark): Promise<void> {
    this.ready();
    const sql = this.ctx.storage.sql;
    // In the rows' implicit transaction: a mark never goes without the rows sent with it.
    if (mark?.on) {
      sql.exec(
        "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING",
        MARK + mark.contextId,
        String(Date.now()),
      );
    } else if (mark) {
      sql.exec("DELETE FROM meta WHERE key = ?", MARK + mark.contextId);
    }
    if (rows.length === 0) return;
    const listing = this.listingClock();
    // Per task what applying the rows in order leaves: the last of its newest rows.
    const latest = new Map<string, IndexRow>();
    for (const r of rows) {
      const seen = latest.get(r.taskId);
      if (seen === undefined || r.updatedAt >= seen.updatedAt) latest.set(r.taskId, r);
    }
    const writes = [...latest.values()].map((r) => [
      r.taskId,
      r.contextId,
      r.state,
      r.createdAt,
      r.updatedAt,
    ]);
    let base = listing.clock;
    listing.clock += writes.length;
    for (let i = 0; i < writes.length; i += ROWS_PER_STATEMENT) {
      // In SET, a bare column is the row held: row_seq changes only with updated_at.
      sql.exec(
        `INSERT INTO task_index (task_id, context_id, state, created_at, updated_at, row_seq)
         SELECT value->>0, value->>1, value->>2, value->>3, value->>4, ?1+key+1
         FROM jsonb_each(?2) WHERE true
         ON CONFLICT (task_id) DO UPDATE SET state = excluded.state, updated_at = excluded.updated_at,
         row_seq = IIF(excluded.updated_at > updated_at, excluded.row_seq, row_seq)
         WHERE excluded.updated_at >= task_index.updated_at`,
        base,
        JSON.stringify(writes.slice(i, i + ROWS_PER_STATEMENT)),
      );
      base += ROWS_PER_STATEMENT;
    }
    // The newest INDEX_LISTING_KEEP moves are kept; older ones go in steps, so a call
    // seldom pays a statement for it (the trigger that records moves tells no count).
    const expired = listing.clock - INDEX_LISTING_KEEP;
    if (expired >= listing.pruned + INDEX_MOVES_PRUNE_STEP) {
      sql.exec("DELETE FROM list_moves WHERE seq <= ?", expired);
      listing.pruned = expired;
    }
  }

  private listingClock(): { clock: number; stored: number; pruned: number } {
    if (this.listing === null) {
      const row = this.ctx.storage.sql
        .exec<{ stored: number; rows: number | null; moves: number | null; oldest: number | null }>(
          `SELECT seq AS stored, (SELECT MAX(row_seq) FROM task_index) AS rows,
             (SELECT MAX(seq) FROM list_moves) AS moves, (SELECT MIN(seq) FROM list_moves) AS oldest
           FROM list_clock WHERE id = 1`,
        )
        .one();
      const clock = Math.max(row.stored, row.rows ?? 0, row.moves ?? 0);
      // Every later move takes a value above the clock.
      const pruned = row.oldest === null ? clock : row.oldest - 1;
      this.listing = { clock, stored: row.stored, pruned };
    }
    return this.listing;
  }

  /** Brings `list_clock` up to the clock: a page's snapshot, or rows about to go, need it. */
  private saveClock(): void {
    const listing = this.listingClock();
    if (listing.clock <= listing.stored) return;
    this.ctx.storage.sql.exec(
      "UPDATE list_clock SET seq = MAX(seq, ?) WHERE id = 1",
      listing.clock,
    );
    listing.stored = listing.clock;
  }

  /** Forgets tasks their conversation pruned (retention). */
  async remove(taskIds: string[]): Promise<void> {
    if (this.refused) throw this.refused;
    if (this.vacant) return;
    const sql = this.ctx.storage.sql;
    this.ctx.storage.transactionSync(() => {
      // The deleted rows take their row_seq along: SQLite's counter keeps it.
      this.saveClock();
      for (const id of taskIds) sql.exec("DELETE FROM task_index WHERE task_id = ?", id);
    });
  }

  /**
   * This shard's rows of one page. A vacant shard (never written) answers none, creates
   * nothing, and names snapshot 0: every row it gets later is newer than that.
   */
  async query(q: ShardQuery & { marks?: boolean }): Promise<ShardResult> {
    if (this.refused) return { ok: false, error: this.refused.toData() };
    if (this.vacant) return { ok: true, value: { rows: [], totalSize: 0, snapshot: 0 } };
    if (q.marks) {
      const marked = this.ctx.storage.sql
        .exec<{ key: string }>(
          `SELECT key FROM meta WHERE key > ? AND key < ? ORDER BY value LIMIT ${MAX_MARKS_PER_LISTING}`,
          MARK,
          `${MARK.slice(0, -1)};`,
        )
        .toArray()
        .map((r) => r.key.slice(MARK.length));
      if (marked.length) return { ok: true, marked };
    }
    try {
      // The page names the clock as its snapshot: SQLite's counter must hold it first.
      this.saveClock();
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
