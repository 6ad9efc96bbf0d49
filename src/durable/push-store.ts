/**
 * The push delivery outbox of a conversation: each webhook delivery queued in the
 * transaction of its event, coalesced while a config is unhealthy or chunks stream,
 * attempted, retried, delivered or dead-lettered. Built on its task's configs.
 */
import type { PushOptions } from "../agent/definition";
import type { TaskEvent } from "../models/events";
import { CHUNK_HOLD_MS, waitsForChunks } from "../push/chunks";
import { PushConfigs } from "./push-configs";
import { CHUNK_CHARS } from "./row-limit";
import { sqlLimit } from "./sql-limit";

/**
 * Largest task snapshot a webhook delivery freezes (8 Mi characters of JSON, 32 chunk
 * rows): the first part in the delivery row, the rest in chunk rows beside it.
 */
export const MAX_SNAPSHOT_CHARS = 32 * CHUNK_CHARS;

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

/** How the outbox queues artifact chunks (see `PushOptions.artifactChunks`). */
export interface PushStoreOptions {
  artifactChunks?: PushOptions["artifactChunks"];
  /** How long a chunk not marked last waits for the appends behind it; default 1 s. */
  holdMs?: number;
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

/**
 * Push configs and the delivery outbox of one conversation. Enqueueing is synchronous
 * SQLite work, so it joins the transaction of the event it delivers.
 */
export class PushStore extends PushConfigs {
  /** Whether artifact chunks to a webhook are coalesced (the default) rather than sent each. */
  readonly coalesces: boolean;
  private readonly holdMs: number;

  constructor(sql: SqlStorage, options: PushStoreOptions = {}) {
    super(sql);
    this.coalesces = options.artifactChunks !== "each";
    this.holdMs = options.holdMs ?? CHUNK_HOLD_MS;
  }

  /**
   * Tasks with chunks waiting (see `enqueueEvent`) since this instance started. One
   * forgotten (by a restart, or past 256 tasks) waits its hold out, no longer.
   */
  private readonly holding = new Set<string>();

  /**
   * Marks a config unhealthy and coalesces what it has queued: every pending delivery whose
   * body is not yet fixed (all but a first snapshot or a coalesced snapshot already sent)
   * becomes one coalesced snapshot delivery, placed after those, counting the events it
   * replaces. It takes over the retry state of the delivery in flight when that one was
   * coalesced, so probing goes on at the same backoff. Returns the events coalesced.
   */
  markUnhealthy(taskId: string, id: string, head: DeliveryRow): number {
    const removed = this.sql
      .exec<{ seq: number; skipped: number }>(
        `DELETE FROM push_deliveries WHERE task_id = ? AND config_id = ? AND state = 'pending'
         AND snapshot IS NULL RETURNING seq, skipped`,
        taskId,
        id,
      )
      .toArray();
    const events = removed.reduce((n, r) => n + Math.max(r.skipped, 1), 0);
    // Events already counted by an earlier coalesced delivery are not counted twice.
    const fresh = removed.filter((r) => r.skipped === 0).length;
    this.sql.exec(
      "UPDATE push_configs SET unhealthy = 1, skipped = skipped + ? WHERE task_id = ? AND id = ?",
      fresh,
      taskId,
      id,
    );
    if (removed.length > 0) {
      const tookHead = removed.some((r) => r.seq === head.seq);
      this.sql.exec(
        `INSERT INTO push_deliveries (task_id, config_id, event_seq, next_at, skipped, attempts, first_attempt_at, last_error)
         VALUES (?, ?, NULL, ?, ?, ?, ?, ?)`,
        taskId,
        id,
        head.nextAt,
        events,
        tookHead ? head.attempts : 0,
        tookHead ? head.firstAttemptAt : null,
        tookHead ? head.lastError : null,
      );
    }
    this.sick?.add(taskId);
    return fresh;
  }

  /**
   * Folds one new event into each unhealthy config's open coalesced delivery (one not yet
   * sent), opening one where there is none. Returns the deliveries touched.
   */
  private coalesce(taskId: string, now: number): number {
    const open = this.sql
      .exec(
        `UPDATE push_deliveries SET skipped = skipped + 1
         WHERE task_id = ? AND state = 'pending' AND skipped > 0 AND snapshot IS NULL
         AND config_id IN (SELECT id FROM push_configs WHERE task_id = ? AND unhealthy = 1)
         RETURNING seq`,
        taskId,
        taskId,
      )
      .toArray().length;
    const opened = this.sql
      .exec(
        `INSERT INTO push_deliveries (task_id, config_id, event_seq, next_at, skipped)
         SELECT task_id, id, NULL, ?, 1 FROM push_configs c WHERE task_id = ? AND unhealthy = 1
         AND NOT EXISTS (SELECT 1 FROM push_deliveries d WHERE d.task_id = c.task_id
           AND d.config_id = c.id AND d.state = 'pending' AND d.skipped > 0 AND d.snapshot IS NULL)
         RETURNING seq`,
        now,
        taskId,
      )
      .toArray().length;
    this.sql.exec(
      "UPDATE push_configs SET skipped = skipped + 1 WHERE task_id = ? AND unhealthy = 1",
      taskId,
    );
    return open + opened;
  }

