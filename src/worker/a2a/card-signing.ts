import { FlattenedSign } from "jose";
import {
  type CardSigningKey,
  loadCardSigningKeys,
  type PublicCardJwk,
} from "../../client/card-keys";
import {
  type AgentCardSignature,
  CARD_SIGNATURE_TYPE,
  servedSignedForm,
} from "../../protocol/card/card-signature";
import { canonicalJsonBytes } from "../../protocol/jcs";
import type { JsonObject } from "../../protocol/json";

/**
 * Agent card signing (A2A §8.4). Off until the operator stores keys in the
 * `CARD_SIGNING_KEYS` secret (`npx wrangler secret put CARD_SIGNING_KEYS`, with the output
 * of `generateSigningKey()`; one key, an array or a JWK Set). Then every key signs the v1
 * card, so during a rotation the card carries one signature per key and a client that
 * knows either key verifies it; the public keys are served at `/.well-known/jwks.json`.
 */

/** Name of the secret holding the card signing keys. */
export const CARD_KEYS_SECRET = "CARD_SIGNING_KEYS";

/**
 * Name of the variable listing the origins (comma-separated) a card may be signed for
 * when the card has no configured `url`. Without a configured URL the card names the
 * request's `Host`, which the caller chooses: signing it would vouch for any origin.
 */
export const CARD_ORIGINS_VAR = "CARD_SIGNING_ORIGINS";

let origins: { value: string; set: ReadonlySet<string> } | null = null;

/**
 * The origins a card may be signed for, from `CARD_SIGNING_ORIGINS` (`https://a.example,
 * https://b.example`); an entry that is not a URL matches nothing.
 */
export function cardSigningOrigins(env: unknown): ReadonlySet<string> {
  const value = (env as Record<string, unknown> | undefined)?.[CARD_ORIGINS_VAR];
  if (typeof value !== "string" || value.trim() === "") return new Set();
  if (origins?.value === value) return origins.set;
  const set = new Set<string>();
  for (const entry of value.split(/[\s,]+/)) {
    if (URL.canParse(entry)) set.add(new URL(entry).origin);
  }
  origins = { value, set };
  return set;
}

let cached: { secret: string; keys: Promise<CardSigningKey[]> } | null = null;

/** The card signing keys the environment configures, or null when signing is off. */
export function cardSigningKeys(env: unknown): Promise<CardSigningKey[]> | null {
  const secret = (env as Record<string, unknown> | undefined)?.[CARD_KEYS_SECRET];
  if (typeof secret !== "string" || secret.trim() === "") return null;
  if (cached?.secret === secret) return cached.keys;
  const keys = loadCardSigningKeys(secret);
  cached = { secret, keys };
  // A bad secret is retried at the next request rather than cached as a failure.
  keys.catch(() => {
    if (cached?.keys === keys) cached = null;
  });
  return keys;
}

/**
 * Signs a card with every key: the card as served (`servedSignedForm`: no proto default,
 * no empty value) with a `signatures` list, one flattened JWS per key whose payload is the RFC 8785
 * canonical card and whose protected header names `alg`, `typ`, `kid` and `jku`.
 * @example
 * const signed = await signCard(cardToV1(card, features), keys, `${base}/.well-known/jwks.json`);
 */
export async function signCard(
  card: JsonObject,
  keys: readonly CardSigningKey[],
  jku?: string,
): Promise<JsonObject> {
  const served = servedSignedForm(card);
  const payload = canonicalJsonBytes(served);
  const signatures = await Promise.all(
    keys.map(async (key): Promise<AgentCardSignature> => {
      const jws = await new FlattenedSign(payload)
        .setProtectedHeader({
          alg: key.alg,
          typ: CARD_SIGNATURE_TYPE,
          kid: key.kid,
          ...(jku ? { jku } : {}),
        })
        .sign(key.privateKey);
      // The payload is the card itself: detached, as A2A's signature object has no slot for it.
      return { protected: jws.protected ?? "", signature: jws.signature };
    }),
  );
  return { ...served, signatures: signatures as unknown as JsonObject[] };
}

/** Signed cards an isolate keeps, per agent, per base URL (the Host is the caller's). */
const MAX_CACHED_ORIGINS = 32;
const signedCards = new WeakMap<object, Map<string, Promise<string>>>();
/** The key set each cached card was signed with. */
const keysOf = new WeakMap<Promise<string>, Promise<CardSigningKey[]>>();

/**
 * The signed card's JSON for one agent at one base URL, signed once per isolate and key
 * set. The cache is bounded: a caller choosing Host headers cannot grow it.
 */
export function signedCardJson(
  agent: object,
  baseUrl: string,
  keys: Promise<CardSigningKey[]>,
  render: () => JsonObject,
  jku: string,
): Promise<string> {
  let perOrigin = signedCards.get(agent);
  if (!perOrigin) {
    perOrigin = new Map();
    signedCards.set(agent, perOrigin);
  }
  const key = `${baseUrl}\n${jku}`;
  const hit = perOrigin.get(key);
  // The key set is part of the entry: a new secret (a rotation) signs afresh.
  if (hit && keysOf.get(hit) === keys) return hit;
  const json = keys.then(async (loaded) => JSON.stringify(await signCard(render(), loaded, jku)));
  keysOf.set(json, keys);
  perOrigin.delete(key);
  perOrigin.set(key, json);
  // A failure is not kept: the next request tries again (and reports it again).
  json.catch(() => {
    if (perOrigin.get(key) === json) perOrigin.delete(key);
  });
  while (perOrigin.size > MAX_CACHED_ORIGINS) {
    const oldest = perOrigin.keys().next().value;
    if (oldest === undefined) break;
    perOrigin.delete(oldest);
  }
  return json;
}

/**
 * The JWKS an agent serves: its card keys and its push keys. A `kid` both sets use must
 * name the same public key (one key configured for both is published once); two different
 * keys under one `kid` would make verifiers pick the wrong one, so that is refused.
 * @throws Error naming the `kid` when the two sets collide.
 */
export function mergeJwks(
  cardKeys: readonly PublicCardJwk[],
  pushKeys: readonly { kid: string; kty: string; crv?: string; x?: string; y?: string }[],
): { keys: object[] } {
  const byKid = new Map<string, object>();
  const material = (k: { kty: string; crv?: string; x?: string; y?: string }) =>
    `${k.kty}|${k.crv ?? ""}|${k.x ?? ""}|${k.y ?? ""}`;
  const fingerprints = new Map<string, string>();
  for (const key of [...cardKeys, ...pushKeys]) {
    const seen = fingerprints.get(key.kid);
    if (seen === undefined) {
      fingerprints.set(key.kid, material(key));
      byKid.set(key.kid, { ...key });
    } else if (seen !== material(key)) {
      throw new Error(
        `signing keys: kid ${key.kid} names one key in ${CARD_KEYS_SECRET} and another in PUSH_SIGNING_KEYS; give them different kids`,
      );
    }
  }
  return { keys: [...byKid.values()] };
}
