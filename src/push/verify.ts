import {
  createLocalJWKSet,
  errors,
  type JSONWebKeySet,
  type JWK,
  type JWTPayload,
  type JWTVerifyGetKey,
} from "jose";
import { isJwkSet, remoteKeySet, verifyJwt } from "../jwks";
import type { TaskEvent } from "../protocol/events";
import type { JsonObject } from "../protocol/json";
import { EVENT_ID_HEADER, SIGNATURE_HEADER, SIGNATURE_JWT_TYPE, TOKEN_HEADER } from "./headers";
import { bodySha256 } from "./signing";
import { streamResponseToEvent, taskIdOf, V1StreamResponse } from "./stream-response";

/**
 * The receiver's side: `verifyPushNotification` checks that a webhook POST was signed by
 * the agent, for this URL, recently, over exactly this body, and returns the typed event.
 *
 * A complete receiver (itself a Worker):
 * ```ts
 * import { PushVerificationError, verifyPushNotification } from "edgelink";
 *
 * const seen = new Set<string>(); // use KV or a Durable Object in production
 * export default {
 *   async fetch(request: Request): Promise<Response> {
 *     try {
 *       const { event, eventId, taskId } = await verifyPushNotification(request, {
 *         jwksUrl: "https://agent.example.com/.well-known/jwks.json",
 *         audience: "https://hooks.example.com/a2a",
 *         issuer: "https://agent.example.com",
 *       });
 *       if (seen.has(eventId)) return new Response(null, { status: 204 }); // a retry
 *       seen.add(eventId);
 *       console.log(taskId, event.kind);
 *       return new Response(null, { status: 204 });
 *     } catch (error) {
 *       if (error instanceof PushVerificationError) {
 *         return new Response(error.reason, { status: error.status });
 *       }
 *       throw error;
 *     }
 *   },
 * };
 * ```
 * Answer 2xx only once the event is safely handled: anything else makes the agent retry
 * (408/429/5xx) or give up (other 4xx).
 */

/** Why a notification was refused. */
export type PushVerificationReason =
  | "missing-signature"
  | "bad-signature"
  | "unknown-key"
  | "expired"
  | "wrong-audience"
  | "wrong-issuer"
  | "bad-claims"
  | "body-hash-mismatch"
  | "bad-json"
  | "bad-payload"
  | "task-mismatch"
  | "event-id-mismatch"
  | "bad-token"
  | "jwks-unavailable";

/**
 * The HTTP status a receiver should answer with: 401 for authenticity failures, 400 for a
 * well-signed but malformed payload (both permanent for the sender), 503 when the keys
 * could not be fetched (the sender retries).
 */
const STATUS_OF: Record<PushVerificationReason, number> = {
  "missing-signature": 401,
  "bad-signature": 401,
  "unknown-key": 401,
  expired: 401,
  "wrong-audience": 401,
  "wrong-issuer": 401,
  "bad-claims": 401,
  "body-hash-mismatch": 401,
  "bad-token": 401,
  "bad-json": 400,
  "bad-payload": 400,
  "task-mismatch": 400,
  "event-id-mismatch": 400,
  "jwks-unavailable": 503,
};

/** A refused notification; `reason` says why, `status` what to answer. */
export class PushVerificationError extends Error {
  override readonly name = "PushVerificationError";
  readonly status: number;
  constructor(
    readonly reason: PushVerificationReason,
    message: string,
  ) {
    super(message);
    this.status = STATUS_OF[reason];
  }
}

export interface VerifyPushOptions {
  /** The agent's public keys (a JWK list or a JWK Set). One of `keys` and `jwksUrl`. */
  keys?: JWK[] | JSONWebKeySet;
  /** The agent's `/.well-known/jwks.json`; fetched with `fetch`, cached 10 min per URL. */
  jwksUrl?: string;
  /** This webhook's URL exactly as registered (it is the signature's `aud`). */
  audience: string;
  /** The agent's origin; when set, `iss` must equal it. */
  issuer?: string;
  /** The config `token` you registered; when set, `X-A2A-Notification-Token` must equal it. */
  token?: string;
  /** Fetch for the JWKS (default global fetch). */
  fetch?: typeof fetch;
  /** Epoch ms, for tests; default now. */
  now?: number;
  /** Allowed clock skew for `exp`. Default 30 s. */
  clockToleranceSeconds?: number;
}

