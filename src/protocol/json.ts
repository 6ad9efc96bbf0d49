import * as z from "zod";

/** Any JSON value. */
export type JsonValue =
  | string
  | number
  | boolean
  | null
  | JsonValue[]
  | { [key: string]: JsonValue };
/** A JSON object (A2A `google.protobuf.Struct`). */
export type JsonObject = { [key: string]: JsonValue };

export const JsonValue: z.ZodType<JsonValue> = z.lazy(() =>
  z.union([
    z.string(),
    z.number(),
    z.boolean(),
    z.null(),
    z.array(JsonValue),
    z.record(z.string(), JsonValue),
  ]),
);
export const JsonObject: z.ZodType<JsonObject> = z.record(z.string(), JsonValue);

let isoMs = Number.NaN;
let iso = "";

/** Current time as ISO-8601 UTC with milliseconds (A2A §5.6.1). */
export function nowIso(): string {
  // Formatted once per millisecond: on Workers the clock stands still while code runs, so
  // every timestamp of one message's writes is the same string.
  const ms = Date.now();
  if (ms !== isoMs) {
    iso = new Date(ms).toISOString();
    isoMs = ms;
  }
  return iso;
}

/** A random identifier; `prefix` only helps humans tell ids apart in logs. */
export function newId(prefix = ""): string {
  return prefix + crypto.randomUUID();
}

/**
 * Drops keys whose value is `undefined`, so optional fields are omitted, not null. Use
 * the object it returns: one with such keys is copied without them (deleting keys turned
 * every rendered object into a slow dictionary object, for `JSON.stringify` too).
 */
export function compact<T extends Record<string, unknown>>(
  obj: T,
): { [K in keyof T]: Exclude<T[K], undefined> } {
  let kept: Record<string, unknown> | null = null;
  for (const key in obj) {
    if (!Object.hasOwn(obj, key)) continue;
    const value = obj[key];
    if (value === undefined) kept ??= copyUntil(obj, key);
    else if (kept) kept[key] = value;
  }
  return (kept ?? obj) as { [K in keyof T]: Exclude<T[K], undefined> };
}

/** The own keys of `obj` before `stop`, in order. */
function copyUntil(obj: Record<string, unknown>, stop: string): Record<string, unknown> {
  const copy: Record<string, unknown> = {};
  for (const key in obj) {
    if (key === stop) break;
    if (Object.hasOwn(obj, key)) copy[key] = obj[key];
  }
  return copy;
}
