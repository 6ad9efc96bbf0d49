import {
  base64url,
  calculateJwkThumbprint,
  exportJWK,
  generateKeyPair,
  importJWK,
  type JWK,
  SignJWT,
} from "jose";
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

export type SigningAlgorithm = "ES256" | "EdDSA";

/** The public half, as published in the JWKS. */
export interface PublicSigningJwk extends JWK {
  kty: "EC" | "OKP";
  kid: string;
  alg: SigningAlgorithm;
  use: "sig";
}

/** A loaded signing key. */
export interface SigningKey {
  readonly kid: string;
  readonly alg: SigningAlgorithm;
  readonly privateKey: CryptoKey;
  readonly publicJwk: PublicSigningJwk;
}

/** The claims of a delivery signature beyond the registered ones. */
export interface DeliveryClaims {
  /** The task the event belongs to. */
  taskId: string;
  /** base64url(SHA-256(body bytes)), unpadded. */
  bodySha256: string;
}

/** Which algorithm a JWK is for; `Ed25519` (RFC 9864's name) is published as `EdDSA`, the
 * name every JWT library knows. */
function algorithmOf(jwk: JWK): SigningAlgorithm {
  if (jwk.kty === "EC" && jwk.crv === "P-256" && (!jwk.alg || jwk.alg === "ES256")) return "ES256";
  if (
    jwk.kty === "OKP" &&
    jwk.crv === "Ed25519" &&
    (!jwk.alg || jwk.alg === "EdDSA" || jwk.alg === "Ed25519")
  ) {
    return "EdDSA";
  }
  throw new Error(
    `push signing key: only ES256 (EC P-256) and EdDSA (OKP Ed25519) keys are supported, got kty=${jwk.kty} crv=${jwk.crv} alg=${jwk.alg}`,
  );
}

/** The public members of an EC or OKP JWK, with kid, alg and use. */
function publicPart(jwk: JWK, kid: string, alg: SigningAlgorithm): PublicSigningJwk {
  const out: PublicSigningJwk = {
    kty: jwk.kty as "EC" | "OKP",
    crv: jwk.crv,
    x: jwk.x,
    kid,
    alg,
    use: "sig",
  };
  if (jwk.y !== undefined) out.y = jwk.y;
  return out;
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
  let jwk: JWK;
  try {
    jwk = typeof jwkJson === "string" ? (JSON.parse(jwkJson) as JWK) : jwkJson;
  } catch {
    throw new Error("push signing key: the secret is not valid JSON");
  }
  if (typeof jwk !== "object" || jwk === null || Array.isArray(jwk)) {
    throw new Error("push signing key: expected a JWK object");
  }
  const alg = algorithmOf(jwk);
  if (typeof jwk.d !== "string") {
    throw new Error('push signing key: the JWK has no private part ("d"); store the private key');
  }
  if (jwk.use !== undefined && jwk.use !== "sig") {
    throw new Error(`push signing key: the JWK is for use "${jwk.use}", not "sig"`);
  }
  let kid = jwk.kid ?? "";
  let privateKey: CryptoKey;
  try {
    kid ||= await calculateJwkThumbprint(jwk);
    const imported = await importJWK(jwk, alg);
    // importJWK answers bytes for a symmetric key, which algorithmOf already refused.
    if (imported instanceof Uint8Array) throw new Error("not an asymmetric key");
    privateKey = imported;
  } catch (error) {
    const which = kid ? ` ${kid}` : "";
    throw new Error(`push signing key${which}: the key could not be imported (${describe(error)})`);
  }
  return { kid, alg, privateKey, publicJwk: publicPart(jwk, kid, alg) };
}

/**
 * Loads a secret holding one key, an array of keys or a JWK Set; the first signs.
 * @throws Error on an empty set, a bad key or two keys with the same kid.
 * @example
 * const keys = await loadSigningKeys(env.PUSH_SIGNING_KEYS); // sign with keys[0]
 */
export async function loadSigningKeys(secret: string): Promise<SigningKey[]> {
  let value: unknown;
  try {
    value = JSON.parse(secret);
  } catch {
    throw new Error("push signing keys: the secret is not valid JSON");
  }
  const list: unknown[] = Array.isArray(value)
    ? value
    : value && typeof value === "object" && Array.isArray((value as { keys?: unknown }).keys)
      ? (value as { keys: unknown[] }).keys
      : [value];
  if (!list.length) throw new Error("push signing keys: the set is empty");
  const keys = await Promise.all(list.map((jwk) => loadSigningKey(jwk as JWK)));
  const seen = new Set<string>();
  for (const key of keys) {
    if (seen.has(key.kid)) throw new Error(`push signing keys: kid ${key.kid} appears twice`);
    seen.add(key.kid);
  }
  return keys;
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

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
