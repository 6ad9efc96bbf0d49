import type { PushConfig } from "../push/config";

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
});

/**
 * Push configs and the delivery outbox of one conversation. Enqueueing is synchronous
 * SQLite work, so it joins the transaction of the event it delivers.
 */
export class PushStore {
  constructor(private readonly sql: SqlStorage) {}

  /**
   * Tasks known to have no config (most tasks), so their events queue nothing without a
   * statement. Bounded: a task not remembered is looked up in SQLite as before.
   */
  private readonly without = new Set<string>();

  /** Records that a task just created has no config yet. */
  noConfigs(taskId: string): void {
    this.without.add(taskId);
    if (this.without.size > 256) {
      const oldest = this.without.values().next().value as string;
      this.without.delete(oldest);
    }
  }

  saveConfig(config: PushConfig): void {
    this.without.delete(config.taskId);
    this.sql.exec(
      `INSERT INTO push_configs (task_id, id, body, created_at) VALUES (?, ?, ?, ?)
       ON CONFLICT (task_id, id) DO UPDATE SET body = excluded.body`,
      config.taskId,
      config.id,
      JSON.stringify(config),
      new Date().toISOString(),
    );
  }

  config(taskId: string, id: string): PushConfig | null {
    const row = this.sql
      .exec<{ body: string }>(
        "SELECT body FROM push_configs WHERE task_id = ? AND id = ?",
        taskId,
        id,
      )
      .toArray()[0];
    return row ? (JSON.parse(row.body) as PushConfig) : null;
  }

  /** A task's configs, oldest first; `after` is the last id of the previous page. */
  configs(taskId: string, options: { after?: string; limit?: number } = {}): PushConfig[] {
    return this.sql
      .exec<{ body: string }>(
        `SELECT body FROM push_configs WHERE task_id = ? AND id > ? ORDER BY id LIMIT ?`,
        taskId,
        options.after ?? "",
        options.limit ?? -1,
      )
      .toArray()
      .map((r) => JSON.parse(r.body) as PushConfig);
  }

  /** Deletes a config and its undelivered events; true when it existed. */
  deleteConfig(taskId: string, id: string): boolean {
    this.sql.exec(
      "DELETE FROM push_deliveries WHERE task_id = ? AND config_id = ? AND state = 'pending'",
      taskId,
      id,
    );
    return (
      this.sql.exec("DELETE FROM push_configs WHERE task_id = ? AND id = ?", taskId, id)
        .rowsWritten > 0
    );
  }

  /** Queues an event (or, with eventSeq null, a task snapshot) for every config of the task. */
  enqueue(
    taskId: string,
    eventSeq: number | null,
    now: number,
    onlyConfig?: string,
    snapshot?: string,
  ): number {
    if (this.without.has(taskId)) return 0;
    // RETURNING counts rows; rowsWritten would count index entries too.
    const queued = this.sql
      .exec(
        `INSERT INTO push_deliveries (task_id, config_id, event_seq, next_at, snapshot)
         SELECT task_id, id, ?, ?, ? FROM push_configs WHERE task_id = ? AND (? IS NULL OR id = ?)
         RETURNING seq`,
        eventSeq,
        now,
        snapshot ?? null,
        taskId,
        onlyConfig ?? null,
        onlyConfig ?? null,
      )
      .toArray().length;
    if (queued === 0 && onlyConfig === undefined) this.noConfigs(taskId);
    return queued;
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

  configCount(taskId: string): number {
    return this.sql
      .exec<{ n: number }>("SELECT COUNT(*) AS n FROM push_configs WHERE task_id = ?", taskId)
      .one().n;
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
  }

  /** The frozen body of a snapshot delivery (the task when its config was registered). */
  snapshotOf(seq: number): string | null {
    return (
      this.sql
        .exec<{ snapshot: string | null }>(
          "SELECT snapshot FROM push_deliveries WHERE seq = ?",
          seq,
        )
        .toArray()[0]?.snapshot ?? null
    );
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
        "SELECT * FROM push_deliveries WHERE task_id = ? AND state = 'dead' AND seq > ? ORDER BY seq LIMIT ?",
        taskId,
        page.after ?? 0,
        Math.min(Math.max(page.limit ?? 100, 1), 1000),
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
