import { injectHeaders } from "../../telemetry/carrier";
import { inContext } from "../../telemetry/otel";
import { asProviderError, ProviderError, retryAfterMs } from "./errors";
import type { CallOptions, Model } from "./types";

/** Default stall watchdog: no bytes for this long fails the stream. */
export const DEFAULT_STALL_MS = 60_000;

/** Options every HTTP adapter accepts. */
export interface HttpProviderOptions {
  /** The model id, e.g. `gpt-4o-mini`. */
  model: string;
  /** The API key; default from the env variable named by the adapter (`OPENAI_API_KEY`, ...). */
  apiKey?: string;
  /** Overrides the API's base URL (a proxy, a gateway, or a fake provider in tests). */
  baseUrl?: string;
  /** Extra headers on every request. */
  headers?: Record<string, string>;
  /** No bytes (first or next) for this long fails the call with a timeout. Default 60 s. */
  stallMs?: number;
}

export interface PostInit {
  provider: string;
  url: string;
  headers: Record<string, string>;
  body: unknown;
  options: CallOptions;
  stallMs: number;
}

/**
 * POSTs a JSON request and returns the response once its status is OK. Any other status
 * becomes a `ProviderError` built from the provider's error body (HTTP errors), and so do
 * network failures and a response that does not start within `stallMs`.
 */
export async function postJson(init: PostInit): Promise<Response> {
  const { provider, options } = init;
  const doFetch = options.fetch ?? fetch;
  const controller = new AbortController();
  const outer = options.signal;
  const onAbort = () => controller.abort(outer?.reason);
  if (outer?.aborted) onAbort();
  else outer?.addEventListener("abort", onAbort, { once: true });
  let timedOut = false;
  const timer =
    init.stallMs > 0
      ? setTimeout(() => {
          timedOut = true;
          controller.abort();
        }, init.stallMs)
      : undefined;
  let response: Response;
  try {
    const request = {
      method: "POST",
      headers: withTrace({ "content-type": "application/json", ...init.headers }, options),
      body: JSON.stringify(init.body),
      signal: controller.signal,
    };
    response = await inContext(options.traceContext, () => doFetch(init.url, request));
  } catch (error) {
    if (timedOut) {
      throw new ProviderError({
        provider,
        kind: "timeout",
        message: `no response within ${init.stallMs} ms`,
      });
    }
    throw asProviderError(provider, error, outer);
  } finally {
    if (timer !== undefined) clearTimeout(timer);
  }
  // The body stream keeps the controller: aborting the caller's signal still cancels it.
  if (!response.ok) {
    outer?.removeEventListener("abort", onAbort);
    throw await errorFromResponse(provider, response, `POST ${withoutQuery(init.url)}`);
  }
  return response;
}

/** The call's trace context on its request, when the agent is tracing. */
function withTrace(headers: Record<string, string>, options: CallOptions): Record<string, string> {
  if (options.traceContext) injectHeaders(options.traceContext, headers);
  return headers;
}

