import { calculateJwkThumbprint, importJWK, type JWK } from "jose";

/**
 * Private signing keys from a Worker secret, for the two things an agent signs: webhook
 * deliveries (`PUSH_SIGNING_KEYS`) and its card (`CARD_SIGNING_KEYS`). One loader, so both
 * secrets take the same shapes (one private JWK, a JSON array, or a JWK Set) and refuse
 * the same mistakes. Messages name the secret and the key's position, never key material.
 */

export type SigningAlgorithm = "ES256" | "EdDSA";

/** The public half of a signing key, as a JWKS publishes it. */
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

/** Which algorithm a JWK is for; `Ed25519` (RFC 9864's name) is published as `EdDSA`. */
function algorithmOf(jwk: JWK, where: string): SigningAlgorithm {
  if (jwk.kty === "EC" && jwk.crv === "P-256" && (!jwk.alg || jwk.alg === "ES256")) return "ES256";
  if (
    jwk.kty === "OKP" &&
    jwk.crv === "Ed25519" &&
    (!jwk.alg || jwk.alg === "EdDSA" || jwk.alg === "Ed25519")
  ) {
    return "EdDSA";
  }
  throw new Error(
    `${where} is not an ES256 (EC P-256) or EdDSA (OKP Ed25519) key (kty=${jwk.kty} crv=${jwk.crv} alg=${jwk.alg})`,
  );
}

/**
 * One private JWK. A missing `kid` becomes the key's RFC 7638 thumbprint, stable across
 * deploys. `where` names it in errors ("push signing key", "card signing keys: key 1").
 */
export async function loadPrivateKey(value: unknown, where: string): Promise<SigningKey> {
  if (!value || typeof value !== "object" || Array.isArray(value)) {
    throw new Error(`${where} is not a JWK object`);
  }
  const jwk = value as JWK;
  const alg = algorithmOf(jwk, where);
  if (typeof jwk.d !== "string") {
    throw new Error(`${where} has no private part ("d"); store the private key`);
  }
  if (jwk.use !== undefined && jwk.use !== "sig") {
    throw new Error(`${where} is for use "${jwk.use}", not "sig"`);
  }
  const publicMembers: JWK = { kty: jwk.kty, crv: jwk.crv, x: jwk.x };
  if (jwk.y !== undefined) publicMembers.y = jwk.y;
  let kid = typeof jwk.kid === "string" ? jwk.kid : "";
  let privateKey: CryptoKey;
  try {
    kid ||= await calculateJwkThumbprint(publicMembers);
    const imported = await importJWK({ ...jwk, alg }, alg);
    // importJWK answers bytes for a symmetric key, which algorithmOf already refused.
    if (!(imported instanceof CryptoKey)) throw new Error("not an asymmetric key");
    privateKey = imported;
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    throw new Error(`${where} could not be imported (${why})`);
  }
  const publicJwk = { ...publicMembers, kid, alg, use: "sig" } as PublicSigningJwk;
  return { kid, alg, privateKey, publicJwk };
}

/**
 * A secret's keys: its JSON text or the parsed value (one JWK, an array, or
 * `{"keys": [...]}`), in order. `label` names the secret in errors.
 * @throws Error on bad JSON, an empty set, a bad key, or two keys with one `kid`.
 */
export async function loadPrivateKeys(input: unknown, label: string): Promise<SigningKey[]> {
  let value = input;
  if (typeof input === "string") {
    try {
      value = JSON.parse(input);
    } catch {
      throw new Error(`${label}: the secret is not valid JSON`);
    }
  }
  const list: unknown[] = Array.isArray(value)
    ? value
    : value && typeof value === "object" && Array.isArray((value as { keys?: unknown }).keys)
      ? (value as { keys: unknown[] }).keys
      : [value];
  if (list.length === 0) throw new Error(`${label}: the set is empty`);
  const keys = await Promise.all(list.map((jwk, i) => loadPrivateKey(jwk, `${label}: key ${i}`)));
  const seen = new Set<string>();
  for (const key of keys) {
    if (seen.has(key.kid)) throw new Error(`${label}: kid ${key.kid} appears twice`);
    seen.add(key.kid);
  }
  return keys;
}
