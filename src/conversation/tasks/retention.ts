/**
 * Retention of a conversation's finished tasks (`limits.retainFinishedTasks`,
 * `limits.retainFinishedMs`): when it next has work, which tasks go, and their rows'
 * deletion. The task store runs a prune in its transaction; the alarm asks when.
 */

import type { PendingIndexRows } from "../../index/index-outbox";
import { sqlLimit } from "../../storage/sql-limit";
import { taskRows } from "../../storage/task-keys";
import type { EventLog } from "./event-log";
import type { ListingClock } from "./listing-clock";
import type { TaskCache } from "./task-cache";

/** The states retention prunes (the terminal ones), as SQL. */
const FINISHED = "state IN ('completed', 'failed', 'canceled', 'rejected')";

/** Ids bound per deleting statement: bound parameters are limited, 90 stay well under. */
const PRUNE_CHUNK = 90;

/** The task store's parts a prune writes to, in the store's transaction. */
export interface PruneParts {
  atomic<T>(fn: () => T): T;
  listing: ListingClock;
  events: EventLog;
  index: PendingIndexRows;
  cache: TaskCache;
  /** Whether the agent has push on (webhook rows to delete). */
  withPush: boolean;
  /** Deletes these tasks' rows (the task store writes the tasks table). */
  deleteTasks(ids: readonly string[]): void;
}

export class Retention {
  constructor(
    private readonly storage: Pick<DurableObjectStorage, "sql">,
    private readonly parts: PruneParts,
  ) {}

  /**
   * Finished tasks and the oldest one's last update, for retention's next due time; read
   * once, then kept as tasks finish (null: read again, after a prune or a rollback).
   */
  private finished: { count: number; oldest: string | null } | null = null;

  private get sql(): SqlStorage {
    return this.storage.sql;
  }

  /** Retention's figures are read again (a prune, or a failed transaction). */
  forget(): void {
    this.finished = null;
  }

  /**
   * When retention next has work: now when more than `keep` tasks are finished, else when
   * the oldest finished task passes `maxAgeMs`; null with none finished.
   */
  due(keep: number, maxAgeMs: number): number | null {
    this.finished ??= this.sql
      .exec<{ count: number; oldest: string | null }>(
        `SELECT COUNT(*) AS count, MIN(updated_at) AS oldest FROM tasks WHERE ${FINISHED}`,
      )
      .one();
    if (this.finished.count > keep) return Date.now();
    return this.finished.oldest === null ? null : Date.parse(this.finished.oldest) + maxAgeMs;
  }

  /** A task just became finished: retention's figures, when held, follow. */
  noteFinished(at: string): void {
    if (!this.finished) return;
    this.finished.count += 1;
    this.finished.oldest ??= at;
  }

  /**
   * Retention: deletes up to `batch` finished tasks beyond the newest `keep` or last
   * updated before `olderThan`, with their artifacts, events and webhook rows, in one
   * transaction, and queues their removal from the tenant index. The conversation
   * history is left alone. Returns how many went.
   */
  prune(keep: number, olderThan: string, batch: number): number {
    const list = this.candidates(keep, olderThan, batch);
    if (list.length === 0) return 0;
    const { listing, events, index, cache } = this.parts;
    this.finished = null;
    this.parts.atomic(() => {
      // Deleted rows take their row_seq and event seqs along: keep both counters in SQLite
      // from going back.
      listing.save();
      events.saveSeq();
      for (let i = 0; i < list.length; i += PRUNE_CHUNK) {
        const chunk = list.slice(i, i + PRUNE_CHUNK);
        this.deleteRows(chunk);
        for (const id of chunk) {
          index.removing(id);
          cache.evict(id);
        }
      }
    });
    index.onPending();
    return list.length;
  }

  /**
   * Up to `batch` finished tasks beyond the newest `keep` or last updated before
   * `olderThan` (a set: a task may be both).
   */
  private candidates(keep: number, olderThan: string, batch: number): string[] {
    const ids = new Set<string>();
    for (const r of this.sql.exec<{ id: string }>(
      `SELECT id FROM tasks WHERE ${FINISHED} AND updated_at < ? ORDER BY row_seq LIMIT ${sqlLimit(batch)}`,
      olderThan,
    )) {
      ids.add(r.id);
    }
    for (const r of this.sql.exec<{ id: string }>(
      `SELECT id FROM tasks WHERE ${FINISHED} ORDER BY row_seq DESC LIMIT ${sqlLimit(batch)} OFFSET ${sqlLimit(keep)}`,
    )) {
      ids.add(r.id);
    }
    return [...ids];
  }

  /** Deletes the rows of up to PRUNE_CHUNK tasks: artifacts, events, webhook rows, tasks. */
  private deleteRows(chunk: readonly string[]): void {
    // Numbered, so one statement can name the chunk twice.
    const numbered = chunk.map((_, i) => `?${i + 1}`);
    const marks = numbered.join(", ");
    const rows = taskRows(numbered);
    for (const table of ["artifacts", "artifact_parts"]) {
      this.sql.exec(
        `DELETE FROM ${table} WHERE task_key IN (SELECT key FROM tasks WHERE ${rows})`,
        ...chunk,
      );
    }
    // The log has no index by task: it is read from the chunk's lowest floor on.
    this.sql.exec(
      `DELETE FROM events WHERE seq >= (SELECT MIN(event_floor) FROM tasks WHERE ${rows})
       AND task_id IN (${marks})`,
      ...chunk,
    );
    if (this.parts.withPush) {
      this.sql.exec(`DELETE FROM push_deliveries WHERE task_id IN (${marks})`, ...chunk);
      this.sql.exec(`DELETE FROM push_configs WHERE task_id IN (${marks})`, ...chunk);
    }
    this.parts.deleteTasks(chunk);
  }
}
