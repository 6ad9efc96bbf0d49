import type { IndexRow, IndexRpc } from "./index-object";
import type { TaskStore } from "./task-store";

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
 * state change) to its tenant's index object. Off the answer's path: the first change
 * opens a window of `windowMs`, and every row pending when it closes goes in one RPC
 * (one commit of the index), a task's several changes as its latest row. Concurrent
 * callers share one flush; a failed flush leaves the rows in SQLite and asks the alarm
 * for a retry.
 */
export class IndexOutbox {
  private flushing: Promise<void> | null = null;
  private again = false;
  private timer: ReturnType<typeof setTimeout> | null = null;

  constructor(
    private readonly store: TaskStore,
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
          .catch((error) => console.error("edgelink: could not schedule an index retry", error))
          .finally(resolve);
      }, windowMs);
    });
    this.host.keepAlive(done);
    // Durable backstop, once per window: if the object goes away before the timer
    // fires, the alarm sends the rows SQLite kept.
    this.host
      .wakeAt(Date.now() + windowMs + INDEX_BACKSTOP_MS)
      .catch((error) => console.error("edgelink: could not schedule the index flush", error));
  }

  /** Sends everything pending now; resolves once the index has it (or a retry is set). */
  flush(): Promise<void> {
    if (this.flushing) {
      this.again = true;
      return this.flushing;
    }
    this.flushing = (async () => {
      try {
        let sent = true;
        do {
          this.again = false;
          sent = await this.send();
        } while (this.again);
        if (sent && this.timer === null) this.host.settled();
      } catch (error) {
        console.error("edgelink: task index update failed; retrying", error);
        await this.host.wakeAt(Date.now() + INDEX_RETRY_MS);
      } finally {
        this.flushing = null;
      }
    })();
    return this.flushing;
  }

  /** One bounded call's worth; false when rows stay behind (the object is not claimed). */
  private async send(): Promise<boolean> {
    const pending = this.store.outbox();
    // Bounded calls: after an outage the backlog goes in slices, one call each.
    const rows = pending.slice(0, INDEX_BATCH_ROWS);
    if (pending.length > INDEX_BATCH_ROWS) this.again = true;
    const removed = this.store.removals();
    if (rows.length === 0 && removed.length === 0) return true;
    const target = this.host.target();
    if (!target) return false;
    if (rows.length) {
      const indexRows: IndexRow[] = rows.map((r) => ({ ...r, contextId: target.contextId }));
      await target.index.upsert(indexRows);
      this.store.acknowledge(rows);
    }
    if (removed.length) {
      await target.index.remove(removed);
      this.store.removed(removed);
    }
    return true;
  }
}
