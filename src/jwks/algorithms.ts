/**
 * The JWS algorithms a bearer config may pin: the asymmetric ones `jose` verifies on
 * WebCrypto in Workers, Node and browsers. Symmetric (HS*) algorithms are left out on
 * purpose: a key set is public, so an HMAC "key" from it would let anyone sign.
 */
export const JWS_ALGORITHMS: readonly string[] = Object.freeze([
  "RS256",
  "RS384",
  "RS512",
  "PS256",
  "PS384",
  "PS512",
  "ES256",
  "ES384",
  "ES512",
  "EdDSA",
  "Ed25519",
]);
