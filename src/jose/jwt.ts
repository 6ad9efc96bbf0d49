import { JoseError } from "./errors";
import { type JwsHeader, type KeyResolver, signCompact, verifyCompact } from "./jws";

/** A JWT's claims (RFC 7519 §4.1), plus any others. */
export interface JWTPayload {
  iss?: string;
  sub?: string;
  aud?: string | string[];
  jti?: string;
  nbf?: number;
  exp?: number;
  iat?: number;
  [claim: string]: unknown;
}

export interface JwtVerifyOptions {
  /** The algorithms accepted; anything else (and always `none`) is refused. */
  algorithms: readonly string[];
  /** `iss` must equal this. */
  issuer?: string;
  /** `aud` (a string or a list) must contain one of these. */
  audience?: string | readonly string[];
  /** The header's `typ` must be this (compared as media types: `JWT` = `application/jwt`). */
  typ?: string;
  /** Claims that must be present. */
  requiredClaims?: readonly string[];
  /** Leeway for `exp` and `nbf`, seconds. Default 0. */
  clockToleranceSeconds?: number;
  /** Epoch ms; default now. */
  now?: number;
}

/** Signs `claims` as a JWT with `key`, whose algorithm is `header.alg`. */
export function signJwt(header: JwsHeader, claims: JWTPayload, key: CryptoKey): Promise<string> {
  return signCompact(header, new TextEncoder().encode(JSON.stringify(claims)), key);
}

/**
 * Verifies a JWT: its signature ({@link verifyCompact}), then its claims: `typ`, the
 * required ones, `iss`, `aud`, and the times (`exp` passed, `nbf` not reached, each within
 * the tolerance; `iat`, `nbf`, `exp` must be numbers when present).
 * @throws JoseError with the code and, for a claim, its name.
 * @example
 * const { payload } = await verifyJwt(token, localKeySet(jwks), {
 *   algorithms: ["ES256"], issuer: "https://login.example.com/", audience: "api",
 * });
 */
export async function verifyJwt(
  token: string,
  keys: KeyResolver,
  options: JwtVerifyOptions,
): Promise<{ header: JwsHeader; payload: JWTPayload }> {
  const { header, payload: bytes } = await verifyCompact(token, keys, options.algorithms);
  let payload: unknown;
  try {
    payload = JSON.parse(new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes));
  } catch {
    throw new JoseError("ERR_JWT_INVALID", "the payload is not JSON");
  }
  if (typeof payload !== "object" || payload === null || Array.isArray(payload)) {
    throw new JoseError("ERR_JWT_INVALID", "the payload is not a JSON object");
  }
  checkClaims(header, payload as JWTPayload, options);
  return { header, payload: payload as JWTPayload };
}

const claimFailed = (claim: string, message: string) =>
  new JoseError("ERR_JWT_CLAIM_VALIDATION_FAILED", message, claim);

/** `JWT` and `application/jwt` are one media type (RFC 7515 §4.1.9); case does not matter. */
function mediaType(typ: string): string {
  const lower = typ.toLowerCase();
  return lower.includes("/") ? lower : `application/${lower}`;
}

function checkClaims(header: JwsHeader, claims: JWTPayload, options: JwtVerifyOptions): void {
  if (
    options.typ !== undefined &&
    (typeof header.typ !== "string" || mediaType(header.typ) !== mediaType(options.typ))
  ) {
    throw claimFailed("typ", 'unexpected "typ" header value');
  }
  const required = [...(options.requiredClaims ?? [])];
  if (options.issuer !== undefined) required.push("iss");
  if (options.audience !== undefined) required.push("aud");
  for (const claim of required) {
    if (!Object.hasOwn(claims, claim))
      throw claimFailed(claim, `missing required "${claim}" claim`);
  }
  if (options.issuer !== undefined && claims.iss !== options.issuer) {
    throw claimFailed("iss", 'unexpected "iss" claim value');
  }
  if (options.audience !== undefined) {
    const wanted = typeof options.audience === "string" ? [options.audience] : options.audience;
    const aud = claims.aud;
    const given = typeof aud === "string" ? [aud] : Array.isArray(aud) ? aud : [];
    if (!given.some((a) => typeof a === "string" && wanted.includes(a))) {
      throw claimFailed("aud", 'unexpected "aud" claim value');
    }
  }
  const now = Math.floor((options.now ?? Date.now()) / 1000);
  const tolerance = options.clockToleranceSeconds ?? 0;
  numericDate(claims, "iat"); // only its type: no maximum age is enforced
  const nbf = numericDate(claims, "nbf");
  if (nbf !== undefined && nbf > now + tolerance) {
    throw claimFailed("nbf", '"nbf" claim timestamp check failed (not yet valid)');
  }
  const exp = numericDate(claims, "exp");
  if (exp !== undefined && exp <= now - tolerance) {
    throw new JoseError("ERR_JWT_EXPIRED", '"exp" claim timestamp check failed', "exp");
  }
}

/** A NumericDate claim (RFC 7519 §2): a finite number of seconds, when present. */
function numericDate(claims: JWTPayload, claim: "iat" | "nbf" | "exp"): number | undefined {
  const value = claims[claim];
  if (value === undefined) return undefined;
  if (typeof value !== "number" || !Number.isFinite(value)) {
    throw claimFailed(claim, `"${claim}" claim must be a number`);
  }
  return value;
}
