import type { TaskEvent } from "../protocol/events";
import { eventToV1 } from "../protocol/wire/wire-v1";
import { eventToV03 } from "../protocol/wire/wire-v03";
import { isRetryableStatus, parseRetryAfter } from "./backoff";
import type { PushConfig } from "./config";
import {
  A2A_JSON,
  EVENT_ID_HEADER,
  IDEMPOTENCY_HEADER,
  SIGNATURE_HEADER,
  TOKEN_HEADER,
} from "./headers";
import { type SigningKey, signDelivery } from "./signing";
import { taskIdOf } from "./stream-response";

/**
 * One webhook POST: building it (body, auth, idempotency, signature), sending it with a
 * timeout, and classifying what came back. Stateless: the outbox that orders, retries and
 * dead-letters deliveries lives in the Durable Object.
 */

/** The request init of a delivery: plain data, so it can be logged or inspected. */
export interface DeliveryInit {
  method: "POST";
  headers: Record<string, string>;
  body: string;
  /** Redirects are not followed: their target never went through the URL policy. */
  redirect: "manual";
}

export interface Delivery {
  url: string;
  init: DeliveryInit;
}

export interface BuildDeliveryInput {
  config: PushConfig;
  event: TaskEvent;
  /** Stable across retries (e.g. the outbox row id): receivers dedupe on it. */
  eventId: string;
  /** The exact body captured when the event was written; default: rendered from `event`. */
  body?: string;
  /**
   * The agent's current signing key (the first of the secret's keys). Omit only when no
   * key is configured: the delivery is then unsigned and `verifyPushNotification` refuses it.
   */
  signingKey?: SigningKey;
  /** The `iss` of the signature: the agent's origin. */
  issuer: string;
  /** Epoch ms; default now. */
  now?: number;
}

/**
 * The body of a delivery in the version the config was registered with: v1 `StreamResponse`
 * (spec §4.3.3), or for a v0.3 registration the v0.3 event object (`kind`-tagged), as the
 * v0.3 spec and the official SDK send to v0.3 clients.
 * @example
 * renderPushBody(event, "1.0"); // '{"statusUpdate":{"taskId":…}}'
 */
export function renderPushBody(event: TaskEvent, version: PushConfig["protocolVersion"]): string {
  return JSON.stringify(version === "0.3" ? eventToV03(event) : eventToV1(event));
}

/** The Content-Type of a body rendered for `version`. */
export const pushContentType = (version: PushConfig["protocolVersion"]): string =>
  version === "0.3" ? "application/json" : A2A_JSON;

/**
 * Builds one delivery. Headers:
 * - `Content-Type: application/a2a+json` (v0.3 registrations: `application/json`);
 * - `Authorization: <scheme> <credentials>` when the config has `authentication`
 *   (spec §4.3.3; the scheme alone when it has no credentials);
 * - `X-A2A-Notification-Token: <token>` when the config has a `token`;
 * - `X-A2A-Event-Id: <eventId>` and `Idempotency-Key: "<eventId>"`: the same id on every
 *   retry, so receivers can drop duplicates (deliveries are at least once);
 * - `X-A2A-Signature: <JWT>` when a signing key is given (see `signDelivery`): signed at
 *   each attempt, so a retry hours later still carries a fresh, unexpired signature.
 * @example
 * const { url, init } = await buildDelivery({ config, event, eventId: "42",
 *   signingKey: keys[0], issuer: "https://agent.example.com" });
 * await fetch(url, init);
 */
export async function buildDelivery(input: BuildDeliveryInput): Promise<Delivery> {
  const { config, eventId } = input;
  if (!/^[\x21-\x7e]+$/.test(eventId)) {
    throw new Error("buildDelivery: eventId must be non-empty visible ASCII (it is a header)");
  }
  const body = input.body ?? renderPushBody(input.event, config.protocolVersion);
  const headers: Record<string, string> = {
    "Content-Type": pushContentType(config.protocolVersion),
    [EVENT_ID_HEADER]: eventId,
    [IDEMPOTENCY_HEADER]: `"${eventId.replace(/["\\]/g, "\\$&")}"`,
  };
  const auth = config.authentication;
  if (auth) {
    headers.Authorization = auth.credentials ? `${auth.scheme} ${auth.credentials}` : auth.scheme;
  }
  if (config.token) headers[TOKEN_HEADER] = config.token;
  if (input.signingKey) {
    headers[SIGNATURE_HEADER] = await signDelivery({
      key: input.signingKey,
      issuer: input.issuer,
      audience: config.url,
      eventId,
      taskId: taskIdOf(input.event) ?? config.taskId,
      body,
      now: input.now,
    });
  }
  return { url: config.url, init: { method: "POST", headers, body, redirect: "manual" } };
}

