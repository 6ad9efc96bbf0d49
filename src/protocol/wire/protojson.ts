import type { JsonObject, JsonValue } from "../json";

/**
 * ProtoJSON parsers accept a field's proto name (`task_id`) as well as its JSON name
 * (`taskId`), and so does the official SDK; a request written either way must mean the
 * same. This is the one mapping: proto names become JSON names everywhere in a request,
 * except inside values that are the user's own JSON (`metadata`, a data part's `data`),
 * whose keys are kept as written. When both spellings are present the JSON name wins.
 * @example
 * protoJsonNames({ task_id: "t", history_length: 2 }); // { taskId: "t", historyLength: 2 }
 */
export function protoJsonNames<T extends JsonValue | undefined>(value: T): T {
  // Most requests spell every field by its JSON name: then there is nothing to copy.
  return hasProtoNames(value) ? renamed(value) : value;
}

/** Whether a key outside the user's own JSON has a proto name (an underscore). */
function hasProtoNames(value: JsonValue | undefined): boolean {
  if (value === null || typeof value !== "object") return false;
  if (Array.isArray(value)) return value.some(hasProtoNames);
  for (const key in value) {
    if (key.includes("_")) return true;
    if (!USER_JSON.has(key) && hasProtoNames(value[key])) return true;
  }
  return false;
}

function renamed<T extends JsonValue | undefined>(value: T): T {
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map((v) => renamed(v)) as T;
  const out: JsonObject = {};
  const entries = Object.entries(value);
  for (const [key, child] of entries) {
    if (!key.includes("_")) {
      out[key] = USER_JSON.has(key) ? child : renamed(child);
    }
  }
  for (const [key, child] of entries) {
    if (!key.includes("_")) continue;
    const name = protoJsonName(key);
    if (Object.hasOwn(out, name)) continue;
    out[name] = USER_JSON.has(name) ? child : renamed(child);
  }
  return out as T;
}

/** Fields whose value is free-form JSON (`google.protobuf.Struct`/`Value`). */
const USER_JSON: ReadonlySet<string> = new Set(["metadata", "data"]);

/** One proto field name as its JSON name: `history_length` → `historyLength`. */
export function protoJsonName(key: string): string {
  return key.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}
