/**
 * When to retry a webhook delivery, and whether to at all (A2A §4.3.3:
 * agents MAY retry with exponential backoff and MAY stop after a number of failures).
 */

export interface BackoffOptions {
  /** Ceiling of the first retry's delay. Default 30 s. */
  initialDelayMs: number;
  /** No single delay exceeds this, Retry-After included. Default 6 h. */
  maxDelayMs: number;
  /** After this long since the first attempt the delivery is dead-lettered. Default 24 h. */
  horizonMs: number;
  /** Attempts in all, the first one included; then dead letter. Default 12. */
  maxAttempts: number;
  /** A number in [0, 1); injectable so tests are deterministic. Default `Math.random`. */
  random: () => number;
}

/**
 * The defaults: ceilings of 30 s, 1, 2, 4, … 256 min, then 6 h, so the eleven retries of
 * twelve attempts span at most about 14.5 h before jitter (about half that on average),
 * inside the 24 h horizon; whichever limit comes first ends the retries.
 */
export const DEFAULT_BACKOFF: Readonly<BackoffOptions> = Object.freeze({
  initialDelayMs: 30_000,
  maxDelayMs: 6 * 60 * 60_000,
  horizonMs: 24 * 60 * 60_000,
  maxAttempts: 12,
  random: Math.random,
});

const withDefaults = (options: Partial<BackoffOptions> = {}): BackoffOptions => ({
  ...DEFAULT_BACKOFF,
  ...options,
});

/**
 * The un-jittered delay before retry `n` (0 for the first retry):
 * min(initial × 2^n, maxDelay).
 * @example
 * backoffCeiling(3, { initialDelayMs: 1000 }); // 8000
 */
export function backoffCeiling(n: number, options: Partial<BackoffOptions> = {}): number {
  const { initialDelayMs, maxDelayMs } = withDefaults(options);
  // 2^n overflows to Infinity for large n; min() still caps it.
  return Math.min(initialDelayMs * 2 ** Math.max(0, n), maxDelayMs);
}

/**
 * The delay before retry `n` with full jitter: uniform in [0, ceiling), so deliveries
 * that failed together do not retry together. It never exceeds maxDelay, even with a
 * random source that (wrongly) returns 1 (jitter never reaches the full delay).
 * @example
 * jitteredDelay(0, { initialDelayMs: 1000, random: () => 0.5 }); // 500
 */
export function jitteredDelay(n: number, options: Partial<BackoffOptions> = {}): number {
  const resolved = withDefaults(options);
  const ceiling = backoffCeiling(n, resolved);
  const r = Math.min(Math.max(resolved.random(), 0), 1);
  return Math.min(Math.floor(r * ceiling), ceiling);
}

/** Where a delivery stands after a failed attempt. */
export interface RetryState {
  /** Attempts made so far, the failed one included (1 after the first failure). */
  attempts: number;
  /** When the first attempt was made (epoch ms); the horizon counts from here. */
  firstAttemptAt: number;
  /** Now (epoch ms). */
  now: number;
  /** The receiver's Retry-After, in ms, when it sent one (see `parseRetryAfter`). */
  retryAfterMs?: number;
}

/**
 * How long to wait before the next attempt, or null when the delivery is out of attempts
 * or past its horizon and goes to the dead letter (no retry once attempts ≥ max).
 * A Retry-After replaces the jittered delay, capped at maxDelay. A delay that would
 * end past the horizon is shortened to end at it, so the last attempt is at the horizon.
 * @example
 * nextDelay({ attempts: 1, firstAttemptAt: t0, now: t0 + 200 }); // in [0, 30 000)
 * nextDelay({ attempts: 12, firstAttemptAt: t0, now }); // null: dead letter
 */
export function nextDelay(state: RetryState, options: Partial<BackoffOptions> = {}): number | null {
  const resolved = withDefaults(options);
  if (state.attempts >= resolved.maxAttempts) return null;
  const remaining = state.firstAttemptAt + resolved.horizonMs - state.now;
  if (remaining <= 0) return null;
  const delay =
    state.retryAfterMs === undefined
      ? jitteredDelay(state.attempts - 1, resolved)
      : Math.min(Math.max(state.retryAfterMs, 0), resolved.maxDelayMs);
  return Math.min(delay, remaining);
}

/**
 * A Retry-After header (RFC 9110 §10.2.3) in ms from `now`: delay-seconds or an HTTP date
 * (a past date is 0). Undefined when absent or unreadable, so the normal backoff applies.
 * @example
 * parseRetryAfter("120", Date.now()); // 120000
 * parseRetryAfter("Wed, 21 Oct 2026 07:28:00 GMT", now); // ms until then
 */
export function parseRetryAfter(value: string | null | undefined, now: number): number | undefined {
  const text = value?.trim();
  if (!text) return undefined;
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  // Only the HTTP-date form is a date here: Date.parse also reads "12" or "1.5" as dates.
  if (!/[a-z]/i.test(text)) return undefined;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/**
 * Whether a failed delivery's HTTP status is worth retrying: 408 (timeout), 429 (rate
 * limited) and every 5xx (the receiver or a proxy in front of it is down). Every other
 * status is permanent: 4xx means the request itself is refused (bad credentials, unknown
 * path) and retrying sends the same request again. 410 Gone in particular is the
 * receiver saying the webhook no longer exists: permanent, the event is dead-lettered at
 * once (and the config is left to its owner to delete). Network errors and timeouts have
 * no status and are always retried (see `deliver`).
 * @example
 * isRetryableStatus(503); // true
 * isRetryableStatus(410); // false
 */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 429 || (status >= 500 && status <= 599);
}
