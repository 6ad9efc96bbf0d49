import { asProviderError, ProviderError } from "./base/errors";
import type { CallOptions, Model, ModelRequest, StreamEvent } from "./base/types";
import { attempt, recoveredEvent } from "./opening";

/** How often and how patiently to try a call again. */
export interface RetryOptions {
  /** Attempts in all, the first included. Default 3. */
  maxAttempts?: number;
  /** Wait before the first retry. Default 500 ms. */
  initialDelayMs?: number;
  /** Each further retry waits `base` times longer. Default 2. */
  base?: number;
  /** No wait is longer, a provider's `Retry-After` included. Default 30 s. */
  maxDelayMs?: number;
  /** Spread of a computed wait, as a fraction of it (0..1): 0.2 waits 80%..120%. Default 0.2. */
  jitter?: number;
  /** Random numbers in [0, 1) for the jitter; `Math.random` by default. */
  random?: () => number;
  /** Waits `ms`; must reject when `signal` aborts. A timer by default. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /**
   * Your own rule, asked instead of the status-based one: retry this failure (attempt is
   * 1 for the first)? `maxAttempts`, cancellation and the stream-already-sent rule still
   * hold. E.g. `(error) => error.retryable || error.code === "overloaded_error"`.
   */
  retryIf?: (error: ProviderError, attempt: number) => boolean;
}

/** The delay settings with their defaults applied. */
export interface RetryPolicy {
  maxAttempts: number;
  initialDelayMs: number;
  base: number;
  maxDelayMs: number;
  jitter: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  maxAttempts: 3,
  initialDelayMs: 500,
  base: 2,
  maxDelayMs: 30_000,
  jitter: 0.2,
};

/**
 * Whether a failed attempt is worth another one. Only typed provider errors marked
 * retryable (429, 5xx, network, timeout) are retried, and never once `attempts` (made so
 * far) reached `maxAttempts`. Anything else (a bug, a bad request, a missing key, a
 * cancellation) fails at once.
 */
export function shouldRetry(error: unknown, attempts: number, maxAttempts: number): boolean {
  if (attempts >= maxAttempts) return false;
  if (!(error instanceof ProviderError)) return false;
  return error.retryable && error.kind !== "aborted" && error.kind !== "config";
}

/**
 * How long to wait before retry number `retry` (0 for the first). A provider's
 * `Retry-After` is obeyed as sent, capped at `maxDelayMs`; otherwise
 * `min(initialDelayMs × base^retry, maxDelayMs)` spread by ±`jitter`, and the spread result
 * is capped again so jitter never pushes a wait past `maxDelayMs`.
 * @example
 * retryDelay(0, error, DEFAULT_RETRY_POLICY, () => 0.5); // 500
 */
export function retryDelay(
  retry: number,
  error: unknown,
  policy: RetryPolicy,
  random: () => number = Math.random,
): number {
  const hinted = error instanceof ProviderError ? error.retryAfterMs : null;
  if (hinted !== null) return Math.min(Math.max(0, hinted), policy.maxDelayMs);
  const computed = Math.min(policy.initialDelayMs * policy.base ** retry, policy.maxDelayMs);
  const spread = computed * (1 + policy.jitter * (2 * random() - 1));
  return Math.round(Math.min(Math.max(0, spread), policy.maxDelayMs));
}

/** A timer that rejects with the signal's reason when the call is canceled. */
export function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * Wraps a model so failed calls are tried again. Only the opening of a call is
 * retried: once any event beyond `message_start` has reached the consumer, a failure is
 * thrown as it came, so no text is ever duplicated. Failed attempts emit nothing; when an
 * attempt finally opens, an `error` event (`recovered: true`) per earlier failure comes
 * with its first batch, right after `message_start`, so callers can log them. When every
 * attempt fails, the last failure is thrown.
 *
 * Compose it inside a fallback, `fallback([withRetry(a), withRetry(b)])`: a fallback that
 * ran out of members throws a non-retryable `AllProvidersFailedError`, so a retry around
 * a fallback only covers its failures after the stream opened (none).
 * @example
 * const model = withRetry(openai({ model: "gpt-4o-mini" }), { maxAttempts: 4 });
 * const response = await generate(model, { messages: [{ role: "user", content: "Hi" }] });
 */
export function withRetry(model: Model, options: RetryOptions = {}): Model {
  const policy = resolvePolicy(options);
  const random = options.random ?? Math.random;
  const sleep = options.sleep ?? abortableSleep;
  return {
    provider: model.provider,
    model: model.model,
    configProblems: (env) => model.configProblems?.(env) ?? [],
    capabilities: model.capabilities,
    async *streamBatches(
      request: ModelRequest,
      call: CallOptions = {},
    ): AsyncGenerator<StreamEvent[]> {
      const recovered: StreamEvent[] = [];
      for (let attempts = 1; ; attempts++) {
        const result = yield* attempt(() => model.streamBatches(request, call), recovered);
        if (result.opened) return;
        const { error } = result;
        const again = options.retryIf
          ? attempts < policy.maxAttempts &&
            error instanceof ProviderError &&
            error.kind !== "aborted" &&
            options.retryIf(error, attempts)
          : shouldRetry(error, attempts, policy.maxAttempts);
        if (call.signal?.aborted || !again) throw error;
        recovered.push(recoveredEvent(error as ProviderError, model.model));
        try {
          await sleep(retryDelay(attempts - 1, error, policy, random), call.signal);
        } catch (reason) {
          throw asProviderError(model.provider, reason, call.signal);
        }
      }
    },
  };
}

function resolvePolicy(options: RetryOptions): RetryPolicy {
  const policy: RetryPolicy = {
    maxAttempts: options.maxAttempts ?? DEFAULT_RETRY_POLICY.maxAttempts,
    initialDelayMs: options.initialDelayMs ?? DEFAULT_RETRY_POLICY.initialDelayMs,
    base: options.base ?? DEFAULT_RETRY_POLICY.base,
    maxDelayMs: options.maxDelayMs ?? DEFAULT_RETRY_POLICY.maxDelayMs,
    jitter: options.jitter ?? DEFAULT_RETRY_POLICY.jitter,
  };
  if (!Number.isInteger(policy.maxAttempts) || policy.maxAttempts < 1)
    throw new RangeError("maxAttempts must be a whole number of at least 1");
  if (policy.initialDelayMs < 0 || policy.maxDelayMs < 0 || policy.base < 1)
    throw new RangeError("delays must be non-negative and base at least 1");
  if (!(policy.jitter >= 0 && policy.jitter <= 1))
    throw new RangeError("jitter is a fraction between 0 and 1");
  return policy;
}
