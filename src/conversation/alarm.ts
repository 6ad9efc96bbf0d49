/**
 * A conversation object's one alarm, in one place: the wake-ups the index outbox, push
 * delivery and retention ask for, where the alarm is set, and what it does when it rings.
 */

import type { Limits } from "../agent/limits";
import type { IndexOutbox } from "../index/index-outbox";
import { logEvent } from "../telemetry/log";
import type { PushDispatcher } from "./push/push-dispatcher";
import type { TaskStore } from "./tasks/task-store";

/**
 * What the object's one alarm is asked for by; `found` is an alarm an earlier run of the
 * object set, for reasons this run does not know, kept when an earlier one replaces it.
 */
export type WakeReason = "index" | "push" | "prune" | "approval" | "found";

/** How long after a task finishes the alarm prunes at the soonest (one alarm serves many). */
const PRUNE_DELAY_MS = 60_000;
/** Between batches when more is to prune. */
const PRUNE_AGAIN_MS = 1_000;
/** Retention's batch: a full one means more is to prune. */
const PRUNE_BATCH = 100;
/** After a failed push run, the alarm tries again this much later. */
const PUSH_RETRY_MS = 5_000;

/** What the alarm works on; read when it rings (a test may replace the agent's limits). */
export interface AlarmParts {
  store: TaskStore;
  outbox: IndexOutbox;
  dispatcher: PushDispatcher | null;
  limits(): Limits;
  /** Expires held calls past their deadline; answers the next deadline, or null. */
  expireHeld(): number | null;
}

/**
 * One alarm serves the index, push and retention: it is set to the earliest wake-up asked
 * for, and each part's request is remembered until the alarm runs.
 */
export class ObjectAlarm {
  constructor(
    private readonly storage: DurableObjectStorage,
    private readonly parts: AlarmParts,
  ) {}

  /** The alarm as far as this object knows (null: ask storage). */
  private alarmAt: number | null = null;
  /** Whether `alarmAt` is an alarm this object set since it started (its reasons known). */
  private owned = false;
  /** The wake-ups each part asked for since the alarm last ran. */
  private readonly wakes = new Map<WakeReason, number>();
  /** Set while the last batch of retention was full: the alarm prunes again soon. */
  private pruneArmed = false;

  /**
   * An object never written has no alarm, so the one its first message asks for is its
   * own (no `getAlarm` first).
   */
  ownFirst(): void {
    this.owned = true;
  }

  /** Asks for a wake-up at `at` (at the latest) for `reason`. */
  async wakeAt(at: number, reason: WakeReason): Promise<void> {
    const asked = this.wakes.get(reason);
    if (asked === undefined || at < asked) this.wakes.set(reason, at);
    // Known to be set early enough (every message asks for the index backstop): no call.
    if (this.alarmAt !== null && this.alarmAt <= at) return;
    if (this.owned) {
      this.alarmAt = at;
      await this.storage.setAlarm(at);
      return;
    }
    const current = await this.storage.getAlarm();
    if (current === null || at < current) {
      if (current !== null) this.wakes.set("found", current);
      this.alarmAt = at;
      this.owned = true;
      await this.storage.setAlarm(at);
    } else {
      this.alarmAt = current;
    }
  }

  /** `wakeAt` without waiting: a failure is logged as what could not be scheduled. */
  wakeSoon(at: number, reason: WakeReason, what: string): void {
    this.wakeAt(at, reason).catch((error) =>
      logEvent("error", `edgelink: could not ${what}`, { error }),
    );
  }

  /**
   * A part no longer needs its wake-up (the index sent every row before its backstop):
   * the alarm moves to the earliest wake-up still asked for, or is deleted when none is,
   * so a quiet conversation is not woken for nothing. Only an alarm this object set
   * itself is moved; one found set (by an earlier run of the object) may serve anything.
   * The memory is updated before the storage call, so a wake-up asked meanwhile is kept.
   */
  async settle(reason: WakeReason): Promise<void> {
    if (!this.wakes.delete(reason) || this.alarmAt === null || !this.owned) return;
    const next = Math.min(...this.wakes.values());
    if (next === Number.POSITIVE_INFINITY) {
      this.alarmAt = null;
      this.owned = false;
      await this.storage.deleteAlarm();
    } else if (next > this.alarmAt) {
      this.alarmAt = next;
      await this.storage.setAlarm(next);
    }
  }

  /** The alarm rang: none is set now, and no part's wake-up is pending. */
  rang(): void {
    this.alarmAt = null;
    this.owned = false;
    this.wakes.clear();
  }

  /**
   * The alarm's work (on an object that holds something): prunes, retries index updates
   * that could not be delivered, delivers push, and asks for retention's next batch.
   */
  async run(): Promise<void> {
    const { store, outbox } = this.parts;
    await this.expireHeld();
    this.prune();
    await outbox.flush();
    store.index.commitAcknowledgements();
    await this.deliverPush();
    if (this.pruneArmed) await this.wakeAt(Date.now() + PRUNE_AGAIN_MS, "prune");
    else await this.armRetention();
  }

  /**
   * Asks for retention's next due time (`Retention.due`): soon when more tasks are
   * finished than `retainFinishedTasks`, else when the oldest finished task passes
   * `retainFinishedMs`, not after every finished task. Tasks finishing close together
   * share one prune, `PRUNE_DELAY_MS` later.
   */
  async armRetention(): Promise<void> {
    const { retainFinishedTasks, retainFinishedMs } = this.parts.limits();
    const due = this.parts.store.retention.due(retainFinishedTasks, retainFinishedMs);
    if (due !== null) await this.wakeAt(Math.max(due, Date.now() + PRUNE_DELAY_MS), "prune");
  }

  /** One batch of retention (`limits.retainFinishedTasks`, `limits.retainFinishedMs`). */
  private prune(): void {
    const { retainFinishedTasks, retainFinishedMs } = this.parts.limits();
    const cutoff = new Date(Date.now() - retainFinishedMs).toISOString();
    this.pruneArmed =
      this.parts.store.prune(retainFinishedTasks, cutoff, PRUNE_BATCH) === PRUNE_BATCH;
  }

  /** Expires held calls past their deadline and asks for the next one. */
  private async expireHeld(): Promise<void> {
    try {
      const next = this.parts.expireHeld();
      if (next !== null) await this.wakeAt(next, "approval");
    } catch (error) {
      logEvent("error", "edgelink: could not expire held calls; retrying", { error });
      await this.wakeAt(Date.now() + PUSH_RETRY_MS, "approval");
    }
  }

  private async deliverPush(): Promise<void> {
    const { dispatcher } = this.parts;
    if (!dispatcher) return;
    try {
      const next = await dispatcher.run();
      if (next !== null) await this.wakeAt(next, "push");
    } catch (error) {
      // Never left to the platform's alarm retries: log, and try again shortly.
      logEvent("error", "edgelink: push delivery failed; retrying", { error });
      await this.wakeAt(Date.now() + PUSH_RETRY_MS, "push");
    }
  }
}
