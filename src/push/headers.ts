/**
 * The names a push delivery carries, shared by the sender (delivery.ts, signing.ts) and the
 * receiver helper (verify.ts) so the two cannot drift apart.
 */

/** The A2A v1 media type of the body (spec §4.3.3). */
export const A2A_JSON = "application/a2a+json";

/**
 * The config's `token`. The v1.0 spec does not say how to send it; v0.3 (§9.5 and the
 * streaming-and-async topic) names this header and the official SDKs send it, so we do.
 */
export const TOKEN_HEADER = "X-A2A-Notification-Token";

/**
 * The delivery's signature: a compact JWT (see signing.ts). Its own header because
 * `Authorization` belongs to the config's `authentication` (spec §4.3.3); `X-A2A-` marks it,
 * like the token header, as an A2A extension the spec does not define.
 */
export const SIGNATURE_HEADER = "X-A2A-Signature";

/** The stable event id, raw; equal to the signed `jti` claim. */
export const EVENT_ID_HEADER = "X-A2A-Event-Id";

/**
 * The same event id as an IETF `Idempotency-Key` (draft-ietf-httpapi-idempotency-key-header:
 * a structured-field string, hence the quotes), so generic webhook middleware that dedupes
 * on it works without knowing A2A.
 */
export const IDEMPOTENCY_HEADER = "Idempotency-Key";

/** Explicit JWT type (RFC 8725 §3.11): a push signature is never mistaken for another JWT. */
export const SIGNATURE_JWT_TYPE = "a2a-push+jwt";

/** Where an agent publishes its verification keys. */
export const JWKS_PATH = "/.well-known/jwks.json";
