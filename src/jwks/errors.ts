/**
 * A remote key set or an OIDC discovery document could not be had (network, time-out, not
 * 200, a redirect, too large, not what was expected): the verifier's side, so callers
 * answer "try later" (503), never "bad token" (401), which would make a client drop a good
 * token.
 */
export class JwksUnavailableError extends Error {
  override readonly name = "JwksUnavailableError";
}
