import type { ChildRecord } from "../agent/delegation";
import type { JsonObject } from "../models/json";
import { isTerminal, type TaskState } from "../models/task-state";
import type { TaskStore } from "./task-store";

/** How many of a task's delegations its metadata shows (`delegations`), the latest. */
export const MAX_DELEGATIONS_SHOWN = 32;

/**
 * Keeps a delegation's timing in its parent task's metadata (`delegations`), for the
 * inspector's waterfall: where it went, the child's task id once known, when it started
 * and, once the child ended, how long it took. Written only when a delegation starts,
 * learns its child's id, or ends: a task that never delegates writes nothing.
 */
export function noteDelegation(
  store: TaskStore,
  parentTaskId: string,
  record: Pick<ChildRecord, "key"> & Partial<ChildRecord>,
  now = Date.now(),
): void {
  const task = store.read(parentTaskId, { historyLength: 0 });
  if (!task) return;
  const shown = task.metadata?.delegations;
  const list = (Array.isArray(shown) ? shown : []) as JsonObject[];
  const index = list.findIndex((entry) => entry.key === record.key);
  const entry: JsonObject = index >= 0 ? { ...list[index] } : { key: record.key, at: now };
  if (record.target !== undefined) entry.target = record.target;
  if (record.childTaskId) entry.childTaskId = record.childTaskId;
  if (record.state !== undefined) entry.state = record.state;
  if (record.state && isTerminal(record.state as TaskState) && typeof entry.at === "number") {
    entry.ms = now - entry.at;
  }
  const next = index >= 0 ? list.with(index, entry) : [...list, entry];
  store.mergeMetadata(parentTaskId, { delegations: next.slice(-MAX_DELEGATIONS_SHOWN) });
}
