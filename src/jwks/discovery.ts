import { JwksUnavailableError } from "./errors";
import { fetchBoundedJson } from "./fetch-json";

export interface DiscoveryOptions {
  fetch?: typeof fetch;
  /** Time limit of the fetch. Default 5 s. */
  timeoutMs?: number;
  /** Size limit of the document. Default 64 KiB. */
  maxBytes?: number;
  /** After a failed discovery, no other is tried within this long. Default 30 s. */
  cooldownMs?: number;
}

/** The discovery document's URL for an issuer (OpenID Connect Discovery 1.0 §4). */
export function discoveryUrl(issuer: string): string {
  return `${issuer.replace(/\/+$/, "")}/.well-known/openid-configuration`;
}

/**
 * A URL a verifier may fetch keys from: https, or http to this machine for development.
 * @example
 * isKeyUrl("https://login.example.com/jwks.json"); // true
 */
export function isKeyUrl(value: string): boolean {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  if (url.protocol === "https:") return true;
  return url.protocol === "http:" && ["localhost", "127.0.0.1", "[::1]"].includes(url.hostname);
}

type Found = { jwksUri: string } | { failedAt: number; error: JwksUnavailableError };

/** Per isolate: a found `jwks_uri` is kept; a failure only for the cooldown. Values, not
 * promises: in Workers a request cannot await another request's I/O. */
const found = new Map<string, Found>();

/**
 * The `jwks_uri` an issuer publishes in its discovery document. The fetch is bounded in
 * time and size and never redirected, and the document's `issuer` must equal `issuer`
 * exactly (§4.3), so a document served for another issuer is refused.
 * @throws JwksUnavailableError, also (without fetching) within the cooldown of a failure.
 * @example
 * const jwksUrl = await discoverJwksUri("https://login.example.com/");
 */
export async function discoverJwksUri(
  issuer: string,
  options: DiscoveryOptions = {},
): Promise<string> {
  const { timeoutMs = 5_000, maxBytes = 64 * 1024, cooldownMs = 30_000 } = options;
  const known = found.get(issuer);
  if (known && "jwksUri" in known) return known.jwksUri;
  if (known && Date.now() - known.failedAt < cooldownMs) throw known.error;
  const url = discoveryUrl(issuer);
  try {
    const doc = await fetchBoundedJson(url, { fetch: options.fetch, timeoutMs, maxBytes });
    if (typeof doc !== "object" || doc === null || Array.isArray(doc)) {
      throw new JwksUnavailableError(`${url} is not a discovery document`);
    }
    const { issuer: claimed, jwks_uri: jwksUri } = doc as Record<string, unknown>;
    if (claimed !== issuer) {
      throw new JwksUnavailableError(
        `${url} names issuer ${JSON.stringify(claimed)}, not the configured ${JSON.stringify(issuer)}`,
      );
    }
    if (typeof jwksUri !== "string" || !isKeyUrl(jwksUri)) {
      throw new JwksUnavailableError(`${url} has no https jwks_uri`);
    }
    found.set(issuer, { jwksUri });
    return jwksUri;
  } catch (error) {
    const unavailable =
      error instanceof JwksUnavailableError
        ? error
        : new JwksUnavailableError(`discovery at ${url} failed`);
    found.set(issuer, { failedAt: Date.now(), error: unavailable });
    throw unavailable;
  }
}
