/**
 * The tenant index's outbox: which of a conversation's index rows (and removals) wait to
 * reach its index object, and sending them there in windows.
 */
import type { Task } from "../models/task";
import { logEvent } from "../telemetry/log";
import type { IndexRow, IndexRpc } from "./index-object";

/** A task's entry for the tenant index, waiting to be sent. */
export interface IndexEntry {
  taskId: string;
  state: string;
  createdAt: string;
  updatedAt: string;
}

/**
 * The rows waiting for the tenant index. A task's row is marked in SQLite
 * (`index_pending`) by the write that changes it; memory keeps what to send (read from
 * SQLite once) and the acknowledgements, which ride along with the next transaction.
 */
export class PendingIndexRows {
  constructor(
    private readonly storage: DurableObjectStorage,
    /** The task store's transaction (`TaskStore.atomic`). */
    private readonly atomic: <T>(fn: () => T) => T,
  ) {}

  /** Called when a row is pending (a state change or a removal). */
  onPending: () => void = () => {};

  /** Index rows not yet acknowledged; null until read from SQLite. */
  private pending: Map<string, IndexEntry> | null = null;
  /** Tasks the index acknowledged, marked in SQLite with the next write. */
  private acked: string[] = [];
  /** True once SQLite showed no removal pending, until the next prune. */
  private noRemovals = false;

  private get sql(): SqlStorage {
    return this.storage.sql;
  }

  /**
   * Index rows waiting to reach the tenant index (read from SQLite once, then kept: the
   * scan has no index of its own).
   */
  outbox(): IndexEntry[] {
    if (this.pending === null) {
      this.pending = new Map();
      for (const r of this.sql.exec<{
        id: string;
        state: string;
        created_at: string;
        updated_at: string;
      }>("SELECT id, state, created_at, updated_at FROM tasks WHERE index_pending = 1")) {
        this.pending.set(r.id, {
          taskId: r.id,
          state: r.state,
          createdAt: r.created_at,
          updatedAt: r.updated_at,
        });
      }
    }
    return [...this.pending.values()];
  }

  /** Whether a row of this task waits to reach the tenant index. */
  indexPending(taskId: string): boolean {
    if (this.pending === null) this.outbox();
    return this.pending?.has(taskId) ?? false;
  }

  /** A task's row was written (and marked in SQLite by that write): memory keeps what to send. */
  touch(task: Task): void {
    if (this.pending === null) this.outbox();
    this.pending?.set(task.id, {
      taskId: task.id,
      state: task.status.state,
      createdAt: task.createdAt,
      updatedAt: task.status.timestamp,
    });
    this.onPending();
  }

  /** Marks every task for the index again (its rows must reach another shard). */
  resendAll(): void {
    this.atomic(() => this.sql.exec("UPDATE tasks SET index_pending = 1"));
    this.pending = null;
  }

  /**
   * Drops acknowledged rows, unless they changed again meanwhile. The mark in SQLite is
   * written with the next transaction; until then a restart sends them again, which the
   * index ignores (an older or equal update never overwrites a newer one).
   */
  acknowledge(rows: readonly IndexEntry[]): void {
    for (const r of rows) {
      const now = this.pending?.get(r.taskId);
      if (now && now.updatedAt === r.updatedAt && now.state === r.state) {
        this.pending?.delete(r.taskId);
        this.acked.push(r.taskId);
      }
    }
  }

  /** Writes the pending acknowledgements now (the alarm's flush, when nothing else writes). */
  commitAcknowledgements(): void {
    if (this.acked.length) this.atomic(() => {});
  }

  /** Inside a transaction: writes the acknowledgements gathered since the last one. */
  writeAcks(): void {
    // Bound parameters per statement are limited; 90 ids at a time stay well under.
    for (let i = 0; i < this.acked.length; i += 90) {
      const ids = this.acked.slice(i, i + 90);
      this.sql.exec(
        `UPDATE tasks SET index_pending = 0 WHERE id IN (${ids.map(() => "?").join(", ")})`,
        ...ids,
      );
    }
  }

  /** The transaction that wrote the acknowledgements committed. */
  acksWritten(): void {
    this.acked = [];
  }

  /** The transaction failed: the pending rows are read again. */
  forget(): void {
    this.pending = null;
  }

  /** Inside retention's transaction: a pruned task goes from the index (queued for it). */
  removing(taskId: string): void {
    this.noRemovals = false;
    this.sql.exec("INSERT OR IGNORE INTO index_removals (task_id) VALUES (?)", taskId);
    this.pending?.delete(taskId);
  }

  /** Pruned tasks the tenant index has not forgotten yet (no statement when none). */
  removals(): string[] {
    if (this.noRemovals) return [];
    const ids = this.sql
      .exec<{ task_id: string }>("SELECT task_id FROM index_removals LIMIT 500")
      .toArray()
      .map((r) => r.task_id);
    if (ids.length === 0) this.noRemovals = true;
    return ids;
  }

  /** The index forgot these tasks. */
  removed(taskIds: readonly string[]): void {
    this.atomic(() => {
      for (const id of taskIds) this.sql.exec("DELETE FROM index_removals WHERE task_id = ?", id);
    });
    this.noRemovals = false;
  }
}

