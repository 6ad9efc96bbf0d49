/**
 * What went wrong talking to a provider. `kind` says where: an HTTP error status, an error
 * sent inside a 200 stream, the network, a timeout (no first byte, or a stalled stream),
 * a cancellation, or our own configuration (a missing key, an unsupported feature).
 */
export type ProviderErrorKind = "http" | "stream" | "network" | "timeout" | "aborted" | "config";

export interface ProviderErrorInit {
  provider: string;
  kind: ProviderErrorKind;
  message: string;
  status?: number | null;
  /** The provider's error code or type, e.g. `rate_limit_exceeded`, `overloaded_error`. */
  code?: string | null;
  requestId?: string | null;
  retryable?: boolean;
  retryAfterMs?: number | null;
  cause?: unknown;
}

/**
 * A failed provider call, typed so retry and fallback can decide without string matching.
 * @example
 * try { await generate(model, request) } catch (e) {
 *   if (e instanceof ProviderError && e.retryable) console.log(e.retryAfterMs);
 * }
 */
export class ProviderError extends Error {
  override name = "ProviderError";
  readonly provider: string;
  readonly kind: ProviderErrorKind;
  readonly status: number | null;
  readonly code: string | null;
  readonly requestId: string | null;
  /** 429, 5xx, network and timeout failures may succeed when tried again. */
  readonly retryable: boolean;
  /** From `Retry-After` (or Gemini's `RetryInfo`), in milliseconds. */
  readonly retryAfterMs: number | null;

  constructor(init: ProviderErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.provider = init.provider;
    this.kind = init.kind;
    this.status = init.status ?? null;
    this.code = init.code ?? null;
    this.requestId = init.requestId ?? null;
    this.retryable = init.retryable ?? defaultRetryable(init.kind, init.status ?? null);
    this.retryAfterMs = init.retryAfterMs ?? null;
  }
}

/** 429 and 5xx are worth retrying, other 4xx never; network and timeouts are. */
export function defaultRetryable(kind: ProviderErrorKind, status: number | null): boolean {
  if (kind === "network" || kind === "timeout") return true;
  if (kind === "aborted" || kind === "config") return false;
  if (status === null) return false;
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

/**
 * Every provider of a fallback or router failed; `failures` lists each one, in the
 * order they were tried.
 */
export class AllProvidersFailedError extends ProviderError {
  override name = "AllProvidersFailedError";
  readonly failures: readonly ProviderError[];

  constructor(provider: string, failures: readonly ProviderError[]) {
    const list = failures.map((f) => `${f.provider}: ${f.message}`).join("; ");
    const last = failures.at(-1);
    super({
      provider,
      kind: last?.kind ?? "config",
      message: failures.length ? `every provider failed (${list})` : "no provider to try",
      status: last?.status ?? null,
      code: last?.code ?? null,
      requestId: last?.requestId ?? null,
      retryable: false,
    });
    this.failures = failures;
  }
}

/** Turns anything thrown while calling a provider into a `ProviderError`. */
export function asProviderError(
  provider: string,
  error: unknown,
  signal?: AbortSignal,
): ProviderError {
  if (error instanceof ProviderError) return error;
  if (signal?.aborted) {
    return new ProviderError({
      provider,
      kind: "aborted",
      message: "the call was canceled",
      cause: error,
    });
  }
  const message = error instanceof Error ? error.message : String(error);
  return new ProviderError({ provider, kind: "network", message, cause: error });
}

/**
 * Parses `Retry-After` (seconds or an HTTP date) and `retry-after-ms` into milliseconds.
 * @example
 * retryAfterMs(new Headers({ "retry-after": "2" })); // 2000
 */
export function retryAfterMs(headers: Headers, now: number = Date.now()): number | null {
  const ms = headers.get("retry-after-ms");
  if (ms !== null && Number.isFinite(Number(ms)) && Number(ms) >= 0) return Number(ms);
  const value = headers.get("retry-after");
  if (value === null) return null;
  const seconds = Number(value);
  if (value.trim() !== "" && Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}
