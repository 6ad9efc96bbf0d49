/**
 * Push delivery: sends a conversation's queued webhook deliveries from the object's
 * alarm, in order per config, coalescing chunks, marking configs unhealthy and retrying.
 */
import type { Agent } from "../../agent/definition";
import type { TaskEvent } from "../../protocol/events";
import { compact } from "../../protocol/json";
import type { Task } from "../../protocol/task";
import { nextDelay } from "../../push/backoff";
import {
  type ArtifactUpdateEvent,
  addedChars,
  COALESCED_CHUNK_CHARS,
  continues,
  mergeChunks,
} from "../../push/chunks";
import { buildDelivery, type DeliveryOutcome, deliver } from "../../push/delivery";
import type { SigningKey } from "../../push/signing";
import { logEvent } from "../../telemetry/log";
import { inContext } from "../../telemetry/otel";
import type { TaskSteps } from "../tasks/task-steps";
import type { TaskStore } from "../tasks/task-store";
import type { DeliveryRow } from "./push-deliveries";
import { PUSH_KEYS_SECRET, signingKeys } from "./push-keys";
import { MAX_SNAPSHOT_CHARS } from "./push-snapshots";
import type { PushStore } from "./push-store";
import { endPushAttempt, tracePushAttempt } from "./push-trace";

/** Failed attempts in a row after which a config is unhealthy (`PushOptions.unhealthyAfter`). */
export const DEFAULT_UNHEALTHY_AFTER = 5;

/** Most queued chunks one coalesced delivery looks at behind its first. */
const MAX_CHUNKS_TAKEN = 1000;

/**
 * Sends a conversation's queued webhook deliveries from the object's alarm: for each
 * config only its oldest pending delivery, so events arrive in order; configs in
 * parallel. Every outcome is written before the next attempt, so a restart between
 * attempts repeats at most the one in flight (at least once, same event id).
 */
export class PushDispatcher {
  constructor(
    private readonly push: PushStore,
    private readonly store: TaskStore,
    private readonly agent: Agent<unknown>,
    private readonly env: unknown,
    private readonly issuer: () => string,
    private readonly snapshot: (taskId: string) => Task,
    private readonly fetchFn: typeof fetch = (input, init) => fetch(input, init),
  ) {}

  /** Where each attempt is recorded for the inspector (its steps write only while it is on). */
  steps: Pick<TaskSteps, "noteAttempt"> | null = null;

  /** The stored trace context of a task's run (read only while tracing is on). */
  traceOf: (taskId: string) => string | null = () => null;

  /** Delivers everything due now; returns when the next delivery is due, or null. */
  async run(now = Date.now()): Promise<number | null> {
    for (;;) {
      const due = this.push.heads().filter((d) => d.nextAt <= now);
      if (due.length === 0) break;
      await Promise.all(due.map((d) => this.attempt(d, now)));
      now = Date.now();
    }
    return this.push.nextDue();
  }

  /**
   * The task a snapshot delivery sends: as stored with the row (a config's first delivery,
   * or a coalesced one already tried), else as it is now. A coalesced delivery says in the
   * task's metadata how many events it replaces (`pushCoalescedEvents`), and is fixed at
   * its first attempt so every retry carries the same bytes under the same event id.
   */
  private frozenSnapshot(row: DeliveryRow): Task | string {
    const body = this.push.snapshotOf(row.seq);
    if (body !== null) return JSON.parse(body) as Task;
    const task = this.snapshot(row.taskId);
    if (row.skipped === 0) return task;
    const coalesced = { ...task, metadata: { ...task.metadata, pushCoalescedEvents: row.skipped } };
    const text = JSON.stringify(coalesced);
    // Sent unfrozen, a retry could carry other bytes under the same event id: refused instead.
    if (text.length > MAX_SNAPSHOT_CHARS) {
      return `the task snapshot is ${text.length} characters of JSON, over the ${MAX_SNAPSHOT_CHARS} a webhook delivery keeps`;
    }
    this.push.freeze(row.seq, text);
    return coalesced;
  }

  /**
   * The event a delivery sends. Its body, once fixed (a coalesced delivery), is sent again
   * as it is. Coalescing chunks, the first attempt of an artifact chunk takes along the
   * appends to the same artifact queued right behind it (never past any other event) and
   * fixes the result, so a retry or a restart sends the same bytes under the same event id.
   */
  private eventOf(row: DeliveryRow, eventSeq: number): TaskEvent | null {
    const frozen = this.push.snapshotOf(row.seq);
    if (frozen !== null) return JSON.parse(frozen) as TaskEvent;
    const event = this.store.events.get(eventSeq);
    const untried = row.attempts === 0 && row.lastError === null && row.skipped === 0;
    if (event?.kind !== "artifact-update" || !this.push.coalesces || !untried) {
      return event;
    }
    return this.withChunksBehind(row, event);
  }

