/**
 * A conversation's webhook deliveries once queued: the next one of each config, attempts
 * rescheduled, delivered, dead-lettered and redelivered, and a config's queue dropped with
 * it. Queueing them is the outbox's (push-store.ts); this builds on the task's configs.
 */

import { sqlLimit } from "../../storage/sql-limit";
import { PushConfigs } from "./push-configs";

/** One pending or finished webhook delivery: an event (or the task snapshot) for a config. */
export interface DeliveryRow {
  seq: number;
  taskId: string;
  configId: string;
  /** The logged event to send; null sends the task as it is then (a config's first POST). */
  eventSeq: number | null;
  state: "pending" | "delivered" | "dead";
  attempts: number;
  firstAttemptAt: number | null;
  nextAt: number;
  lastError: string | null;
  /**
   * Events this delivery stands for when it is a coalesced snapshot (the config was
   * unhealthy): the task as it is at its first attempt replaces them. 0 otherwise.
   */
  skipped: number;
}

/** A delivery queued behind another for the same config, and whether it may still change. */
export interface FollowingRow {
  seq: number;
  eventSeq: number | null;
  /** Never attempted and not a snapshot: its body is not fixed yet. */
  fresh: boolean;
}

interface Row {
  seq: number;
  task_id: string;
  config_id: string;
  event_seq: number | null;
  state: string;
  attempts: number;
  first_attempt_at: number | null;
  next_at: number;
  last_error: string | null;
  skipped: number;
  [key: string]: SqlStorageValue;
}

const toDelivery = (r: Row): DeliveryRow => ({
  seq: r.seq,
  taskId: r.task_id,
  configId: r.config_id,
  eventSeq: r.event_seq,
  state: r.state as DeliveryRow["state"],
  attempts: r.attempts,
  firstAttemptAt: r.first_attempt_at,
  nextAt: r.next_at,
  lastError: r.last_error,
  skipped: r.skipped,
});

/** The delivery rows of one conversation, on its push configs. */
export class PushDeliveries extends PushConfigs {
  /** Deletes a config and its undelivered events; true when it existed. */
  deleteConfig(taskId: string, id: string): boolean {
    this.sql.exec(
      "DELETE FROM push_deliveries WHERE task_id = ? AND config_id = ? AND state = 'pending'",
      taskId,
      id,
    );
    const existed =
      this.sql.exec("DELETE FROM push_configs WHERE task_id = ? AND id = ?", taskId, id)
        .rowsWritten > 0;
    this.recheck(taskId);
    return existed;
  }

  /** Pending deliveries queued behind `row` for its config, oldest first, at most `limit`. */
  following(row: DeliveryRow, limit: number): FollowingRow[] {
    return this.sql
      .exec<{ seq: number; event_seq: number | null; fresh: number }>(
        `SELECT seq, event_seq, (attempts = 0 AND last_error IS NULL AND skipped = 0
           AND snapshot IS NULL) AS fresh
         FROM push_deliveries WHERE state = 'pending' AND task_id = ? AND config_id = ? AND seq > ?
         ORDER BY seq LIMIT ${sqlLimit(limit)}`,
        row.taskId,
        row.configId,
        row.seq,
      )
      .toArray()
      .map((r) => ({ seq: r.seq, eventSeq: r.event_seq, fresh: r.fresh === 1 }));
  }

  /** The next pending delivery of each config: later events wait for earlier ones. */
  heads(): DeliveryRow[] {
    return this.sql
      .exec<Row>(
        `SELECT d.* FROM push_deliveries d
         JOIN (SELECT task_id, config_id, MIN(seq) AS seq FROM push_deliveries
               WHERE state = 'pending' GROUP BY task_id, config_id) h ON h.seq = d.seq`,
      )
      .toArray()
      .map(toDelivery);
  }

  /** When the alarm should next fire, or null when nothing is pending. */
  nextDue(): number | null {
    const heads = this.heads();
    return heads.length ? Math.min(...heads.map((d) => d.nextAt)) : null;
  }

  /** A delivered row has done its job: it goes (retention of delivered rows is zero). */
  markDelivered(seq: number): void {
    this.sql.exec("DELETE FROM push_deliveries WHERE seq = ?", seq);
  }

  /**
   * A receiver that answered 410 Gone: its config is removed and what was still queued for
   * it is dead-lettered with the reason, so nothing is retried against it again.
   */
  disableConfig(taskId: string, configId: string, reason: string): void {
    this.sql.exec(
      "UPDATE push_deliveries SET state = 'dead', last_error = ? WHERE task_id = ? AND config_id = ? AND state = 'pending'",
      reason,
      taskId,
      configId,
    );
    this.sql.exec("DELETE FROM push_configs WHERE task_id = ? AND id = ?", taskId, configId);
    this.recheck(taskId);
  }

  reschedule(seq: number, attempts: number, firstAttemptAt: number, nextAt: number, error: string) {
    this.sql.exec(
      "UPDATE push_deliveries SET attempts = ?, first_attempt_at = ?, next_at = ?, last_error = ? WHERE seq = ?",
      attempts,
      firstAttemptAt,
      nextAt,
      error,
      seq,
    );
  }

  markDead(seq: number, attempts: number, error: string): void {
    this.sql.exec(
      "UPDATE push_deliveries SET state = 'dead', attempts = ?, last_error = ? WHERE seq = ?",
      attempts,
      error,
      seq,
    );
  }

  /** Dead-lettered deliveries of a task, oldest first, a page at a time (default 100). */
  dead(taskId: string, page: { after?: number; limit?: number } = {}): DeliveryRow[] {
    return this.sql
      .exec<Row>(
        `SELECT * FROM push_deliveries WHERE task_id = ? AND state = 'dead' AND seq > ? ORDER BY seq LIMIT ${sqlLimit(Math.min(Math.max(page.limit ?? 100, 1), 1000))}`,
        taskId,
        page.after ?? 0,
      )
      .toArray()
      .map(toDelivery);
  }

  /** How many deliveries of a task are dead-lettered. */
  deadCount(taskId: string): number {
    return this.sql
      .exec<{ n: number }>(
        "SELECT COUNT(*) AS n FROM push_deliveries WHERE task_id = ? AND state = 'dead'",
        taskId,
      )
      .one().n;
  }

  /** Puts a task's dead-lettered deliveries back in the queue; returns how many. */
  redeliver(taskId: string, now: number): number {
    return this.sql
      .exec(
        `UPDATE push_deliveries SET state = 'pending', attempts = 0, first_attempt_at = NULL, next_at = ?
         WHERE task_id = ? AND state = 'dead' RETURNING seq`,
        now,
        taskId,
      )
      .toArray().length;
  }
}
