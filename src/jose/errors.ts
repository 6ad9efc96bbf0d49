/**
 * Why a token or a key was refused. The codes are the ones the `jose` library uses, so
 * messages built from them ("Invalid bearer token: ERR_JWT_EXPIRED") read the same.
 */
export type JoseErrorCode =
  /** Not a well-formed compact JWS: segments, base64url, header JSON, size. */
  | "ERR_JWS_INVALID"
  /** The payload is not a JSON object of claims. */
  | "ERR_JWT_INVALID"
  /** The header's `alg` is missing, `none`, unknown or not in the caller's allow-list. */
  | "ERR_JOSE_ALG_NOT_ALLOWED"
  /** A header feature we do not implement (`crit`, `b64: false`). */
  | "ERR_JOSE_NOT_SUPPORTED"
  | "ERR_JWS_SIGNATURE_VERIFICATION_FAILED"
  | "ERR_JWT_EXPIRED"
  /** A claim (`iss`, `aud`, `nbf`, `typ`, a required one) fails its check; see `claim`. */
  | "ERR_JWT_CLAIM_VALIDATION_FAILED"
  /** No key of the set fits the token (its `kid`, its algorithm's key type). */
  | "ERR_JWKS_NO_MATCHING_KEY"
  /** A key (or a key set given by the caller) is malformed or unusable. */
  | "ERR_JWK_INVALID";

/** A token or key refused: the sender's fault, never ours (compare {@link JwksUnavailableError}). */
export class JoseError extends Error {
  override readonly name = "JoseError";
  constructor(
    readonly code: JoseErrorCode,
    message: string,
    /** The claim (or header member) that failed, for ERR_JWT_CLAIM_VALIDATION_FAILED. */
    readonly claim?: string,
  ) {
    super(message);
  }
}

/**
 * A remote key set could not be had (network, time-out, not 200, too large, not a JWKS):
 * the verifier's side, so callers answer "try later", not "bad token".
 */
export class JwksUnavailableError extends Error {
  override readonly name = "JwksUnavailableError";
}
