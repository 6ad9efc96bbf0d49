import { type AlgorithmEntry, algorithmEntry, MIN_RSA_BITS } from "./algorithms";
import { encodeBase64url } from "./base64url";
import { JoseError } from "./errors";

/** A JSON Web Key (RFC 7517); the members Edgelink reads, plus any others. */
export interface JWK {
  kty?: string;
  kid?: string;
  alg?: string;
  use?: string;
  key_ops?: string[];
  ext?: boolean;
  crv?: string;
  x?: string;
  y?: string;
  n?: string;
  e?: string;
  d?: string;
  [member: string]: unknown;
}

/** A JWK Set (RFC 7517 §5). */
export interface JSONWebKeySet {
  keys: JWK[];
}

/** The members that make up each key type's public key (RFC 7638 §3.2, in its order). */
const PUBLIC_MEMBERS: Record<string, readonly string[]> = {
  EC: ["crv", "kty", "x", "y"],
  OKP: ["crv", "kty", "x"],
  RSA: ["e", "kty", "n"],
};

/** The public members of `jwk`, checked to be present strings. */
function publicMembers(jwk: JWK): Record<string, string> {
  const names = typeof jwk.kty === "string" ? PUBLIC_MEMBERS[jwk.kty] : undefined;
  if (!names) throw new JoseError("ERR_JWK_INVALID", `unsupported key type kty=${jwk.kty}`);
  const out: Record<string, string> = {};
  for (const name of names) {
    const value = jwk[name];
    if (typeof value !== "string" || value === "") {
      throw new JoseError("ERR_JWK_INVALID", `the ${jwk.kty} key has no "${name}"`);
    }
    out[name] = value;
  }
  return out;
}

/**
 * The RFC 7638 thumbprint (SHA-256, base64url) of a key's public members: the same for a
 * private key and its public half.
 * @example
 * const kid = await jwkThumbprint({ kty: "OKP", crv: "Ed25519", x: "11qY…" });
 */
export async function jwkThumbprint(jwk: JWK): Promise<string> {
  // publicMembers lists members in lexicographic order, so stringify is the canonical form.
  const canonical = JSON.stringify(publicMembers(jwk));
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(canonical));
  return encodeBase64url(new Uint8Array(digest));
}

/** Throws unless `jwk` is a key of the type (and curve) `alg` is defined for. */
export function checkKeyFits(jwk: JWK, alg: string, entry: AlgorithmEntry): void {
  if (jwk.kty !== entry.kty || (entry.crv !== undefined && jwk.crv !== entry.crv)) {
    throw new JoseError(
      "ERR_JWK_INVALID",
      `a ${jwk.kty}${jwk.crv ? ` ${jwk.crv}` : ""} key cannot be used with ${alg}`,
    );
  }
}

/**
 * Imports the public key of `jwk` for verifying `alg`. Only the public members are
 * handed to WebCrypto, so a private JWK given by mistake verifies and nothing else.
 * @throws JoseError ERR_JWK_INVALID when the key does not fit `alg` or is malformed.
 */
export async function importPublicJwk(jwk: JWK, alg: string): Promise<CryptoKey> {
  const entry = algorithmEntry(alg);
  if (!entry) throw new JoseError("ERR_JOSE_ALG_NOT_ALLOWED", `unsupported algorithm ${alg}`);
  checkKeyFits(jwk, alg, entry);
  return importChecked({ ...publicMembers(jwk), kty: entry.kty }, entry, ["verify"]);
}

/** Imports a private JWK (its public members and `d`) for signing with `alg`. */
export async function importPrivateJwk(jwk: JWK, alg: string): Promise<CryptoKey> {
  const entry = algorithmEntry(alg);
  if (!entry) throw new JoseError("ERR_JOSE_ALG_NOT_ALLOWED", `unsupported algorithm ${alg}`);
  checkKeyFits(jwk, alg, entry);
  if (typeof jwk.d !== "string") throw new JoseError("ERR_JWK_INVALID", 'the JWK has no "d"');
  return importChecked({ ...publicMembers(jwk), kty: entry.kty, d: jwk.d }, entry, ["sign"]);
}

async function importChecked(
  material: JsonWebKey,
  entry: AlgorithmEntry,
  usages: string[],
): Promise<CryptoKey> {
  let key: CryptoKey;
  try {
    key = await crypto.subtle.importKey("jwk", material, entry.importParams, false, usages);
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    throw new JoseError("ERR_JWK_INVALID", `the key could not be imported (${why})`);
  }
  const bits = (key.algorithm as { modulusLength?: unknown }).modulusLength;
  if (entry.kty === "RSA" && !(typeof bits === "number" && bits >= MIN_RSA_BITS)) {
    throw new JoseError("ERR_JWK_INVALID", `RSA keys must have at least ${MIN_RSA_BITS} bits`);
  }
  return key;
}

/** The JWK of a key (public or extractable private), without `key_ops` and `ext`. */
export async function exportJwk(key: CryptoKey): Promise<JWK> {
  const exported = (await crypto.subtle.exportKey("jwk", key)) as JsonWebKey;
  const { key_ops: _ops, ext: _ext, ...jwk } = exported;
  return jwk as JWK;
}

/** A new extractable key pair for ES256 (P-256) or EdDSA (Ed25519). */
export async function generateKeyPair(alg: "ES256" | "EdDSA"): Promise<CryptoKeyPair> {
  const params = alg === "ES256" ? { name: "ECDSA", namedCurve: "P-256" } : { name: "Ed25519" };
  return (await crypto.subtle.generateKey(params, true, ["sign", "verify"])) as CryptoKeyPair;
}
