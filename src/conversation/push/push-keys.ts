import {
  generateSigningKey,
  loadSigningKey,
  loadSigningKeys,
  type SigningKey,
} from "../../push/signing";

/** Name of the secret holding the private JWK (or JWK set) that signs deliveries. */
export const PUSH_KEYS_SECRET = "PUSH_SIGNING_KEYS";

let cached: { secret: string | undefined; keys: Promise<SigningKey[]> } | null = null;

/**
 * The keys that sign webhook deliveries, from the `PUSH_SIGNING_KEYS` secret (the first
 * signs, all are published). Without the secret an ephemeral key is made per isolate,
 * which only verifies where one isolate serves both the object and the JWKS, as under
 * `wrangler dev`; a deployed agent must set the secret.
 */
export function signingKeys(env: unknown): Promise<SigningKey[]> {
  const secret = (env as Record<string, unknown> | undefined)?.[PUSH_KEYS_SECRET];
  const value = typeof secret === "string" && secret.trim() !== "" ? secret : undefined;
  if (cached && cached.secret === value) return cached.keys;
  const keys = value
    ? loadSigningKeys(value)
    : generateSigningKey("ES256").then(async (jwk) => [await loadSigningKey(jwk)]);
  cached = { secret: value, keys };
  return keys;
}
