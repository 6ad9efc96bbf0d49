/**
 * How an event is kept in a row of the log. A status or artifact update of the row's own
 * task is stored without its task id and context id: the row holds the task id, the task's
 * row its context id, and the two sealed ids were about a third of a streamed chunk's row.
 * Reading puts them back in their place, so the event reads as it was logged. A row kept
 * whole (written before, another kind of event, or one naming another task) reads as it is.
 *
 * An appended chunk of an artifact is kept smaller still: its artifact's header (id, name,
 * timestamp, the null descriptors: most of a chunk's row) is the same as in the task's
 * earlier row of that artifact, so the row keeps only that row's seq and the keys that
 * differ (see `chunkBody`). The earlier row is the task's own, deleted only with it.
 */
import type { TaskEvent } from "../../protocol/events";
import { MAX_ROW_BYTES } from "../../storage/row-limit";

type UpdateEvent = Extract<TaskEvent, { kind: "status-update" | "artifact-update" }>;
/** An update as its row keeps it, the task's ids left out. */
type WithoutIds = { kind: UpdateEvent["kind"] } & Record<string, unknown>;

/**
 * The JSON stored for an event the task `taskId` (in the context `contextId`, when known)
 * logged: without the two ids when they are the task's and lead the event, as its writers
 * make it (kind, taskId, contextId, then the rest), so the read gives back the same order.
 */
export function eventBody(taskId: string, contextId: string | undefined, event: TaskEvent): string {
  if (leavesOutIds(taskId, contextId, event)) {
    const { taskId: _task, contextId: _context, ...rest } = event as UpdateEvent;
    return JSON.stringify(rest);
  }
  return JSON.stringify(event);
}

/** Whether `eventBody` stores the event without its task's ids. */
function leavesOutIds(taskId: string, contextId: string | undefined, event: TaskEvent): boolean {
  return (
    (event.kind === "status-update" || event.kind === "artifact-update") &&
    event.taskId === taskId &&
    event.contextId === contextId &&
    leadsWithIds(event)
  );
}

/** An earlier row of the task holding an artifact whole: its seq and that artifact. */
export interface ArtifactRow {
  seq: number;
  artifact: Readonly<Record<string, unknown>>;
}

/** The latest row holding each artifact whole, by task and artifact id (see `chunkBody`). */
export class ArtifactRows {
  private readonly rows = new Map<string, ArtifactRow & { chars: number }>();

  /** The body of row `seq`: a chunk's when it can be, else `whole()` (its `eventBody`). */
  body(
    seq: number,
    taskId: string,
    contextId: string,
    event: TaskEvent,
    whole: () => string,
  ): string {
    if (event.kind !== "artifact-update") return whole();
    const key = `${taskId}\n${event.artifact.artifactId}`;
    const own = leavesOutIds(taskId, contextId, event);
    const base = this.rows.get(key);
    if (base && own) {
      const body = chunkBody(event, base);
      // Read back, the event is at most its row and the base's: it fits a row as the base did.
      if (body !== null && (body.length + base.chars) * 3 <= MAX_ROW_BYTES) return body;
    }
    const body = whole();
    if (own) {
      if (this.rows.size >= MAX_ARTIFACT_ROWS) this.rows.clear();
      // As the row reads back, whatever becomes of the event's objects after.
      const { artifact } = JSON.parse(body) as { artifact: Record<string, unknown> };
      this.rows.set(key, { seq, artifact, chars: body.length });
    } else {
      this.rows.delete(key);
    }
    return body;
  }

  /** Rows remembered may not be written (a failed transaction, an unread task's rows). */
  clear(): void {
    this.rows.clear();
  }
}

/** Artifacts remembered at a time (see `ArtifactRows`). */
const MAX_ARTIFACT_ROWS = 16;

/** The key of a chunk's row naming its base row. */
const FROM = "from";

/**
 * The row of an appended chunk whose ids `eventBody` leaves out, kept as the keys of its
 * artifact that differ from `base`'s (always its parts) and base's seq; null when it cannot
 * be read back exactly that way (other keys, another order, an undefined value: stored as
 * `eventBody` stores it). `append`, always true there, is left out, and `lastChunk` unless true.
 */
export function chunkBody(event: TaskEvent, base: ArtifactRow): string | null {
  if (event.kind !== "artifact-update" || !event.append || !hasKeys(event, CHUNK_KEYS)) {
    return null;
  }
  const artifact = event.artifact as Record<string, unknown>;
  const keys = Object.keys(base.artifact);
  const differs: Record<string, unknown> = {};
  let i = 0;
  for (const key in artifact) {
    if (key !== keys[i++]) return null;
    const value = artifact[key];
    const before = base.artifact[key];
    // JSON leaves an undefined value out: the key would then be missing from one side.
    if (value === undefined || before === undefined) return null;
    if (key === "parts" || !sameJson(value, before)) differs[key] = value;
  }
  if (i !== keys.length) return null;
  // `append` is true in every such row, and `lastChunk` false but in the last one.
  const row = { kind: event.kind, [FROM]: base.seq, artifact: differs };
  return JSON.stringify(event.lastChunk ? { ...row, lastChunk: true } : row);
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
  /** The body of the task's row of a seq: a chunk's row reads its artifact's header there. */
  rowAt?: (seq: number) => string | null,
): TaskEvent | null {
  const stored = JSON.parse(body) as TaskEvent | WithoutIds;
  if ("taskId" in stored || stored.kind === "task" || stored.kind === "message") {
    return stored as TaskEvent;
  }
  if (contextId === null) return null;
  if (FROM in stored) return chunkOfRow(stored, taskId, contextId, rowAt);
  const { kind, ...rest } = stored;
  return { kind, taskId, contextId, ...rest } as UpdateEvent;
}

/**
 * A chunk's event put back together: its base row's artifact, each key in its place, with
 * the chunk's own values where it kept them. Null when the base row cannot be read.
 */
function chunkOfRow(
  stored: WithoutIds,
  taskId: string,
  contextId: string,
  rowAt: ((seq: number) => string | null) | undefined,
): TaskEvent | null {
  const baseBody = rowAt?.(stored[FROM] as number);
  if (!baseBody) return null;
  // Parsed again for each chunk, so no two events read share an object.
  const base = eventOfRow(baseBody, taskId, contextId);
  if (base?.kind !== "artifact-update") return null;
  const own = stored.artifact as Record<string, unknown>;
  const artifact: Record<string, unknown> = {};
  for (const key in base.artifact) {
    artifact[key] = key in own ? own[key] : (base.artifact as Record<string, unknown>)[key];
  }
  return {
    kind: "artifact-update",
    taskId,
    contextId,
    artifact: artifact as Extract<TaskEvent, { kind: "artifact-update" }>["artifact"],
    append: true,
    lastChunk: stored.lastChunk === true,
  };
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

/** The keys of an appended chunk's event as the task store makes it, in order. */
const CHUNK_KEYS = ["kind", "taskId", "contextId", "artifact", "append", "lastChunk"] as const;

/** Whether the object's keys are exactly `keys`, in that order. */
function hasKeys(object: object, keys: readonly string[]): boolean {
  let i = 0;
  for (const key in object) if (key !== keys[i++]) return false;
  return i === keys.length;
}

/** Whether two values are written as the same JSON (most header values are strings or null). */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  return JSON.stringify(a) === JSON.stringify(b);
}