  /** Fixes the body of a coalesced snapshot at its first attempt: retries send the same bytes. */
  freeze(seq: number, body: string): void {
    this.sql.exec(
      "UPDATE push_deliveries SET snapshot = ? WHERE seq = ?",
      body.slice(0, CHUNK_CHARS),
      seq,
    );
    this.storeRest(seq, body);
  }

  /** Puts what follows a snapshot's first chunk in chunk rows (nothing when it fits). */
  private storeRest(seq: number, body: string): void {
    if (body.length > MAX_SNAPSHOT_CHARS) {
      throw new RangeError(`snapshot of ${body.length} characters over ${MAX_SNAPSHOT_CHARS}`);
    }
    const chunks = Math.ceil(body.length / CHUNK_CHARS);
    if (chunks <= 1) return;
    for (let i = 1; i < chunks; i++) {
      this.sql.exec(
        "INSERT INTO push_snapshot_chunks (seq, idx, data) VALUES (?, ?, ?)",
        seq,
        i,
        body.slice(i * CHUNK_CHARS, (i + 1) * CHUNK_CHARS),
      );
    }
    this.sql.exec("UPDATE push_deliveries SET snapshot_chunks = ? WHERE seq = ?", chunks - 1, seq);
  }

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

  /** Queues an event (or, with eventSeq null, a task snapshot) for every config of the task. */
  enqueue(
    taskId: string,
    eventSeq: number | null,
    now: number,
    onlyConfig?: string,
    snapshot?: string,
    nextAt: number = now,
  ): number {
    if (this.without.has(taskId)) return 0;
    const coalesced =
      onlyConfig === undefined && this.hasUnhealthy(taskId) ? this.coalesce(taskId, now) : 0;
    // RETURNING counts rows; rowsWritten would count index entries too.
    const rows = this.sql
      .exec<{ seq: number }>(
        `INSERT INTO push_deliveries (task_id, config_id, event_seq, next_at, snapshot)
         SELECT task_id, id, ?, ?, ? FROM push_configs
         WHERE task_id = ? AND (? IS NULL OR id = ?) AND (unhealthy = 0 OR ? IS NOT NULL)
         RETURNING seq`,
        eventSeq,
        nextAt,
        snapshot === undefined ? null : snapshot.slice(0, CHUNK_CHARS),
        taskId,
        onlyConfig ?? null,
        onlyConfig ?? null,
        onlyConfig ?? null,
      )
      .toArray();
    if (snapshot !== undefined) for (const r of rows) this.storeRest(r.seq, snapshot);
    const queued = rows.length;
    if (queued + coalesced === 0 && onlyConfig === undefined) this.noConfigs(taskId);
    return queued + coalesced;
  }

  /**
   * Queues a logged event for every config of its task. When chunks coalesce, an artifact
   * chunk not marked last waits (`holdMs`) for the appends behind it, which ride in its
   * delivery; any other event makes what waits for the task due at once, so a status
   * update or a last chunk is never held back by the chunks before it.
   */
  enqueueEvent(taskId: string, seq: number, event: TaskEvent, now: number): number {
    const waits = this.coalesces && waitsForChunks(event);
    const queued = this.enqueue(
      taskId,
      seq,
      now,
      undefined,
      undefined,
      waits ? now + this.holdMs : now,
    );
    if (waits && queued > 0) {
      this.holding.add(taskId);
      if (this.holding.size > 256) {
        this.holding.delete(this.holding.values().next().value as string);
      }
    } else if (!waits && this.holding.delete(taskId)) {
      // Only never-attempted event rows wait in the future: a retry's backoff is untouched.
      this.sql.exec(
        `UPDATE push_deliveries SET next_at = ?1 WHERE task_id = ?2 AND state = 'pending'
         AND attempts = 0 AND last_error IS NULL AND skipped = 0 AND event_seq IS NOT NULL
         AND next_at > ?1`,
        now,
        taskId,
      );
    }
    return queued;
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

  /**
   * Fixes a delivery's body before its first attempt (every retry sends the same bytes
   * under the same event id) and removes the rows it took along: those of its config
   * queued after it up to `through`.
   */
  absorb(row: DeliveryRow, body: string, through: number | null): void {
    this.freeze(row.seq, body);
    if (through === null) return;
    this.sql.exec(
      `DELETE FROM push_deliveries WHERE state = 'pending' AND task_id = ? AND config_id = ?
       AND seq > ? AND seq <= ?`,
      row.taskId,
      row.configId,
      row.seq,
      through,
    );
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

  /** The frozen body of a snapshot delivery (the task when its config was registered). */
  snapshotOf(seq: number): string | null {
    const row = this.sql
      .exec<{ snapshot: string | null; snapshot_chunks: number }>(
        "SELECT snapshot, snapshot_chunks FROM push_deliveries WHERE seq = ?",
        seq,
      )
      .toArray()[0];
    if (!row || row.snapshot === null) return null;
    if (row.snapshot_chunks === 0) return row.snapshot;
    const rest = this.sql
      .exec<{ data: string }>(
        "SELECT data FROM push_snapshot_chunks WHERE seq = ? ORDER BY idx",
        seq,
      )
      .toArray();
    return row.snapshot + rest.map((r) => r.data).join("");
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
