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
    timestamp: text(d.timestamp) ?? nowIso(),
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
