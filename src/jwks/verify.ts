import {
  errors,
  type JWTPayload,
  type JWTVerifyGetKey,
  type JWTVerifyOptions,
  type JWTVerifyResult,
  jwtVerify,
} from "jose";

/** Tokens longer than this are refused before any decoding (bearer tokens of large
 * identity providers stay under 8 KiB). */
export const MAX_TOKEN_LENGTH = 16_384;

/**
 * `jose`'s `jwtVerify` with a key set, refusing tokens over {@link MAX_TOKEN_LENGTH}
 * unread, and where a token without a `kid` that several keys of
 * the set fit is tried against each of them (jose leaves that loop to its caller).
 * @example
 * const { payload } = await verifyJwt(token, createLocalJWKSet(jwks), { algorithms: ["ES256"] });
 */
export async function verifyJwt(
  token: string,
  keys: JWTVerifyGetKey,
  options: JWTVerifyOptions,
): Promise<JWTVerifyResult<JWTPayload>> {
  if (token.length > MAX_TOKEN_LENGTH) {
    throw new errors.JWSInvalid(`a token longer than ${MAX_TOKEN_LENGTH} characters`);
  }
  try {
    return await jwtVerify(token, keys, options);
  } catch (error) {
    if (!(error instanceof errors.JWKSMultipleMatchingKeys)) throw error;
    for await (const key of error) {
      try {
        return await jwtVerify(token, key, options);
      } catch (inner) {
        if (!(inner instanceof errors.JWSSignatureVerificationFailed)) throw inner;
      }
    }
    throw new errors.JWSSignatureVerificationFailed();
  }
}
