import { calculateJwkThumbprint, importJWK, type JWK } from "jose";

/**
 * Private signing keys for agent cards (and the registration proofs made with them), in
 * the shape the push signing keys take: a Worker secret holding one private JWK, a JSON
 * array of them, or a JWK Set `{"keys": [...]}`. ES256 (EC P-256) and EdDSA (OKP Ed25519),
 * the two every JOSE library verifies; `generateSigningKey()` makes either.
 */

export type CardSigningAlgorithm = "ES256" | "EdDSA";

/** The public half of a card key, as a JWKS publishes it. */
export interface PublicCardJwk extends JWK {
  kty: "EC" | "OKP";
  kid: string;
  alg: CardSigningAlgorithm;
  use: "sig";
}

/** A loaded card signing key. */
export interface CardSigningKey {
  readonly kid: string;
  readonly alg: CardSigningAlgorithm;
  readonly privateKey: CryptoKey;
  readonly publicJwk: PublicCardJwk;
}

/** A secret's value, or the keys themselves. */
export type CardKeysInput = string | JWK | JWK[] | { keys: JWK[] };

const LABEL = "card signing keys";

function algorithmOf(jwk: JWK, at: string): CardSigningAlgorithm {
  if (jwk.kty === "EC" && jwk.crv === "P-256" && (!jwk.alg || jwk.alg === "ES256")) return "ES256";
  if (
    jwk.kty === "OKP" &&
    jwk.crv === "Ed25519" &&
    (!jwk.alg || jwk.alg === "EdDSA" || jwk.alg === "Ed25519")
  ) {
    return "EdDSA";
  }
  throw new Error(
    `${LABEL}: ${at} is not an ES256 (EC P-256) or EdDSA (OKP Ed25519) key (kty=${jwk.kty} crv=${jwk.crv} alg=${jwk.alg})`,
  );
}

async function loadOne(value: unknown, at: string): Promise<CardSigningKey> {
  if (!value || typeof value !== "object" || Array.isArray(value)) {
    throw new Error(`${LABEL}: ${at} is not a JWK object`);
  }
  const jwk = value as JWK;
  const alg = algorithmOf(jwk, at);
  if (typeof jwk.d !== "string") {
    throw new Error(`${LABEL}: ${at} has no private part ("d"); store the private key`);
  }
  if (jwk.use !== undefined && jwk.use !== "sig") {
    throw new Error(`${LABEL}: ${at} is for use "${jwk.use}", not "sig"`);
  }
  const publicMembers: JWK = { kty: jwk.kty, crv: jwk.crv, x: jwk.x };
  if (jwk.y !== undefined) publicMembers.y = jwk.y;
  let kid = typeof jwk.kid === "string" ? jwk.kid : "";
  let privateKey: CryptoKey;
  try {
    // A key without `kid` is named by its RFC 7638 thumbprint: stable across deploys.
    kid ||= await calculateJwkThumbprint(publicMembers);
    const imported = await importJWK({ ...jwk, alg }, alg);
    if (!(imported instanceof CryptoKey)) throw new Error("not an asymmetric key");
    privateKey = imported;
  } catch (error) {
    // The message never echoes key material.
    const why = error instanceof Error ? error.message : String(error);
    throw new Error(`${LABEL}: ${at} could not be imported (${why})`);
  }
  const publicJwk = { ...publicMembers, kid, alg, use: "sig" } as PublicCardJwk;
  return { kid, alg, privateKey, publicJwk };
}

/**
 * Loads card signing keys from a secret's JSON (one JWK, an array, or `{"keys": [...]}`)
 * or from the parsed value. Every key signs, so a card carries one signature per key.
 * @throws Error naming the key at fault (never its material): bad JSON, an empty set, a
 * public-only or unsupported key, two keys with one `kid`.
 * @example
 * const keys = await loadCardSigningKeys(env.CARD_SIGNING_KEYS);
 */
export async function loadCardSigningKeys(input: CardKeysInput): Promise<CardSigningKey[]> {
  let value: unknown = input;
  if (typeof input === "string") {
    try {
      value = JSON.parse(input);
    } catch {
      throw new Error(`${LABEL}: the secret is not valid JSON`);
    }
  }
  const list: unknown[] = Array.isArray(value)
    ? value
    : value && typeof value === "object" && Array.isArray((value as { keys?: unknown }).keys)
      ? (value as { keys: unknown[] }).keys
      : [value];
  if (list.length === 0) throw new Error(`${LABEL}: the set is empty`);
  const keys = await Promise.all(list.map((jwk, i) => loadOne(jwk, `key ${i}`)));
  const seen = new Set<string>();
  for (const key of keys) {
    if (seen.has(key.kid)) throw new Error(`${LABEL}: kid ${key.kid} appears twice`);
    seen.add(key.kid);
  }
  return keys;
}
