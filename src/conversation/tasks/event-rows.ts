/**
 * How an event is kept in a row of the log. A status or artifact update of the row's own
 * task is stored without its task id and context id: the row holds the task id, the task's
 * row its context id, and the two sealed ids were about a third of a streamed chunk's row.
 * Reading puts them back in their place, so the event reads as it was logged. A row kept
 * whole (written before, another kind of event, or one naming another task) reads as it is.
 */
import type { TaskEvent } from "../../protocol/events";

type UpdateEvent = Extract<TaskEvent, { kind: "status-update" | "artifact-update" }>;
/** An update as its row keeps it, the task's ids left out. */
type WithoutIds = { kind: UpdateEvent["kind"] } & Record<string, unknown>;

/**
 * The JSON stored for an event the task `taskId` (in the context `contextId`, when known)
 * logged: without the two ids when they are the task's and lead the event, as its writers
 * make it (kind, taskId, contextId, then the rest), so the read gives back the same order.
 */
export function eventBody(taskId: string, contextId: string | undefined, event: TaskEvent): string {
  if (
    (event.kind === "status-update" || event.kind === "artifact-update") &&
    event.taskId === taskId &&
    event.contextId === contextId &&
    leadsWithIds(event)
  ) {
    const { taskId: _task, contextId: _context, ...rest } = event;
    return JSON.stringify(rest);
  }
  return JSON.stringify(event);
}

/**
 * The event a row holds: its JSON with the task's ids put back when they were left out.
 * Null when they were and the task's row is gone (`contextId` null): the event can no
 * longer be told whole (a task's events are deleted with it, so none is expected).
 */
export function eventOfRow(
  body: string,
  taskId: string,
  contextId: string | null,
): TaskEvent | null {
  const stored = JSON.parse(body) as TaskEvent | WithoutIds;
  if ("taskId" in stored || stored.kind === "task" || stored.kind === "message") {
    return stored as TaskEvent;
  }
  if (contextId === null) return null;
  const { kind, ...rest } = stored;
  return { kind, taskId, contextId, ...rest } as UpdateEvent;
}

/** Whether the event's first keys are kind, taskId and contextId, in that order. */
function leadsWithIds(event: UpdateEvent): boolean {
  let i = 0;
  for (const key in event) {
    if (key !== LEADING_KEYS[i]) return false;
    if (++i === LEADING_KEYS.length) return true;
  }
  return false;
}

const LEADING_KEYS = ["kind", "taskId", "contextId"] as const;