export interface VerifiedPushNotification {
  /** The payload as an Edgelink event (task, message, status-update, artifact-update). */
  event: TaskEvent;
  /** The StreamResponse JSON exactly as received. */
  payload: JsonObject;
  /** The stable event id (`jti`): drop repeats, deliveries are at least once. */
  eventId: string;
  taskId: string;
  /** Every claim of the signature. */
  claims: JWTPayload & { taskId: string; bodySha256: string };
}

/**
 * Verifies a push notification and returns its event. Reads the body once (the request is
 * consumed); checks the `X-A2A-Signature` JWT (signature, `typ`, `aud`, `exp`, `iss` when
 * given), then the body's SHA-256 against `bodySha256`, then parses the v1 StreamResponse
 * and checks its task against the `taskId` claim.
 * @throws PushVerificationError with a `reason` and the `status` to answer.
 * @example
 * const { event, eventId } = await verifyPushNotification(request, {
 *   jwksUrl: "https://agent.example.com/.well-known/jwks.json",
 *   audience: "https://hooks.example.com/a2a",
 * });
 */
export async function verifyPushNotification(
  request: Request,
  options: VerifyPushOptions,
): Promise<VerifiedPushNotification> {
  const jwt = request.headers.get(SIGNATURE_HEADER);
  if (!jwt) {
    throw new PushVerificationError("missing-signature", `no ${SIGNATURE_HEADER} header`);
  }
  if (options.token !== undefined) {
    const sent = request.headers.get(TOKEN_HEADER) ?? "";
    if (!(await sameSecret(sent, options.token))) {
      throw new PushVerificationError("bad-token", `${TOKEN_HEADER} does not match`);
    }
  }
  // The exact bytes: the hash covers them, not a re-serialization.
  const bytes = new Uint8Array(await request.arrayBuffer());

  const claims = await checkSignature(jwt, options);
  if ((await bodySha256(bytes)) !== claims.bodySha256) {
    throw new PushVerificationError("body-hash-mismatch", "the body does not match its signature");
  }
  const eventId = claims.jti as string;
  const sentEventId = request.headers.get(EVENT_ID_HEADER);
  if (sentEventId !== null && sentEventId !== eventId) {
    throw new PushVerificationError(
      "event-id-mismatch",
      `${EVENT_ID_HEADER} (${sentEventId}) differs from the signed event id (${eventId})`,
    );
  }

  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes));
  } catch {
    throw new PushVerificationError("bad-json", "the body is not JSON");
  }
  const parsed = V1StreamResponse.safeParse(json);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    const where = first?.path.length ? `${first.path.join(".")}: ` : "";
    throw new PushVerificationError(
      "bad-payload",
      `the body is not an A2A v1 StreamResponse (${where}${first?.message ?? "invalid"})`,
    );
  }
  const event = streamResponseToEvent(parsed.data);
  const payloadTaskId = taskIdOf(event);
  if (payloadTaskId !== undefined && payloadTaskId !== claims.taskId) {
    throw new PushVerificationError(
      "task-mismatch",
      `the payload's task (${payloadTaskId}) is not the signed task (${claims.taskId})`,
    );
  }
  return { event, payload: json as JsonObject, eventId, taskId: claims.taskId, claims };
}

async function checkSignature(
  jwt: string,
  options: VerifyPushOptions,
): Promise<VerifiedPushNotification["claims"]> {
  const keys = keyResolver(options);
  let payload: JWTPayload;
  try {
    ({ payload } = await verifyJwt(jwt, keys, {
      algorithms: ["ES256", "EdDSA", "Ed25519"],
      typ: SIGNATURE_JWT_TYPE,
      audience: normalizeUrl(options.audience),
      ...(options.issuer !== undefined ? { issuer: options.issuer } : {}),
      requiredClaims: ["iss", "aud", "iat", "exp", "jti"],
      currentDate: new Date(options.now ?? Date.now()),
      clockTolerance: options.clockToleranceSeconds ?? 30,
    }));
  } catch (error) {
    throw fromJoseError(error);
  }
  const { taskId, bodySha256: hash, jti } = payload as JWTPayload & Record<string, unknown>;
  if (typeof taskId !== "string" || typeof hash !== "string" || typeof jti !== "string") {
    throw new PushVerificationError("bad-claims", "the signature lacks taskId, bodySha256 or jti");
  }
  return { ...payload, taskId, bodySha256: hash };
}

