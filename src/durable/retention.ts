/**
 * Retention of a conversation's finished tasks (`limits.retainFinishedTasks`,
 * `limits.retainFinishedMs`): when it next has work, which tasks go, and their rows'
 * deletion. The task store runs a prune in its transaction; the alarm asks when.
 */
import { sqlLimit } from "./sql-limit";

/** The states retention prunes (the terminal ones), as SQL. */
const FINISHED = "state IN ('completed', 'failed', 'canceled', 'rejected')";

/** Ids bound per deleting statement: bound parameters are limited, 90 stay well under. */
export const PRUNE_CHUNK = 90;

export class Retention {
  constructor(private readonly storage: DurableObjectStorage) {}

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
   * Up to `batch` finished tasks beyond the newest `keep` or last updated before
   * `olderThan` (a set: a task may be both).
   */
  candidates(keep: number, olderThan: string, batch: number): string[] {
    const ids = new Set<string>();
    for (const r of this.sql.exec<{ id: string }>(
      `SELECT id FROM tasks WHERE ${FINISHED} AND updated_at < ? ORDER BY updated_at LIMIT ${sqlLimit(batch)}`,
      olderThan,
    )) {
      ids.add(r.id);
    }
    for (const r of this.sql.exec<{ id: string }>(
      `SELECT id FROM tasks WHERE ${FINISHED} ORDER BY updated_at DESC, id DESC LIMIT ${sqlLimit(batch)} OFFSET ${sqlLimit(keep)}`,
    )) {
      ids.add(r.id);
    }
    return [...ids];
  }

  /**
   * Deletes the rows of up to PRUNE_CHUNK tasks: their artifacts, events, webhook rows
   * (`withPush`) and task rows. The conversation history is left alone.
   */
  deleteRows(chunk: readonly string[], withPush: boolean): void {
    const marks = chunk.map(() => "?").join(", ");
    for (const table of ["artifacts", "artifact_parts", "events"]) {
      this.sql.exec(`DELETE FROM ${table} WHERE task_id IN (${marks})`, ...chunk);
    }
    if (withPush) {
      this.sql.exec(`DELETE FROM push_deliveries WHERE task_id IN (${marks})`, ...chunk);
      this.sql.exec(`DELETE FROM push_configs WHERE task_id IN (${marks})`, ...chunk);
    }
    this.sql.exec(`DELETE FROM tasks WHERE id IN (${marks})`, ...chunk);
  }
}
