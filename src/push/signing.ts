import {
  base64url,
  calculateJwkThumbprint,
  exportJWK,
  generateKeyPair,
  type JWK,
  SignJWT,
} from "jose";
import {
  loadPrivateKey,
  loadPrivateKeys,
  type PublicSigningJwk,
  type SigningAlgorithm,
  type SigningKey,
} from "../jwks/private-keys";
import { SIGNATURE_JWT_TYPE } from "./headers";

/**
 * Delivery signing: every webhook POST carries a JWT signed with the agent's key, so a
 * receiver can tell the agent sent it, for this URL, with this exact body, recently.
 *
 * The key is a private JWK (ES256 on P-256, or EdDSA on Ed25519) in a Worker secret, e.g.
 * `npx wrangler secret put PUSH_SIGNING_KEYS` with the output of `generateSigningKey()`.
 * Its public part is published at `/.well-known/jwks.json` (`publicJwks`).
 *
 * Rotation: the secret may hold several keys, as a JSON array or a JWK Set `{"keys": [...]}`.
 * Deliveries are signed with the first; every key is published. To rotate:
 * 1. Add the new key second (`[old, new]`) and deploy: both are published, old still signs.
 * 2. Once receivers' JWKS caches have refreshed (an hour is plenty: `verifyPushNotification`
 *    caches ten minutes and refetches at once on an unknown `kid`), swap to `[new, old]`.
 * 3. Remove the old key after its last signatures have expired (`ttlSeconds`, 5 min). Retries
 *    are signed afresh at each attempt, so nothing older is ever in flight.
 */

export type { PublicSigningJwk, SigningAlgorithm, SigningKey } from "../jwks/private-keys";

/** The claims of a delivery signature beyond the registered ones. */
export interface DeliveryClaims {
  /** The task the event belongs to. */
  taskId: string;
  /** base64url(SHA-256(body bytes)), unpadded. */
  bodySha256: string;
}

/**
 * Loads one private JWK (a JSON string or an object). A missing `kid` becomes the key's
 * RFC 7638 thumbprint, so it is stable across deploys.
 * @throws Error when the JSON is not a private ES256/EdDSA JWK (the message never echoes
 * key material).
 * @example
 * const key = await loadSigningKey(env.PUSH_SIGNING_KEY);
 */
export async function loadSigningKey(jwkJson: string | JWK): Promise<SigningKey> {
  let jwk: unknown = jwkJson;
  if (typeof jwkJson === "string") {
    try {
      jwk = JSON.parse(jwkJson);
    } catch {
      throw new Error("push signing key: the secret is not valid JSON");
    }
  }
  return loadPrivateKey(jwk, "push signing key");
}

/**
 * Loads a secret holding one key, an array of keys or a JWK Set; the first signs.
 * @throws Error on an empty set, a bad key or two keys with the same kid.
 * @example
 * const keys = await loadSigningKeys(env.PUSH_SIGNING_KEYS); // sign with keys[0]
 */
export function loadSigningKeys(secret: string): Promise<SigningKey[]> {
  return loadPrivateKeys(secret, "push signing keys");
}

/**
 * A new private JWK as JSON, with `kid` (its thumbprint), `alg` and `use`: the value to
 * store in the signing-key secret. For setup scripts, docs and tests.
 * @example
 * console.log(await generateSigningKey("EdDSA")); // {"kty":"OKP","crv":"Ed25519","d":"…",…}
 */
export async function generateSigningKey(
  alg: SigningAlgorithm | "Ed25519" = "ES256",
): Promise<string> {
  const algorithm: SigningAlgorithm = alg === "ES256" ? "ES256" : "EdDSA";
  const { privateKey } = await generateKeyPair(algorithm, { extractable: true });
  const jwk = await exportJWK(privateKey);
  const kid = await calculateJwkThumbprint(jwk);
  return JSON.stringify({ ...jwk, kid, alg: algorithm, use: "sig" });
}

/**
 * base64url (unpadded) SHA-256 of the exact body bytes; a string is hashed as UTF-8.
 * @example
 * await bodySha256("{}"); // "RBNvo1WzZ4oRRq0W9-hknpT7T8If536DEMBg9hyq_4o"
 */
export async function bodySha256(body: string | Uint8Array): Promise<string> {
  const bytes = typeof body === "string" ? new TextEncoder().encode(body) : body;
  const digest = await crypto.subtle.digest("SHA-256", bytes);
  return base64url.encode(new Uint8Array(digest));
}

export interface SignDeliveryInput {
  key: SigningKey;
  /** Who signs: the agent's origin (its card URL's origin). */
  issuer: string;
  /** The webhook URL exactly as it is fetched, so a signature cannot be replayed elsewhere. */
  audience: string;
  /** The stable event id: the `jti`, equal to the idempotency header. */
  eventId: string;
  taskId: string;
  /** The exact body sent. */
  body: string | Uint8Array;
  /** Epoch ms; default now. */
  now?: number;
  /** Lifetime of the signature. Default 300 s: long enough for clock skew and a slow
   * network, short enough that a captured request is useless soon after. */
  ttlSeconds?: number;
}

/**
 * Signs one delivery: a compact JWT (header `alg`, `kid`, `typ: a2a-push+jwt`) with `iss`,
 * `aud`, `iat`, `exp`, `jti` = eventId, `taskId` and `bodySha256`.
 * @example
 * const jwt = await signDelivery({ key, issuer: "https://agent.example.com",
 *   audience: config.url, eventId, taskId, body });
 */
export async function signDelivery(input: SignDeliveryInput): Promise<string> {
  const { key, ttlSeconds = 300 } = input;
  if (!(ttlSeconds > 0)) throw new Error("signDelivery: ttlSeconds must be positive");
  const iat = Math.floor((input.now ?? Date.now()) / 1000);
  const claims: DeliveryClaims = {
    taskId: input.taskId,
    bodySha256: await bodySha256(input.body),
  };
  return new SignJWT({
    ...claims,
    iss: input.issuer,
    aud: input.audience,
    iat,
    exp: iat + ttlSeconds,
    jti: input.eventId,
  })
    .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: SIGNATURE_JWT_TYPE })
    .sign(key.privateKey);
}

/**
 * The document for `/.well-known/jwks.json`: the public part of every key, signing key
 * first. Serve it with a short cache lifetime (`Cache-Control: max-age=300`) so rotations
 * propagate.
 * @example
 * return Response.json(publicJwks(keys), { headers: { "Cache-Control": "max-age=300" } });
 */
export function publicJwks(keys: readonly SigningKey[]): { keys: PublicSigningJwk[] } {
  return { keys: keys.map((k) => ({ ...k.publicJwk })) };
}
