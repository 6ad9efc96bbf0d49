/**
 * The tenant index's outbox: which of a conversation's index rows (and removals) wait to
 * reach its index object, and sending them there in windows.
 */
import type { Task } from "../protocol/task";
import { logEvent } from "../telemetry/log";
import type { IndexMark, IndexRow, IndexRpc } from "./index-object";

/** A task's entry for the tenant index, waiting to be sent. */
export interface IndexEntry {
  taskId: string;
  state: string;
  createdAt: string;
  updatedAt: string;
}

/**
 * The writes of the tasks' `index_pending` flag, made by the task store, the one writer
 * of the tasks table (this folder cannot import the conversation's, which imports it).
 */
export interface IndexFlags {
  /** Marks every task pending. */
  markAll(): void;
  /** Clears the flag of these tasks (at most the statement's parameter limit). */
  clear(taskIds: readonly string[]): void;
}

/**
 * The rows waiting for the tenant index. A task's row is marked in SQLite
 * (`index_pending`) by the write that changes it; memory keeps what to send (read from
 * SQLite once) and the acknowledgements, which ride along with the next transaction.
 */
export class PendingIndexRows {
  constructor(
    private readonly storage: Pick<DurableObjectStorage, "sql">,
    /** The task store's transaction (`TaskStore.atomic`). */
    private readonly atomic: <T>(fn: () => T) => T,
    /** The task store's writes of the flag. */
    private readonly flags: IndexFlags,
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
    this.atomic(() => this.flags.markAll());
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
      this.flags.clear(this.acked.slice(i, i + 90));
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
 * index), a task's several changes as its latest row. Concurrent callers share one
 * flush, and rows that arrive while one is in flight go together in the next; a failed
 * flush leaves the rows in SQLite and asks the alarm for a retry.
 *
 * Read-your-writes: a new task's answer does not leave before a listing would show it
 * (`listed`). In a quiet conversation its row goes at once (leading edge). A second new
 * task within the window makes the conversation busy: that call also marks it in the
 * index (`IndexMark`), and while the mark holds, answers go without a call of their own
 * (their rows wait in SQLite for the window) and a listing has the conversation send its
 * rows before reading. A window in which no answer relied on the mark clears it.
 */
export class IndexOutbox {
  /** The call under way, and the one that starts when it ends (gathering meanwhile). */
  private inFlight: Promise<void> | null = null;
  private queued: Promise<void> | null = null;
  private timer: ReturnType<typeof setTimeout> | null = null;
  /** The index holds this conversation's mark, set by this instance. */
  private marked = false;
  /** The call that sets the mark, until it returns: answers meanwhile wait for it. */
  private marking: Promise<void> | null = null;
  /** What the next call does with the mark, read as it starts. */
  private markNext: "set" | "clear" | null = null;
  /** A window closed: its call clears the mark when no answer relied on it. */
  private windowClosed = false;
  /** Answers the mark covered since the last window closed. */
  private covered = 0;
  /** When the last call carrying rows began (a new task within the window after it: busy). */
  private lastSent = Number.NEGATIVE_INFINITY;

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
        this.windowClosed = true;
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
   * Resolves once a listing shows this task: at once when no row of it is pending or the
   * mark covers it, else after a call that carries it (sharing one in flight). When the
   * index cannot be reached it resolves anyway, the rows kept for the alarm's retry: the
   * caller's answer is not held back by the index. Null when there is nothing to wait
   * for, so that an answer the mark covers takes no await.
   */
  listed(taskId: string): Promise<void> | null {
    if (!this.store.indexPending(taskId)) return null;
    if (this.marked || this.marking) {
      this.covered += 1;
      return this.marking;
    }
    const busy = Date.now() - this.lastSent < this.windowMs();
    if (busy) this.markNext = "set";
    const call = this.flush().catch((error) =>
      logEvent("error", "edgelink: could not schedule an index retry", { error }),
    );
    if (!busy) return call;
    const marking: Promise<void> = call.finally(() => {
      if (this.marking === marking) this.marking = null;
    });
    this.marking = marking;
    return marking;
  }

  /**
   * A listing asks for the rows now (the index holds this conversation's mark). A mark
   * this instance did not set, left by an earlier run of the object, goes with them.
   */
  sendForListing(): Promise<void> {
    if (!this.marked && this.markNext === null) this.markNext = "clear";
    return this.flush();
  }

  /** The rows go to another shard now: a mark in the old one covers nothing there. */
  forgetMark(): void {
    this.marked = false;
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
    const mark = this.markFor(more);
    if (rows.length === 0 && removed.length === 0 && mark === undefined) {
      return { sent: true, more: false };
    }
    const target = this.host.target();
    if (!target) return { sent: false, more: false };
    if (rows.length || mark) {
      if (rows.length) this.lastSent = Date.now();
      const indexRows: IndexRow[] = rows.map((r) => ({ ...r, contextId: target.contextId }));
      await target.index.upsert(indexRows, mark && { contextId: target.contextId, on: mark.on });
      if (mark?.on) this.marked = true;
      this.store.acknowledge(rows);
    }
    if (removed.length) {
      await target.index.remove(removed);
      this.store.removed(removed);
    }
    return { sent: true, more };
  }

  /**
   * What this call does with the mark, decided as it reads its rows: an answer after
   * that is covered by this call's mark, or else by a call of its own.
   */
  private markFor(more: boolean): Pick<IndexMark, "on"> | undefined {
    const asked = this.markNext;
    const closed = this.windowClosed;
    this.markNext = null;
    this.windowClosed = false;
    if (asked === "set" && !this.marked) return { on: true };
    // A mark goes only with the last of the rows it covers (a backlog takes several calls).
    if (more && (asked === "clear" || closed)) {
      this.markNext = asked;
      this.windowClosed = closed;
      return undefined;
    }
    if (asked === "clear" && !this.marked) return { on: false };
    if (!closed || !this.marked) return undefined;
    if (this.covered === 0) {
      this.marked = false;
      return { on: false };
    }
    // Still busy: the mark stays, and the next window decides again.
    this.covered = 0;
    this.schedule();
    return undefined;
  }
}
