/**
 * A task's status, written by the task store: moving a task through the lifecycle,
 * progress messages, and the status row and the event each change writes. Each function
 * runs in the store's transaction, as its methods do.
 */
import type { TaskEvent } from "../../protocol/events";
import { type JsonObject, nowIso } from "../../protocol/json";
import type { Message } from "../../protocol/message";
import type { Task, TaskStatus } from "../../protocol/task";
import {
  isInterrupted,
  isTerminal,
  planTransition,
  type TaskState,
} from "../../protocol/task-state";
import { mergePatch } from "../../storage/merge-patch";
import { checkRowBytes } from "../../storage/row-limit";
import type { TaskStore } from "./task-store";

/** An event as the store logged it: its sequence number (the SSE id) and the event. */
export interface LoggedEvent {
  seq: number;
  event: TaskEvent;
}

/** A status change as the row holds it (JSON columns already serialized; null: unchanged). */
export interface StatusRow {
  state: TaskState;
  timestamp: string;
  stateHistory: string;
  rowSeq: number;
  /** The status message; null clears it. */
  message: string | null;
  /** The new metadata, or null when it did not change. */
  metadata: string | null;
  /** The final event's position, once the task ends. */
  eventCeiling: number | null;
}

/** What a transition carries besides the new state. */
export interface TransitionOptions {
  viaWorking?: boolean;
  message?: Message | null;
  metadata?: JsonObject;
}

/**
 * Moves a task through the lifecycle, recording each step in its state history and
 * the event log. Throws InvalidTransitionError before writing anything if illegal.
 * Returns the logged events.
 */
export function transitionTask(
  store: TaskStore,
  taskId: string,
  to: TaskState,
  options: TransitionOptions,
): LoggedEvent[] {
  const task = store.cache.use(taskId);
  const steps = planTransition(task.status.state, to, { viaWorking: options.viaWorking });
  if (steps.length === 0) return [];
  return store.atomic(() => {
    const logged: LoggedEvent[] = [];
    const statuses: TaskStatus[] = [];
    let previous = task.status.state;
    steps.forEach((next, i) => {
      const timestamp = nowIso();
      const message = i === steps.length - 1 ? (options.message ?? null) : null;
      task.stateHistory.push({ previousState: previous, newState: next, timestamp });
      statuses.push({ state: next, message, timestamp });
      previous = next;
    });
    const last = statuses.at(-1) as TaskStatus;
    if (options.metadata) task.metadata = mergePatch(task.metadata, options.metadata);
    // An ending task's reads of the log stop at its final event, logged below.
    const ceiling = isTerminal(last.state) ? store.events.floor() + statuses.length - 1 : null;
    setStatus(store, task, last, options.metadata !== undefined, ceiling);
    if (last.message) store.appendMessage(taskId, last.message, undefined, ceiling !== null);
    for (const status of statuses) logged.push(statusEvent(store, task, status));
    return logged;
  });
}

/** A progress message: the state stays, the status message changes, history grows. */
export function setStatusMessage(store: TaskStore, taskId: string, message: Message): LoggedEvent {
  const task = store.cache.use(taskId);
  const status: TaskStatus = {
    state: task.status.state,
    message,
    timestamp: nowIso(),
  };
  return store.atomic(() => {
    setStatus(store, task, status);
    store.appendMessage(taskId, message);
    return statusEvent(store, task);
  });
}

/**
 * A transient progress message: logged and streamed as a status update, but neither the
 * task's status nor its history changes (tool work and reasoning for watching clients).
 */
export function announceStatus(store: TaskStore, taskId: string, message: Message): LoggedEvent {
  const task = store.cache.use(taskId);
  const status: TaskStatus = {
    state: task.status.state,
    message,
    timestamp: nowIso(),
  };
  return store.atomic(() => statusEvent(store, task, status));
}

/**
 * Writes a task's new status. Only what changed is bound (each bound value costs the
 * statement a fixed amount of work): metadata only when `metadataChanged`, no status
 * message when there is none, the event ceiling only as the task ends.
 */
function setStatus(
  store: TaskStore,
  task: Task,
  status: TaskStatus,
  metadataChanged = false,
  eventCeiling: number | null = null,
): void {
  const message = status.message ? JSON.stringify(status.message) : null;
  const metadata = metadataJson(task.metadata);
  const stateHistory = JSON.stringify(task.stateHistory);
  // The whole row must fit, unchanged columns included.
  checkRowBytes("task status", message, metadata, stateHistory);
  // `updated_at` is the status timestamp: when it changes the task moves in the listing.
  const rowSeq = store.listing.rowSeqFor(task, status.timestamp);
  store.writeStatusRow(task.id, {
    state: status.state,
    timestamp: status.timestamp,
    stateHistory,
    rowSeq,
    message,
    metadata: metadataChanged ? metadata : null,
    eventCeiling,
  });
  store.listing.setRowSeq(task, rowSeq);
  if (isTerminal(status.state) && !isTerminal(task.status.state)) {
    store.retention.noteFinished(status.timestamp);
  }
  task.status = status;
  store.index.touch(task);
}

/** A task's metadata as JSON: nearly every task has none, which needs no serializer call. */
export function metadataJson(metadata: JsonObject): string {
  for (const _ in metadata) return JSON.stringify(metadata);
  return "{}";
}

/** Logs a task's status (its current one unless given) as a status-update event. */
export function statusEvent(store: TaskStore, task: Task, status = task.status): LoggedEvent {
  const final = isTerminal(status.state) || isInterrupted(status.state);
  return store.log(task.id, {
    kind: "status-update",
    taskId: task.id,
    contextId: task.contextId,
    status,
    final,
  });
}
