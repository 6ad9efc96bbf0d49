import type { JWK } from "jose";
import {
  loadPrivateKeys,
  type PublicSigningJwk,
  type SigningAlgorithm,
  type SigningKey,
} from "../jwks/private-keys";

/**
 * Private signing keys for agent cards (and the registration proofs made with them), in
 * the shape the push signing keys take: a Worker secret holding one private JWK, a JSON
 * array of them, or a JWK Set `{"keys": [...]}`. ES256 (EC P-256) and EdDSA (OKP Ed25519),
 * the two every JOSE library verifies; `generateSigningKey()` makes either. The same
 * loader reads both secrets.
 */

export type CardSigningAlgorithm = SigningAlgorithm;

/** The public half of a card key, as a JWKS publishes it. */
export type PublicCardJwk = PublicSigningJwk;

/** A loaded card signing key. */
export type CardSigningKey = SigningKey;

/** A secret's value, or the keys themselves. */
export type CardKeysInput = string | JWK | JWK[] | { keys: JWK[] };

/**
 * Loads card signing keys from a secret's JSON (one JWK, an array, or `{"keys": [...]}`)
 * or from the parsed value. Every key signs, so a card carries one signature per key.
 * @throws Error naming the key at fault (never its material): bad JSON, an empty set, a
 * public-only or unsupported key, two keys with one `kid`.
 * @example
 * const keys = await loadCardSigningKeys(env.CARD_SIGNING_KEYS);
 */
export function loadCardSigningKeys(input: CardKeysInput): Promise<CardSigningKey[]> {
  return loadPrivateKeys(input, "card signing keys");
}
