import { createLocalJWKSet, errors, type JSONWebKeySet, type JWTVerifyGetKey } from "jose";
import { JwksUnavailableError } from "./errors";
import { fetchBoundedJson } from "./fetch-json";

/** A key set holding more keys than this is refused (real ones hold a handful). */
export const MAX_JWKS_KEYS = 64;

export interface RemoteKeySetOptions {
  /** Fetch for the set (default global fetch). */
  fetch?: typeof fetch;
  /** How long a fetched set is used before it is fetched again. Default 10 min. */
  cacheMaxAgeMs?: number;
  /**
   * After any fetch, successful or not, no other is made within this long: an unknown
   * `kid` (the signer may have rotated) refetches at once only past it, so a flood of
   * made-up kids cannot make us hammer the URL, and an issuer that is down is asked again
   * at most once per cooldown, not on every request. Default 30 s.
   */
  cooldownMs?: number;
  /**
   * While refetches fail, the last set fetched keeps verifying for this long past its
   * `cacheMaxAgeMs`, so an issuer's outage does not lock every caller out at once. After
   * that, tokens are answered "unavailable". Default 1 h.
   */
  staleGraceMs?: number;
  /** Time limit for one fetch. Default 5 s. */
  timeoutMs?: number;
  /** Size limit of the response body. Default 128 KiB. */
  maxBytes?: number;
}

/** A JWK Set of objects, of at most {@link MAX_JWKS_KEYS} keys. */
export function isJwkSet(value: unknown): value is JSONWebKeySet {
  if (typeof value !== "object" || value === null) return false;
  const keys = (value as { keys?: unknown }).keys;
  return (
    Array.isArray(keys) &&
    keys.length <= MAX_JWKS_KEYS &&
    keys.every((k) => typeof k === "object" && k !== null && !Array.isArray(k))
  );
}

/**
 * A key set fetched from a URL (a `/.well-known/jwks.json`) for `jose`'s `jwtVerify`:
 * each fetch bounded in time and size and never redirected, the set cached
 * `cacheMaxAgeMs`, refetched on an unknown `kid`, every fetch at most once per
 * `cooldownMs`, and the last good set kept for `staleGraceMs` while the URL fails. Fetches
 * are not shared between concurrent callers: in Workers a request cannot await another
 * request's I/O.
 * @throws (from the resolver) JwksUnavailableError when no usable set can be had;
 * jose's JWKSNoMatchingKey when no key fits the token.
 * @example
 * const keys = remoteKeySet("https://login.example.com/.well-known/jwks.json");
 * const { payload } = await jwtVerify(token, keys, { algorithms: ["RS256"] });
 */
export function remoteKeySet(url: string, options: RemoteKeySetOptions = {}): JWTVerifyGetKey {
  const {
    cacheMaxAgeMs = 10 * 60_000,
    cooldownMs = 30_000,
    staleGraceMs = 60 * 60_000,
    timeoutMs = 5_000,
    maxBytes = 128 * 1024,
  } = options;
  let local: JWTVerifyGetKey | undefined;
  let fetchedAt = Number.NEGATIVE_INFINITY;
  let attemptedAt = Number.NEGATIVE_INFINITY;
  let failure: JwksUnavailableError | undefined;

  const reload = async (): Promise<JWTVerifyGetKey> => {
    attemptedAt = Date.now();
    try {
      const json = await fetchBoundedJson(url, { fetch: options.fetch, timeoutMs, maxBytes });
      if (!isJwkSet(json)) {
        throw new JwksUnavailableError(
          `${url} did not answer a JWK Set (of at most ${MAX_JWKS_KEYS} keys)`,
        );
      }
      local = createLocalJWKSet(json);
      fetchedAt = Date.now();
      failure = undefined;
      return local;
    } catch (error) {
      failure =
        error instanceof JwksUnavailableError
          ? error
          : new JwksUnavailableError(`${url} answered an unusable key set`);
      throw failure;
    }
  };

  /** The set to verify with now: fresh, refetched, or stale within the grace. */
  const current = async (): Promise<JWTVerifyGetKey> => {
    const now = Date.now();
    if (local && now - fetchedAt < cacheMaxAgeMs) return local;
    const stale = local && now - fetchedAt < cacheMaxAgeMs + staleGraceMs ? local : undefined;
    if (now - attemptedAt >= cooldownMs) {
      try {
        return await reload();
      } catch (error) {
        if (stale) return stale;
        throw error;
      }
    }
    if (stale) return stale;
    throw failure ?? new JwksUnavailableError(`the key set at ${url} is not available`);
  };

  return async (header, token) => {
    const keys = await current();
    try {
      return await keys(header, token);
    } catch (error) {
      if (!(error instanceof errors.JWKSNoMatchingKey)) throw error;
      // The issuer is failing: the kid may be a key it rotated in, so "try later", not 401.
      if (failure) throw failure;
      if (Date.now() - attemptedAt < cooldownMs) throw error;
      return (await reload())(header, token);
    }
  };
}
