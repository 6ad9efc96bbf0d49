/**
 * Edgelink's log: one JSON line per notable event, which `wrangler tail` shows as is and
 * Workers Logs indexes field by field. Web APIs only, so every layer may log.
 *
 * What a line never holds: credentials (anything shaped like a bearer token, an API key
 * or a key in a URL is masked in the whole line) and, unless the operator sets
 * `EDGELINK_LOG_CONTENT="true"`, content: the text of a provider's error (which may echo
 * the request), of a webhook receiver's answer, or any message of a conversation.
 */

import { activeContext, getSpanContext, isSpanContextValid } from "./otel";

/** How bad an event is; `error` and `warn` go to `console.error`/`console.warn`. */
export type LogLevel = "debug" | "info" | "warn" | "error";

/** What a line may say about where it happened, besides its message. */
export interface LogFields {
  tenant?: string | null;
  taskId?: string;
  contextId?: string;
  /** The reference id the client was given (`Internal error (reference ref_…)`). */
  reference?: string;
  /** The failure; described by {@link describeError}, never written whole. */
  error?: unknown;
  /** Other plain values (numbers, names, states). */
  [key: string]: unknown;
}

/** The active span's ids, as the tracing side sees them. */
export interface LogTraceIds {
  traceId: string;
  spanId: string;
}

/** The variable that lets lines carry content (provider and receiver error text). */
export const LOG_CONTENT_VAR = "EDGELINK_LOG_CONTENT";

let traceIds: (() => LogTraceIds | undefined) | null = null;

/** The ids of the span active in a registered context manager (none without tracing). */
function activeTraceIds(): LogTraceIds | undefined {
  const span = getSpanContext(activeContext());
  return span && isSpanContextValid(span)
    ? { traceId: span.traceId, spanId: span.spanId }
    : undefined;
}
let content = false;

/**
 * Replaces where a line's trace ids come from: a function returning the active span's ids
 * (or undefined when none is active), read once per line. `null` restores the default:
 * the span active in a registered OpenTelemetry context manager, if any.
 */
export function setLogTraceIds(fn: (() => LogTraceIds | undefined) | null): void {
  traceIds = fn;
}

/** Whether lines may carry content; set from `EDGELINK_LOG_CONTENT` when the Worker loads. */
export function setLogContent(on: boolean): void {
  content = on;
}

/** Reads `EDGELINK_LOG_CONTENT` ("true" or "1" turns it on) from a Worker's env. */
export function logContentFrom(env: unknown): boolean {
  const value = (env as Record<string, unknown> | undefined)?.[LOG_CONTENT_VAR];
  return value === "true" || value === "1";
}

// Credentials however they appear: header values, well-known key shapes, keys in URLs.
// A key shape starts where no base64url character precedes it: inside a random id (task
// ids are base64url, `-` included) "-sk-…" is not a key.
const SECRETS: [RegExp, string][] = [
  [/\b(Bearer|Basic)\s+[\w.~+/=-]+/gi, "$1 [redacted]"],
  [/(?<![\w-])(sk|pk|rk|sk-ant|gsk|xai|hf)[-_][\w-]{8,}/g, "[redacted]"],
  [/(?<![\w-])AIza[\w-]{20,}/g, "[redacted]"],
  [/(?<![\w-])eyJ[\w-]+\.[\w-]+\.[\w-]+/g, "[redacted]"],
  [
    /(\b(?:api[-_]?key|x-api-key|authorization|access[-_]?token|token|credentials|password)\\?"?\s*[:=]\s*\\?"?)(?!Bearer\b|Basic\b|\[redacted)[^\s"\\&,}]+/gi,
    "$1[redacted]",
  ],
  [/([?&](?:key|api[-_]?key|token|access_token|sig|signature)=)[^&\s"\\]+/gi, "$1[redacted]"],
];

/** The line with every credential-shaped value masked. */
export function redact(line: string): string {
  let out = line;
  for (const [pattern, replacement] of SECRETS) out = out.replace(pattern, replacement);
  return out;
}

const MAX_FRAMES = 12;
const MAX_TEXT = 1000;

/**
 * A failure as a log field: its type and, for a provider's failure, the provider, kind,
 * status and code; its stack frames (code locations, no values). Its message only when
 * it is not content: a provider's or receiver's message (which quotes what they answered)
 * needs the opt-in; any other error's message is kept, masked and cut to 1,000 characters.
 */
export function describeError(error: unknown): Record<string, unknown> {
  if (!(error instanceof Error)) {
    return content ? { type: typeof error, message: clip(String(error)) } : { type: typeof error };
  }
  const e = error as Error & Record<string, unknown>;
  const out: Record<string, unknown> = { type: e.name };
  const fromOutside = typeof e.provider === "string" || e.contentful === true;
  if (!fromOutside || content) out.message = clip(e.message);
  for (const key of ["provider", "kind", "status", "code", "requestId", "retryable"]) {
    const value = e[key];
    if (typeof value === "string" || typeof value === "number" || typeof value === "boolean") {
      out[key] = value;
    }
  }
  if (Array.isArray(e.failures)) out.failures = e.failures.map(describeError);
  const frames = stackFrames(e);
  if (frames.length) out.stack = frames;
  if (e.cause !== undefined) out.cause = describeError(e.cause);
  return out;
}

/**
 * A failure's text for a span (its status and exception event), under the same rule as a
 * log line: a provider's or receiver's message (content) only with the opt-in, any other
 * message kept; masked and clipped either way. Without its message, its type and kind.
 */
export function errorText(error: unknown, kind: string): string {
  if (!(error instanceof Error)) return content ? redact(clip(String(error))) : kind;
  const e = error as Error & Record<string, unknown>;
  const fromOutside = typeof e.provider === "string" || e.contentful === true;
  if (!fromOutside || content) return redact(clip(e.message));
  return kind && kind !== e.name ? `${e.name} (${kind})` : e.name;
}

/** A stack's frames only (its first line repeats the message, which may be content). */
export function stackFrames(error: Error): string[] {
  return (error.stack ?? "")
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line.startsWith("at "))
    .slice(0, MAX_FRAMES);
}

const clip = (text: string) => (text.length > MAX_TEXT ? `${text.slice(0, MAX_TEXT)}…` : text);

/**
 * Writes one JSON line: `level`, `message` (starting `edgelink:` as before, so a search
 * for a reference id finds it), the active span's `traceId`/`spanId`, then the fields.
 * @example
 * logEvent("error", `edgelink: handler error ${reference}`, { taskId, contextId, reference, error });
 */
export function logEvent(level: LogLevel, message: string, fields: LogFields = {}): void {
  const line: Record<string, unknown> = { level, message };
  const ids = traceIds ? traceIds() : activeTraceIds();
  if (ids) {
    line.traceId = ids.traceId;
    line.spanId = ids.spanId;
  }
  for (const [key, value] of Object.entries(fields)) {
    if (value === undefined || value === null || key === "level" || key === "message") continue;
    line[key] = key === "error" ? describeError(value) : value;
  }
  let text: string;
  try {
    text = redact(JSON.stringify(line));
  } catch {
    // A field that does not serialize (a cycle, a BigInt) costs the fields, not the line.
    text = redact(JSON.stringify({ level, message }));
  }
  if (level === "error") console.error(text);
  else if (level === "warn") console.warn(text);
  else console.log(text);
}
