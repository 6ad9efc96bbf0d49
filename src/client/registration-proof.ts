import { SignJWT } from "jose";
import { type CardKeysInput, loadCardSigningKeys } from "./card-keys";

/** The `typ` of a registration proof: no other JWT signed with a card key passes for one. */
export const REGISTRATION_PROOF_TYPE = "registration+jwt";

/** What a registration proof is for. */
export interface RegistrationProofInput {
  /** The registry's origin (or any URL on it): the proof's audience. */
  registry: string | URL;
  /** The registrant's subject as the registry authenticates it (its API key's subject). */
  subject: string;
  /** The registrant's tenant in the registry, when it has one. */
  tenant?: string;
  /** The agent's URL, as its card names it (its first interface's URL). */
  url: string;
  /** Lifetime; at most 600 s. Default 300 s. */
  ttlSeconds?: number;
}

/**
 * Makes the proof that registers a signed agent card with an `edgelink/registry`: a short
 * JWT signed with the agent's first card signing key, naming the registry, the registrant
 * and the agent's URL. A registry lists a signed card only with such a proof, and a proof
 * takes the URL back from a registrant who holds it without one.
 * @example
 * const proof = await registrationProof(env.CARD_SIGNING_KEYS, {
 *   registry: "https://registry.example.com",
 *   subject: "trips-team",
 *   url: "https://trips.example.com/",
 * });
 * await registry.register(card, { proof });
 */
export async function registrationProof(
  keys: CardKeysInput,
  input: RegistrationProofInput,
): Promise<string> {
  const ttl = input.ttlSeconds ?? 300;
  if (!Number.isInteger(ttl) || ttl < 1 || ttl > 600) {
    throw new TypeError("registrationProof: ttlSeconds must be a whole number from 1 to 600");
  }
  if (!input.subject) throw new TypeError("registrationProof: subject is required");
  const [key] = await loadCardSigningKeys(keys);
  if (!key) throw new TypeError("registrationProof: no signing key");
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ url: input.url, ...(input.tenant ? { tenant: input.tenant } : {}) })
    .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: REGISTRATION_PROOF_TYPE })
    .setAudience(new URL(String(input.registry)).origin)
    .setSubject(input.subject)
    .setIssuedAt(now)
    .setExpirationTime(now + ttl)
    .sign(key.privateKey);
}
