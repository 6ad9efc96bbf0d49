import { algorithmEntry } from "./algorithms";
import { JoseError, JwksUnavailableError } from "./errors";
import { importPublicJwk, type JSONWebKeySet, type JWK } from "./jwk";
import type { JwsHeader, KeyResolver } from "./jws";

/** A key set holding more keys than this is refused (real ones hold a handful). */
export const MAX_JWKS_KEYS = 64;

function isJwkSet(value: unknown): value is JSONWebKeySet {
  if (typeof value !== "object" || value === null) return false;
  const keys = (value as { keys?: unknown }).keys;
  return (
    Array.isArray(keys) &&
    keys.every((k) => typeof k === "object" && k !== null && !Array.isArray(k))
  );
}

/** May `jwk` verify a token with this header? Its kid, type, curve, alg, use and ops say. */
function fits(jwk: JWK, header: JwsHeader): boolean {
  const entry = algorithmEntry(header.alg);
  return (
    entry !== undefined &&
    (header.kid === undefined || jwk.kid === header.kid) &&
    jwk.kty === entry.kty &&
    (entry.crv === undefined || jwk.crv === entry.crv) &&
    (jwk.alg === undefined || jwk.alg === header.alg) &&
    (jwk.use === undefined || jwk.use === "sig") &&
    (jwk.key_ops === undefined || (Array.isArray(jwk.key_ops) && jwk.key_ops.includes("verify")))
  );
}

/**
 * A key set held in memory: resolves a header to the keys that fit it (by `kid` when the
 * header has one, else every key of the right type), imported once per algorithm.
 * @throws JoseError ERR_JWK_INVALID when `jwks` is not a JWK Set (or too large).
 * @example
 * const { payload } = await verifyJwt(token, localKeySet({ keys: [jwk] }), { algorithms: ["EdDSA"] });
 */
export function localKeySet(jwks: JSONWebKeySet): KeyResolver {
  if (!isJwkSet(jwks)) throw new JoseError("ERR_JWK_INVALID", "not a JWK Set");
  if (jwks.keys.length > MAX_JWKS_KEYS) {
    throw new JoseError("ERR_JWK_INVALID", `a JWK Set of more than ${MAX_JWKS_KEYS} keys`);
  }
  // A snapshot: later edits of the caller's objects change nothing.
  const keys: JWK[] = structuredClone(jwks.keys);
  const imported = new Map<string, Promise<CryptoKey>>();
  return async (header) => {
    const found = keys.flatMap((jwk, i) => (fits(jwk, header) ? [i] : []));
    if (found.length === 0) {
      throw new JoseError("ERR_JWKS_NO_MATCHING_KEY", "no key of the set matches the token");
    }
    const settled = await Promise.allSettled(
      found.map((i) => {
        const id = `${i}:${header.alg}`;
        let key = imported.get(id);
        if (!key) {
          // A failed import is kept too: it would fail the same way again.
          key = importPublicJwk(keys[i] as JWK, header.alg);
          imported.set(id, key);
        }
        return key;
      }),
    );
    // One malformed key among several does not stop the others from verifying.
    const usable = settled.flatMap((r) => (r.status === "fulfilled" ? [r.value] : []));
    if (usable.length === 0) throw (settled[0] as PromiseRejectedResult).reason;
    return usable;
  };
}

export interface RemoteKeySetOptions {
  /** Fetch for the set (default global fetch). */
  fetch?: typeof fetch;
  /** How long a fetched set is used before it is fetched again. Default 10 min. */
  cacheMaxAgeMs?: number;
  /**
   * An unknown `kid` refetches the set at once (the signer may have rotated), but not
   * again within this long of the previous fetch, so a flood of made-up kids cannot make
   * us hammer the URL. Default 30 s.
   */
  cooldownMs?: number;
  /** Time limit for one fetch. Default 5 s. */
  timeoutMs?: number;
  /** Size limit of the response body. Default 128 KiB. */
  maxBytes?: number;
}

/**
 * A key set fetched from a URL (a `/.well-known/jwks.json`), cached `cacheMaxAgeMs` and
 * refetched on an unknown `kid` at most once per `cooldownMs`. Fetches are not shared
 * between concurrent callers: in Workers a request cannot await another request's I/O.
 * @throws (from the resolver) JwksUnavailableError when the set cannot be had; JoseError
 * ERR_JWKS_NO_MATCHING_KEY when no key fits even after a refetch.
 * @example
 * const keys = remoteKeySet("https://login.example.com/.well-known/jwks.json");
 */
export function remoteKeySet(url: string, options: RemoteKeySetOptions = {}): KeyResolver {
  const {
    cacheMaxAgeMs = 10 * 60_000,
    cooldownMs = 30_000,
    timeoutMs = 5_000,
    maxBytes = 128 * 1024,
  } = options;
  let local: KeyResolver | undefined;
  let fetchedAt = Number.NEGATIVE_INFINITY;
  let attemptedAt = Number.NEGATIVE_INFINITY;

  const reload = async () => {
    attemptedAt = Date.now();
    const json = await fetchJson(url, options.fetch ?? fetch, timeoutMs, maxBytes);
    if (!isJwkSet(json) || json.keys.length > MAX_JWKS_KEYS) {
      throw new JwksUnavailableError(`${url} did not answer a JWK Set`);
    }
    local = localKeySet(json);
    fetchedAt = Date.now();
  };

  return async (header) => {
    if (!local || Date.now() - fetchedAt >= cacheMaxAgeMs) await reload();
    try {
      return await (local as KeyResolver)(header);
    } catch (error) {
      const noMatch = error instanceof JoseError && error.code === "ERR_JWKS_NO_MATCHING_KEY";
      if (!noMatch || Date.now() - attemptedAt < cooldownMs) throw error;
      await reload();
      return (local as KeyResolver)(header);
    }
  };
}

async function fetchJson(
  url: string,
  fetchFn: typeof fetch,
  timeoutMs: number,
  maxBytes: number,
): Promise<unknown> {
  let response: Response;
  try {
    response = await fetchFn(url, {
      method: "GET",
      redirect: "manual",
      headers: { Accept: "application/json, application/jwk-set+json" },
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    throw new JwksUnavailableError(`fetching ${url} failed (${why})`);
  }
  if (response.status !== 200) {
    // An unread body keeps the connection (and, in Workers, the request) busy.
    await response.body?.cancel().catch(() => {});
    throw new JwksUnavailableError(`${url} answered ${response.status}, not 200`);
  }
  const text = await readLimited(response, maxBytes, url);
  try {
    return JSON.parse(text);
  } catch {
    throw new JwksUnavailableError(`${url} did not answer JSON`);
  }
}

/** The body as text, refused past `maxBytes` without reading further. */
async function readLimited(response: Response, maxBytes: number, url: string): Promise<string> {
  const tooLarge = () => new JwksUnavailableError(`${url} answered more than ${maxBytes} bytes`);
  if (Number(response.headers.get("Content-Length") ?? 0) > maxBytes) {
    await response.body?.cancel().catch(() => {});
    throw tooLarge();
  }
  if (!response.body) return "";
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > maxBytes) {
        await reader.cancel().catch(() => {});
        throw tooLarge();
      }
      chunks.push(value);
    }
  } catch (error) {
    if (error instanceof JwksUnavailableError) throw error;
    const why = error instanceof Error ? error.message : String(error);
    throw new JwksUnavailableError(`reading ${url} failed (${why})`);
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.byteLength;
  }
  return new TextDecoder().decode(bytes);
}
