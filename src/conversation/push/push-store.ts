/**
 * The push delivery outbox of a conversation: each webhook delivery queued in the
 * transaction of its event, coalesced while a config is unhealthy or chunks stream, its
 * body fixed at its first attempt. Built on the deliveries' states (push-deliveries.ts)
 * and its task's configs.
 */
import type { PushOptions } from "../../agent/agent-config";
import type { TaskEvent } from "../../protocol/events";
import { CHUNK_HOLD_MS, waitsForChunks } from "../../push/chunks";
import { CHUNK_CHARS } from "../../storage/row-limit";
import { type DeliveryRow, PushDeliveries } from "./push-deliveries";
import { readSnapshot, storeRest } from "./push-snapshots";

/** How the outbox queues artifact chunks (see `PushOptions.artifactChunks`). */
export interface PushStoreOptions {
  artifactChunks?: PushOptions["artifactChunks"];
  /** How long a chunk not marked last waits for the appends behind it; default 1 s. */
  holdMs?: number;
}

/**
 * Push configs and the delivery outbox of one conversation. Enqueueing is synchronous
 * SQLite work, so it joins the transaction of the event it delivers.
 */
export class PushStore extends PushDeliveries {
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
    storeRest(this.sql, seq, body);
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
    if (snapshot !== undefined) for (const r of rows) storeRest(this.sql, r.seq, snapshot);
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

  /** The frozen body of a snapshot delivery (the task when its config was registered). */
  snapshotOf(seq: number): string | null {
    return readSnapshot(this.sql, seq);
  }
}
