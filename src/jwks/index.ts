/**
 * Key sets for verifying JWTs with `jose`: fetched with time, size and redirect limits,
 * cached with a cooldown and a stale grace, or found through OIDC discovery.
 */
export { JWS_ALGORITHMS } from "./algorithms";
export { type DiscoveryOptions, discoverJwksUri, discoveryUrl, isKeyUrl } from "./discovery";
export { JwksUnavailableError } from "./errors";
export { isJwkSet, MAX_JWKS_KEYS, type RemoteKeySetOptions, remoteKeySet } from "./remote";
export { MAX_TOKEN_LENGTH, verifyJwt } from "./verify";