/** What the outbox needs from its object besides the rows. */
export interface OutboxHost {
  /** The index object and this conversation's id, or null before the object is claimed. */
  target(): { index: IndexRpc; contextId: string } | null;
  /** Keeps the object alive until a flush planned for later has run. */
  keepAlive(work: Promise<void>): void;
  /**
   * Asks the object's alarm to flush at `at` (durable): the bound on the lag when the
   * object is torn down before its in-memory timer fires, and the retry of a failed flush.
   */
  wakeAt(at: number): Promise<void>;
  /** Every pending row reached the index and no window is open: the backstop is moot. */
  settled(): void;
}

/** Rows per call to the index at most (the rest follow in the next call). */
export const INDEX_BATCH_ROWS = 500;
/** A failed flush is retried this much later by the alarm. */
export const INDEX_RETRY_MS = 1_000;
/**
 * The durable backstop: rows a torn-down object could not send go this long after their
 * window (so a busy conversation sets its alarm about once per this period, not per message).
 */
export const INDEX_BACKSTOP_MS = 10_000;

/**
 * Delivers a conversation's pending index rows (marked in the same transaction as each
 * state change) to its tenant's index object. The first change opens a window of
 * `windowMs`, and every row pending when it closes goes in one RPC (one commit of the
 * index), a task's several changes as its latest row. A new task's answer does not wait
 * for the window: it asks for its row now (`listed`), so a caller lists what it was
 * answered. Concurrent callers share one flush, and rows that arrive while one is in
 * flight go together in the next; a failed flush leaves the rows in SQLite and asks the
 * alarm for a retry.
 */
export class IndexOutbox {
  /** The call under way, and the one that starts when it ends (gathering meanwhile). */
  private inFlight: Promise<void> | null = null;
  private queued: Promise<void> | null = null;
  private timer: ReturnType<typeof setTimeout> | null = null;

  constructor(
    private readonly store: PendingIndexRows,
    private readonly host: OutboxHost,
    /** The window (`limits.indexFlushMs`), read when one opens. */
    private readonly windowMs: () => number,
  ) {}

  /** Plans a flush within the window (no-op while one is planned). */
  schedule(): void {
    if (this.timer !== null) return;
    const windowMs = this.windowMs();
    const done = new Promise<void>((resolve) => {
      this.timer = setTimeout(() => {
        this.timer = null;
        this.flush()
          .catch((error) =>
            logEvent("error", "edgelink: could not schedule an index retry", { error }),
          )
          .finally(resolve);
      }, windowMs);
    });
    this.host.keepAlive(done);
    // Durable backstop, once per window: if the object goes away before the timer
    // fires, the alarm sends the rows SQLite kept.
    this.host
      .wakeAt(Date.now() + windowMs + INDEX_BACKSTOP_MS)
      .catch((error) =>
        logEvent("error", "edgelink: could not schedule the index flush", { error }),
      );
  }

  /**
   * Resolves once the index holds a row of this task: at once when no row of it is
   * pending, else after a flush that carries it (sharing one in flight). When the index
   * cannot be reached it resolves anyway, the rows kept for the alarm's retry: the
   * caller's answer is not held back by the index.
   */
  listed(taskId: string): Promise<void> {
    if (!this.store.indexPending(taskId)) return Promise.resolve();
    return this.flush().catch((error) =>
      logEvent("error", "edgelink: could not schedule an index retry", { error }),
    );
  }

  /**
   * Sends everything pending now; resolves once the index has it (or a retry is set).
   * With a call in flight, which may have read the rows before this one came, the next
   * call carries them: every caller meanwhile waits for that one call (not for a chain
   * that a steady stream of callers would keep going).
   */
  flush(): Promise<void> {
    if (this.queued) return this.queued;
    if (!this.inFlight) return this.start();
    const next = () => {
      this.queued = null;
      return this.start();
    };
    const queued = this.inFlight.then(next, next);
    this.queued = queued;
    return queued;
  }

  private start(): Promise<void> {
    const run = this.drain().finally(() => {
      if (this.inFlight === run) this.inFlight = null;
    });
    this.inFlight = run;
    return run;
  }

  private async drain(): Promise<void> {
    try {
      let sent: boolean;
      let more: boolean;
      // A backlog goes in bounded slices, one call each.
      do ({ sent, more } = await this.send());
      while (more);
      if (sent && this.timer === null && this.queued === null) this.host.settled();
    } catch (error) {
      logEvent("warn", "edgelink: task index update failed; retrying", { error });
      await this.host.wakeAt(Date.now() + INDEX_RETRY_MS);
    }
  }

  /** One bounded call's worth; `sent` false when rows stay behind (the object is not claimed). */
  private async send(): Promise<{ sent: boolean; more: boolean }> {
    const pending = this.store.outbox();
    const rows = pending.slice(0, INDEX_BATCH_ROWS);
    const more = pending.length > INDEX_BATCH_ROWS;
    const removed = this.store.removals();
    if (rows.length === 0 && removed.length === 0) return { sent: true, more: false };
    const target = this.host.target();
    if (!target) return { sent: false, more: false };
    if (rows.length) {
      const indexRows: IndexRow[] = rows.map((r) => ({ ...r, contextId: target.contextId }));
      await target.index.upsert(indexRows);
      this.store.acknowledge(rows);
    }
    if (removed.length) {
      await target.index.remove(removed);
      this.store.removed(removed);
    }
    return { sent: true, more };
  }
}
