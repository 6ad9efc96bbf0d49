import * as z from "zod";
import { A2AError } from "./errors";
import { JsonObject } from "./json";

/**
 * Limits on what a client may send, checked at the edge so a hostile request is refused
 * with a 4xx naming the field rather than exhausting the stack, the database or memory.
 */
export const LIMITS = {
  /** messageId, contextId, config ids: client-chosen names. */
  idLength: 256,
  /**
   * Task ids Edgelink issues fit in this: a context id of at most `idLength` UTF-16 units
   * (at most 3 UTF-8 bytes each) sealed with a 12-byte nonce and a 16-byte tag, base64url.
   * Typical ones are far shorter (83 characters for a context id Edgelink issued), then
   * the task's row key: a `.` and up to 15 digits (see storage/task-keys.ts).
   */
  taskIdLength: Math.ceil(((12 + 3 * 256 + 16) * 4) / 3) + 16,
  /** Parts in one message. */
  parts: 256,
  /** One metadata object, serialized, in bytes. */
  metadataBytes: 64 * 1024,
  /** Nesting of a whole request body (objects and arrays), checked before any parsing. */
  depth: 64,
  /** Entries of a list of names a client sends (extensions, referenceTaskIds, modes). */
  names: 64,
  /** One such name (an extension URI, a media type, a task id). */
  nameLength: 2048,
} as const;

const encoder = new TextEncoder();

/** A control character (Cc), or a surrogate without its pair (Cs, in `u` mode). */
const UNPRINTABLE = /[\p{Cc}\p{Cs}]/u;

/**
 * Client-chosen id: non-empty is left to the schema using it. Ids name objects and
 * appear in logs and URLs, so no control characters (a newline forges a log line) and no
 * lone surrogates (not UTF-8 encodable: stored, it would come back changed).
 */
export const ClientId = idString(LIMITS.idLength);

/** An id of at most `max` characters, none of them unprintable. */
function idString(max: number) {
  return z
    .string()
    .max(max, `must be at most ${max} characters`)
    .refine((s) => !UNPRINTABLE.test(s), "must not contain control characters or lone surrogates");
}

/** A client-sent list of names (extension URIs, media types, task ids), bounded. */
export const NameList = z
  .array(z.string().max(LIMITS.nameLength, `must be at most ${LIMITS.nameLength} characters`))
  .max(LIMITS.names, `at most ${LIMITS.names} entries`);

/**
 * Whether `value` passes `ClientId` (at most `LIMITS.idLength` characters, nothing
 * unprintable), answered without zod for the hot path; `ClientId` stays the rule.
 */
export function isClientId(value: string): boolean {
  return value.length <= LIMITS.idLength && !UNPRINTABLE.test(value);
}

/** A client-chosen id that is not one, as the message naming why (null when it is fine). */
export function clientIdProblem(value: string): string | null {
  const result = ClientId.safeParse(value);
  return result.success ? null : (result.error.issues[0]?.message ?? "invalid");
}

/**
 * A task id a client sends. Ids Edgelink issues fit in `LIMITS.taskIdLength` and are
 * printable; one that is not is refused naming its field, rather than echoed in a "not
 * found" error and its log line as the client wrote it (as `ClientId` is).
 */
export const TaskIdString = idString(LIMITS.taskIdLength);

/** Whether `value` passes `TaskIdString`, answered without zod for the hot path. */
export function isTaskIdString(value: string): boolean {
  return value.length <= LIMITS.taskIdLength && !UNPRINTABLE.test(value);
}

/** A metadata object no bigger than `LIMITS.metadataBytes` once serialized. */
export const Metadata = JsonObject.refine(
  (v) => encoder.encode(JSON.stringify(v)).byteLength <= LIMITS.metadataBytes,
  `metadata must be at most ${LIMITS.metadataBytes} bytes`,
);

/**
 * `__proto__` is an own key once JSON-parsed, but copying it (`out[key] = value`, as
 * every object rebuild does) sets the copy's prototype instead: the key vanishes from
 * stored metadata and its fields show through as inherited ones. Refused at the edge.
 */
function refuseProtoKey(prefix: string, path: string): never {
  const field = [prefix, path, "__proto__"].filter(Boolean).join(".");
  throw new A2AError("InvalidRequest", `JSON key "__proto__" is not accepted (at ${field})`, {}, [
    { field, description: '"__proto__" is not accepted as a key' },
  ]);
}

/**
 * Refuses JSON nested deeper than `LIMITS.depth`, walking it without recursion: zod's
 * recursive schemas (and anything else recursive) overflow the stack on deep input.
 * The same walk refuses `__proto__` keys (see `refuseProtoKey`).
 */
export function checkDepth(value: unknown, prefix = "params"): void {
  if (value === null || typeof value !== "object") return;
  const stack: Nested[] = [{ value, depth: 0, parent: null, key: "" }];
  while (stack.length) {
    const top = stack.pop() as Nested;
    if (top.depth >= LIMITS.depth) {
      const field = [prefix, pathOf(top)].filter(Boolean).join(".") || "(root)";
      throw new A2AError("InvalidRequest", `JSON nested deeper than ${LIMITS.depth} levels`, {}, [
        { field, description: `nesting deeper than ${LIMITS.depth} levels` },
      ]);
    }
    // JSON.parse makes plain objects and arrays: their enumerable keys are their own.
    const node = top.value as Record<string, unknown>;
    for (const key in node) {
      if (key === "__proto__") refuseProtoKey(prefix, pathOf(top));
      const child = node[key];
      if (child !== null && typeof child === "object") {
        stack.push({ value: child, depth: top.depth + 1, parent: top, key });
      }
    }
  }
}

/** An object or array met by `checkDepth`, its path kept as links (spelled out on error). */
interface Nested {
  value: object;
  depth: number;
  parent: Nested | null;
  key: string;
}

/** A nested value's path: the keys of its first 8 levels, dotted (errors name no more). */
function pathOf(node: Nested): string {
  const keys: string[] = [];
  for (let n: Nested | null = node; n?.parent; n = n.parent) keys.push(n.key);
  return keys.reverse().slice(0, 8).join(".");
}