/** What one attempt came to. `reason` is for logs and the dead-letter record. */
export type DeliveryOutcome =
  | { outcome: "delivered"; status: number }
  | { outcome: "retry"; status?: number; retryAfterMs?: number; reason: string }
  | { outcome: "permanent"; status: number; reason: string };

/**
 * Classifies a webhook's answer (spec §4.3.3: receivers acknowledge with 2xx):
 * 2xx delivered; 408, 429 and 5xx retried, with the receiver's Retry-After in ms when it
 * sent one; 3xx permanent (redirects are not followed, see `DeliveryInit.redirect`); every
 * other 4xx permanent, 410 Gone included (see `isRetryableStatus`).
 * @example
 * classifyResponse(503, new Headers({ "Retry-After": "30" })); // { outcome: "retry", retryAfterMs: 30000, … }
 */
export function classifyResponse(
  status: number,
  headers: Headers,
  now: number = Date.now(),
): DeliveryOutcome {
  if (status >= 200 && status <= 299) return { outcome: "delivered", status };
  if (isRetryableStatus(status)) {
    const retryAfterMs = parseRetryAfter(headers.get("Retry-After"), now);
    const reason = `HTTP ${status}`;
    return retryAfterMs === undefined
      ? { outcome: "retry", status, reason }
      : { outcome: "retry", status, retryAfterMs, reason };
  }
  if (status >= 300 && status <= 399) {
    return {
      outcome: "permanent",
      status,
      reason: `HTTP ${status}: redirects are not followed; register the final URL`,
    };
  }
  if (status === 410) {
    return { outcome: "permanent", status, reason: "HTTP 410: the webhook no longer exists" };
  }
  return { outcome: "permanent", status, reason: `HTTP ${status}` };
}

/** A fetch function; `fetch` itself fits. */
export type FetchLike = (url: string, init: RequestInit) => Promise<Response>;

export interface DeliverOptions {
  /** Per attempt. Default 10 s (spec §4.3.3 recommends 10–30 s). */
  timeoutMs?: number;
  /** Aborts the attempt early (e.g. the object is shutting down); counts as a retry. */
  signal?: AbortSignal;
}

/** An outcome and how long the attempt took (for metrics). */
export type DeliveryResult = DeliveryOutcome & { elapsedMs: number };

/**
 * Sends one delivery and classifies it. Never throws: network errors, timeouts and an
 * aborted `signal` are `retry` outcomes. The timeout holds even if `fetchFn` ignores the
 * abort signal. The response body is discarded unread (a receiver's answer carries nothing
 * we need, and an unread body would hold the connection).
 * @example
 * const result = await deliver(fetch, await buildDelivery(input));
 * if (result.outcome === "retry") scheduleRetry(result.retryAfterMs);
 */
export async function deliver(
  fetchFn: FetchLike,
  delivery: Delivery,
  options: DeliverOptions = {},
): Promise<DeliveryResult> {
  const { timeoutMs = 10_000, signal } = options;
  const started = Date.now();
  const controller = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  let onAbort: (() => void) | undefined;

  const stop = new Promise<DeliveryOutcome>((resolve) => {
    timer = setTimeout(() => {
      controller.abort();
      resolve({ outcome: "retry", reason: `timed out after ${timeoutMs} ms` });
    }, timeoutMs);
    onAbort = () => {
      controller.abort();
      resolve({ outcome: "retry", reason: "aborted before the receiver answered" });
    };
    if (signal?.aborted) onAbort();
    else signal?.addEventListener("abort", onAbort, { once: true });
  });

  const attempt = (async (): Promise<DeliveryOutcome> => {
    try {
      const response = await fetchFn(delivery.url, {
        ...delivery.init,
        headers: { ...delivery.init.headers },
        signal: controller.signal,
      });
      const outcome = classifyResponse(response.status, response.headers);
      response.body?.cancel().catch(() => {});
      return outcome;
    } catch (error) {
      return { outcome: "retry", reason: `network error: ${describe(error)}` };
    }
  })();

  try {
    const outcome = await Promise.race([attempt, stop]);
    return { ...outcome, elapsedMs: Date.now() - started };
  } finally {
    if (timer !== undefined) clearTimeout(timer);
    if (onAbort) signal?.removeEventListener("abort", onAbort);
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
