import type { JsonObject, JsonValue } from "../protocol/json";

const isObject = (v: JsonValue | undefined): v is JsonObject =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * JSON merge patch (RFC 7396), as SQLite's `json_patch` applies it: objects merge key by
 * key, null removes a key, anything else replaces. Returns a new object.
 */
export function mergePatch(target: JsonObject, patch: JsonObject): JsonObject {
  const out: JsonObject = { ...target };
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else if (isObject(value)) out[key] = mergePatch(isObject(out[key]) ? out[key] : {}, value);
    else out[key] = value;
  }
  return out;
}