function fromJoseError(error: unknown): PushVerificationError {
  // Anything but a refused token (the JWKS could not be had: network, time-out, non-200,
  // not a JWKS) is for the sender to retry later rather than dead-letter: 503.
  if (!(error instanceof errors.JOSEError)) {
    const message = error instanceof Error ? error.message : String(error);
    return new PushVerificationError(
      "jwks-unavailable",
      `the keys could not be fetched: ${message}`,
    );
  }
  if (error.code === "ERR_JWT_EXPIRED") {
    return new PushVerificationError("expired", "the signature has expired");
  }
  if (error instanceof errors.JWTClaimValidationFailed) {
    if (error.claim === "aud") {
      return new PushVerificationError("wrong-audience", "the signature is for another URL");
    }
    if (error.claim === "iss") {
      return new PushVerificationError("wrong-issuer", "the signature is from another issuer");
    }
    return new PushVerificationError("bad-claims", `invalid claims: ${error.message}`);
  }
  if (error.code === "ERR_JWKS_NO_MATCHING_KEY") {
    return new PushVerificationError("unknown-key", "no published key matches the signature");
  }
  return new PushVerificationError("bad-signature", `invalid signature: ${error.message}`);
}

/** A remote key set caches its keys, so keep one per (fetch, URL). */
const remoteSets = new WeakMap<object, Map<string, JWTVerifyGetKey>>();
const GLOBAL_FETCH = {};

function keyResolver(options: VerifyPushOptions): JWTVerifyGetKey {
  if (options.keys) {
    const list = Array.isArray(options.keys) ? options.keys : options.keys.keys;
    if (!isJwkSet({ keys: list })) throw new TypeError("verifyPushNotification: bad `keys`");
    // Only the public members are ever imported: a private JWK passed by mistake verifies.
    return createLocalJWKSet({ keys: list.map(publicMembers) });
  }
  if (!options.jwksUrl) {
    throw new TypeError("verifyPushNotification: pass `keys` or `jwksUrl`");
  }
  const owner = options.fetch ?? GLOBAL_FETCH;
  let sets = remoteSets.get(owner);
  if (!sets) {
    sets = new Map();
    remoteSets.set(owner, sets);
  }
  let set = sets.get(options.jwksUrl);
  if (!set) {
    set = remoteKeySet(options.jwksUrl, options.fetch ? { fetch: options.fetch } : {});
    sets.set(options.jwksUrl, set);
  }
  return set;
}

/** A JWK without its private members (jose refuses a private key in a key set). */
function publicMembers(jwk: JWK): JWK {
  const { d: _d, p: _p, q: _q, dp: _dp, dq: _dq, qi: _qi, oth: _oth, k: _k, ...rest } = jwk;
  return rest;
}

/** `https://x.com` and `https://x.com/` are one URL; the sender signs the normalized form. */
function normalizeUrl(url: string): string {
  try {
    return new URL(url).href;
  } catch {
    return url;
  }
}

/** Compares secrets without leaking where they differ through timing. */
async function sameSecret(a: string, b: string): Promise<boolean> {
  const encoder = new TextEncoder();
  const [ha, hb] = await Promise.all([
    crypto.subtle.digest("SHA-256", encoder.encode(a)),
    crypto.subtle.digest("SHA-256", encoder.encode(b)),
  ]);
  const x = new Uint8Array(ha);
  const y = new Uint8Array(hb);
  let diff = 0;
  for (let i = 0; i < x.length; i++) diff |= (x[i] ?? 0) ^ (y[i] ?? 0);
  return diff === 0;
}
