import type { Artifact } from "./artifact";
import { compact, type JsonObject, type JsonValue, nowIso } from "./json";
import type { Task } from "./task";

/**
 * Metadata keys that carry Edgelink fields A2A has no slot for, so every model survives
 * a trip through any A2A peer. They are stripped again when a wire object is read.
 */
export const MARK = {
  part: "edgelink/part",
  mediaType: "edgelink/mediaType",
  role: "edgelink/role",
  timestamp: "edgelink/timestamp",
  artifact: "edgelink/artifact",
  stateHistory: "edgelink/stateHistory",
  createdAt: "edgelink/createdAt",
} as const;

/** Wire metadata = user metadata plus markers; undefined when both are empty. */
export function withMarks(
  metadata: JsonObject | undefined,
  marks: Record<string, JsonValue | undefined>,
): JsonObject | undefined {
  const out: JsonObject = { ...metadata };
  for (const [k, v] of Object.entries(marks)) if (v !== undefined) out[k] = v;
  return Object.keys(out).length ? out : undefined;
}

/** Splits wire metadata into user metadata (undefined when empty) and our markers. */
export function splitMarks(metadata: JsonObject | undefined): {
  metadata: JsonObject | undefined;
  marks: JsonObject;
} {
  if (!metadata) return { metadata: undefined, marks: {} };
  const user: JsonObject = {};
  const marks: JsonObject = {};
  for (const [k, v] of Object.entries(metadata)) {
    if (k.startsWith("edgelink/")) marks[k] = v;
    else user[k] = v;
  }
  return { metadata: Object.keys(user).length ? user : undefined, marks };
}

/** The artifact fields A2A has no slot for, as one marker value. */
export function artifactMark(a: Artifact): JsonObject {
  return compact({
    kind: a.kind,
    timestamp: a.timestamp,
    uri: a.uri ?? undefined,
    mediaType: a.mediaType ?? undefined,
    actionId: a.actionId ?? undefined,
  });
}

/** The artifact fields read back from a marker, with their defaults when absent. */
export function artifactFieldsOf(
  marks: JsonObject,
): Pick<Artifact, "kind" | "timestamp" | "uri" | "mediaType" | "actionId"> {
  const d = (marks[MARK.artifact] ?? {}) as Record<string, JsonValue>;
  const text = (v: JsonValue | undefined) => (typeof v === "string" ? v : null);
  return {
    kind: text(d.kind) ?? "result",
    timestamp: timestampOr(d.timestamp, nowIso),
    uri: text(d.uri),
    mediaType: text(d.mediaType),
    actionId: text(d.actionId),
  };
}

/** The task fields A2A has no slot for. */
export function taskMarks(t: Task): Record<string, JsonValue> {
  return {
    [MARK.stateHistory]: t.stateHistory as unknown as JsonValue,
    [MARK.createdAt]: t.createdAt,
  };
}

/** History as `historyLength` asks (§3.2.4): all, none (field omitted), or the newest n. */
export function trimHistory<T>(history: T[], historyLength: number | undefined): T[] | undefined {
  if (historyLength === undefined) return history;
  return historyLength === 0 ? undefined : history.slice(-historyLength);
}

/**
 * Edgelink part types a client may send (the default execution runs them). Every
 * other part type is something Edgelink writes itself (tool outputs, errors, thinking).
 */
const CLIENT_PART_TYPES: ReadonlySet<JsonValue> = new Set(["tool_call", "infer"]);
/** Markers that only say how a value is spelled on a wire lacking a slot for it (v0.3). */
const FORMAT_MARKS: ReadonlySet<string> = new Set([MARK.mediaType, "edgelink/wrapped"]);

function dropMarks(
  metadata: JsonObject | undefined,
  keep: (key: string, value: JsonValue) => boolean,
): JsonObject | undefined {
  if (!metadata) return metadata;
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(metadata)) {
    if (!k.startsWith("edgelink/") || keep(k, v)) out[k] = v;
  }
  return out;
}

/**
 * A message as a client sent it, with the markers only Edgelink may write removed: a
 * client cannot claim a `system` role, a timestamp, or an agent-written part type. Kept:
 * the part marker of the client-sendable types and the v0.3 spelling markers.
 */
export function stripClientMarks<
  M extends { metadata?: JsonObject; parts: { metadata?: JsonObject }[] },
>(message: M): M {
  return {
    ...message,
    metadata: dropMarks(message.metadata, () => false),
    parts: message.parts.map((p) => ({
      ...p,
      metadata: dropMarks(
        p.metadata,
        (k, v) => FORMAT_MARKS.has(k) || (k === MARK.part && CLIENT_PART_TYPES.has(v)),
      ),
    })),
  };
}

const ISO_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/** A marker timestamp if it is a real ISO-8601 date-time, else the fallback. */
export function timestampOr(value: JsonValue | undefined, fallback: () => string): string {
  if (typeof value !== "string" || !ISO_TIMESTAMP.test(value)) return fallback();
  return Number.isNaN(Date.parse(value)) ? fallback() : value;
}