/** A URL as errors show it: no query string, where a proxy's key could ride. */
function withoutQuery(url: string): string {
  const cut = url.search(/[?#]/);
  return cut === -1 ? url : url.slice(0, cut);
}

/** The request id a provider put in its response headers. */
export function requestIdOf(headers: Headers): string | null {
  return (
    headers.get("x-request-id") ??
    headers.get("request-id") ??
    headers.get("x-goog-request-id") ??
    headers.get("cf-ray") ??
    null
  );
}

/**
 * Builds a typed error from an HTTP error response of any provider we speak: OpenAI and
 * OpenAI-compatible `{error:{message,type,code}}`, Anthropic `{type:"error",error:{type,
 * message},request_id}`, Gemini `{error:{code,message,status,details}}` (also wrapped in an
 * array) and Workers AI `{errors:[{message,code}]}`.
 */
export async function errorFromResponse(
  provider: string,
  response: Response,
  /** The request that was answered, e.g. `POST https://api.openai.com/v1/chat/completions`. */
  request?: string,
): Promise<ProviderError> {
  const text = await response.text().catch(() => "");
  const fields = errorFields(text);
  const retryAfter = retryAfterMs(response.headers) ?? fields.retryAfterMs;
  return new ProviderError({
    provider,
    kind: "http",
    status: response.status,
    message: `${provider}${request ? `: ${request}` : ""} answered ${response.status}: ${fields.message ?? (text.slice(0, 300) || response.statusText)}`,
    code: fields.code,
    requestId: fields.requestId ?? requestIdOf(response.headers),
    retryAfterMs: retryAfter,
  });
}

interface ErrorFields {
  message: string | null;
  code: string | null;
  requestId: string | null;
  retryAfterMs: number | null;
}

/** Reads the error fields out of any provider's error JSON; tolerant of odd shapes. */
export function errorFields(text: string): ErrorFields {
  const none: ErrorFields = { message: null, code: null, requestId: null, retryAfterMs: null };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return none;
  }
  if (Array.isArray(parsed)) parsed = parsed[0];
  if (!isObject(parsed)) return none;
  const requestId = typeof parsed.request_id === "string" ? parsed.request_id : null;
  const errors = parsed.errors;
  if (Array.isArray(errors) && isObject(errors[0])) {
    const first = errors[0];
    return {
      ...none,
      message: str(first.message),
      code: first.code === undefined ? null : String(first.code),
      requestId,
    };
  }
  const error = parsed.error;
  if (typeof error === "string") return { ...none, message: error, requestId };
  if (!isObject(error)) return { ...none, message: str(parsed.message), requestId };
  // The most specific word first: OpenAI's string `code` (`model_not_found`) over its
  // `type` (`invalid_request_error`); Gemini's `status` over its numeric `code`.
  const code =
    str(error.code) ??
    str(error.type) ??
    str(error.status) ??
    (error.code == null ? null : String(error.code));
  return {
    message: str(error.message),
    code,
    requestId,
    retryAfterMs: googleRetryDelay(error.details),
  };
}

/** Gemini's `RetryInfo.retryDelay`, e.g. `"34.4s"`, in milliseconds. */
function googleRetryDelay(details: unknown): number | null {
  if (!Array.isArray(details)) return null;
  for (const detail of details) {
    if (isObject(detail) && typeof detail.retryDelay === "string") {
      const seconds = Number.parseFloat(detail.retryDelay);
      if (Number.isFinite(seconds)) return Math.round(seconds * 1000);
    }
  }
  return null;
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function str(value: unknown): string | null {
  return typeof value === "string" ? value : null;
}

/** Reads a string from the Worker env (secrets and vars). */
export function envString(env: object | undefined, name: string): string | undefined {
  const value = (env as Record<string, unknown> | undefined)?.[name];
  return typeof value === "string" && value !== "" ? value : undefined;
}

/** The API key from options or env, or a `config` error that says which secret to set. */
export function requireKey(
  provider: string,
  explicit: string | undefined,
  env: object | undefined,
  variable: string,
): string {
  const key = explicit ?? envString(env, variable);
  if (key) return key;
  throw new ProviderError({
    provider,
    kind: "config",
    message: `no API key for ${provider}: set the ${variable} secret (wrangler secret put ${variable}, or .dev.vars locally) or pass apiKey`,
  });
}

/** What an HTTP adapter needs to be callable: its key and where it sends requests. */
export interface EndpointConfig {
  provider: string;
  model: string;
  explicitKey: string | undefined;
  /** The secret the key is read from when not passed; undefined when the API needs none. */
  keyVariable: string | undefined;
  baseUrl: string;
  /** The base URL must end in a version segment such as `/v1` (the adapter appends no version). */
  versioned: boolean;
}

/**
 * The configuration problems of one HTTP adapter in `env`: its key secret missing or empty,
 * a base URL that is not a URL, not https (other than on this machine), or, for an API whose
 * paths start after the version, without a version segment (`https://api.openai.com` for
 * `https://api.openai.com/v1` answers 404 to every call).
 */
export function endpointProblems(config: EndpointConfig, env: object | undefined): string[] {
  const problems: string[] = [];
  const who = `${config.provider} (${config.model})`;
  if (
    config.keyVariable !== undefined &&
    config.explicitKey === undefined &&
    !envString(env, config.keyVariable)
  ) {
    problems.push(
      `${config.keyVariable} is not set (or empty): the model ${who} needs it. ` +
        `Run: npx wrangler secret put ${config.keyVariable} (locally: ${config.keyVariable}=... in .dev.vars)`,
    );
  }
  let url: URL | null = null;
  try {
    url = new URL(config.baseUrl);
  } catch {
    problems.push(`the base URL of ${who} is not a URL: "${config.baseUrl}"`);
  }
  if (url) {
    const local = ["localhost", "127.0.0.1", "[::1]"].includes(url.hostname);
    if (url.protocol !== "https:" && !(url.protocol === "http:" && local)) {
      problems.push(`the base URL of ${who} must be https (got ${config.baseUrl})`);
    }
    if (config.versioned && !/\/v\d+[a-z0-9]*(\/|$)/i.test(url.pathname)) {
      problems.push(
        `the base URL of ${who} has no version segment (got ${config.baseUrl}): did you mean ${joinUrl(config.baseUrl, "v1")}?`,
      );
    }
  }
  return problems;
}

/**
 * A wrapper's problems (fallback, router): one configured member is enough to answer, so
 * only when none is are all of theirs reported.
 */
export function membersProblems(members: readonly Model[], env: object | undefined): string[] {
  const each = members.map((m) => m.configProblems?.(env) ?? []);
  return each.some((p) => p.length === 0) ? [] : each.flat();
}

/** Joins a base URL and a path without doubling or dropping slashes. */
export function joinUrl(base: string, path: string): string {
  return `${base.replace(/\/+$/, "")}/${path.replace(/^\/+/, "")}`;
}