  private withChunksBehind(row: DeliveryRow, head: ArtifactUpdateEvent): TaskEvent {
    const rest: ArtifactUpdateEvent[] = [];
    let last = head;
    let through: number | null = null;
    let chars = JSON.stringify(head).length;
    for (const next of this.push.following(row, MAX_CHUNKS_TAKEN)) {
      if (!next.fresh || next.eventSeq === null) break;
      const event = this.store.events.get(next.eventSeq);
      if (!event || !continues(head, last, event)) break;
      chars += addedChars(event);
      if (chars > COALESCED_CHUNK_CHARS) break;
      rest.push(event);
      last = event;
      through = next.seq;
    }
    const merged = mergeChunks(head, rest);
    this.push.absorb(row, JSON.stringify(merged), through);
    return merged;
  }

  /**
   * Dead letters are the owner's to read (the dead-letter API, the task's steps), never in
   * the task's metadata: every receiver gets the task, and one must not learn of another.
   */
  private deadLetter(row: DeliveryRow, attempts: number, reason: string): void {
    this.push.markDead(row.seq, attempts, reason);
  }

  /**
   * Each attempt's time, duration and outcome, in the task's steps for the inspector's
   * waterfall (not in the task, which every receiver gets); a failed one is logged too,
   * without the receiver's answer (its status and Edgelink's reason only).
   */
  private noteAttempt(row: DeliveryRow, at: number, result: DeliveryOutcome): void {
    const ms = Date.now() - at;
    const failed = result.outcome !== "delivered";
    this.steps?.noteAttempt(row.taskId, {
      config: row.configId,
      at,
      ms,
      status: result.status,
      ok: !failed,
    });
    if (failed) {
      logEvent("warn", "edgelink: push delivery attempt failed", {
        taskId: row.taskId,
        config: row.configId,
        attempt: row.attempts + 1,
        status: result.status,
        reason: result.reason,
        durationMs: ms,
      });
    }
  }

  private async attempt(row: DeliveryRow, now: number): Promise<void> {
    const health = this.push.configHealth(row.taskId, row.configId);
    if (!health) return this.deadLetter(row, row.attempts, "config deleted");
    const { config } = health;
    let event: TaskEvent | null;
    if (row.eventSeq === null) {
      const task = this.frozenSnapshot(row);
      if (typeof task === "string") return this.deadLetter(row, row.attempts, task);
      event = { kind: "task", task };
    } else {
      event = this.eventOf(row, row.eventSeq);
    }
    if (!event) return this.deadLetter(row, row.attempts, "event no longer stored");
    let key: SigningKey | undefined;
    try {
      [key] = await signingKeys(this.env);
    } catch (error) {
      // A bad secret does not heal by retrying: say so once, keep the delivery for redelivery.
      const why = error instanceof Error ? error.message : String(error);
      return this.deadLetter(row, row.attempts, `${PUSH_KEYS_SECRET} is not usable: ${why}`);
    }
    const delivery = await buildDelivery({
      config,
      event,
      // Stable across retries and restarts: receivers drop duplicates by it.
      eventId: `${row.taskId}~${row.seq}`,
      signingKey: key,
      issuer: this.issuer(),
    });
    const startedAt = Date.now();
    const attempts = row.attempts + 1;
    const traced = tracePushAttempt(this.traceOf, row, attempts, delivery);
    const result = await inContext(traced?.ctx, () => deliver(this.fetchFn, delivery));
    endPushAttempt(traced, result);
    this.noteAttempt(row, startedAt, result);
    if (result.outcome === "delivered") {
      this.push.markDelivered(row.seq);
      if (health.failures > 0) this.push.recordSuccess(row.taskId, row.configId);
      return;
    }
    const failures = this.push.recordFailure(row.taskId, row.configId);
    const reason = result.reason ?? `HTTP ${result.status ?? "error"}`;
    if (result.outcome === "permanent" && result.status === 410) {
      this.push.disableConfig(row.taskId, row.configId, `${reason}; config removed`);
      return this.deadLetter(row, attempts, reason);
    }
    const firstAttemptAt = row.firstAttemptAt ?? now;
    const delay =
      result.outcome === "permanent"
        ? null
        : nextDelay(
            { attempts, firstAttemptAt, now, retryAfterMs: result.retryAfterMs },
            compact({
              horizonMs: this.agent.push?.horizonMs,
              maxAttempts: this.agent.push?.maxAttempts,
            }),
          );
    if (delay === null) this.deadLetter(row, attempts, reason);
    else this.push.reschedule(row.seq, attempts, firstAttemptAt, now + delay, reason);
    const limit = this.agent.push?.unhealthyAfter ?? DEFAULT_UNHEALTHY_AFTER;
    if (!health.unhealthy && failures >= limit) {
      // A receiver that keeps failing does not hold every later event for a day each:
      // what is queued for it coalesces into one snapshot of the task, probed on backoff.
      const nextAt = delay === null ? now : now + delay;
      this.push.markUnhealthy(row.taskId, row.configId, {
        ...row,
        attempts,
        firstAttemptAt,
        nextAt,
        lastError: reason,
      });
    }
  }
}
