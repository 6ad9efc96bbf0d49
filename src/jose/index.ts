/**
 * A small JOSE implementation on WebCrypto (`crypto.subtle`) for what Edgelink signs and
 * verifies: compact JWS/JWT (RS*, PS*, ES256/384/512, EdDSA), JWK import/export and RFC 7638
 * thumbprints, and key sets held in memory or fetched from a URL. Web APIs only, so push
 * verification and the client run in Node and browsers too.
 */
export { JWS_ALGORITHMS } from "./algorithms";
export { decodeBase64url, encodeBase64url } from "./base64url";
export { JoseError, type JoseErrorCode, JwksUnavailableError } from "./errors";
export {
  exportJwk,
  generateKeyPair,
  importPrivateJwk,
  importPublicJwk,
  type JSONWebKeySet,
  type JWK,
  jwkThumbprint,
} from "./jwk";
export { localKeySet, MAX_JWKS_KEYS, type RemoteKeySetOptions, remoteKeySet } from "./jwks";
export {
  type JwsHeader,
  type KeyResolver,
  MAX_TOKEN_LENGTH,
  signCompact,
  verifyCompact,
} from "./jws";
export { type JWTPayload, type JwtVerifyOptions, signJwt, verifyJwt } from "./jwt";
