import type { IndexRow, IndexRpc } from "./index-object";
import type { TaskStore } from "./task-store";

/**
 * Delivers a conversation's pending index rows (written in the same transaction as each
 * state change) to its tenant's index object. Concurrent callers share one flush; a
 * failed flush leaves the rows in the outbox and asks for a retry.
 */
export class IndexOutbox {
  private flushing: Promise<void> | null = null;
  private again = false;

  constructor(
    private readonly store: TaskStore,
    /** The index object and this conversation's id, or null before the object is claimed. */
    private readonly target: () => { index: IndexRpc; contextId: string } | null,
    private readonly retryLater: () => Promise<void>,
  ) {}

  flush(): Promise<void> {
    if (this.flushing) {
      this.again = true;
      return this.flushing;
    }
    this.flushing = (async () => {
      try {
        do {
          this.again = false;
          await this.send();
        } while (this.again);
      } catch (error) {
        console.error("edgelink: task index update failed; retrying", error);
        await this.retryLater();
      } finally {
        this.flushing = null;
      }
    })();
    return this.flushing;
  }

  private async send(): Promise<void> {
    const rows = this.store.outbox();
    const removed = this.store.removals();
    if (rows.length === 0 && removed.length === 0) return;
    const target = this.target();
    if (!target) return;
    if (rows.length) {
      const indexRows: IndexRow[] = rows.map((r) => ({ ...r, contextId: target.contextId }));
      await target.index.upsert(indexRows);
      this.store.acknowledge(rows);
    }
    if (removed.length) {
      await target.index.remove(removed);
      this.store.removed(removed);
    }
  }
}
