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
/** The minute `isoHead` formats (its ISO text up to the seconds), and that text. */
let headMinute = Number.NaN;
let isoHead = "";

/** Current time as ISO-8601 UTC with milliseconds (A2A §5.6.1). */
export function nowIso(): string {
  // Formatted once per millisecond: on Workers the clock stands still while code runs, so
  // every timestamp of one message's writes is the same string. The Worker and the object
  // run apart, so a message still sees a few milliseconds: V8's toISOString (several
  // printf calls) runs once a minute, and each millisecond adds only its seconds.
  const ms = Date.now();
  if (ms !== isoMs) {
    const minute = Math.floor(ms / 60_000);
    if (minute !== headMinute) {
      isoHead = new Date(ms).toISOString().slice(0, 17);
      // Years past 9999 (or before 0) have a longer form: formatted whole every time.
      headMinute = /^\d{4}-/.test(isoHead) ? minute : Number.NaN;
    }
    const inMinute = ms - minute * 60_000;
    // Joined, not concatenated: a concatenated string sends every JSON.stringify of a
    // value holding it off V8's fast path (timestamps are in most of what is stored).
    iso =
      headMinute === minute
        ? [isoHead, pad(Math.floor(inMinute / 1000), 2), ".", pad(inMinute % 1000, 3), "Z"].join("")
        : new Date(ms).toISOString();
    isoMs = ms;
  }
  return iso;
}

const pad = (n: number, width: number) => String(n).padStart(width, "0");

/**
 * `text` as one flat run of characters. A string made by concatenation (`${a}${b}`, 13
 * characters or more) is a tree of its pieces inside V8, and JSON.stringify takes its slow
 * path for any value holding one (about twice the instructions); a handler's answer is
 * stringified for its rows and for the reply, so it is copied flat once. Joining two
 * pieces allocates a sequential string (joining one would return it as it is).
 */
export function flatText(text: string): string {
  return text.length < 13 ? text : [text.slice(0, 1), text.slice(1)].join("");
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
