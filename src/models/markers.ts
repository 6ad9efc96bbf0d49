import type { JsonObject, JsonValue } from "./json";

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
