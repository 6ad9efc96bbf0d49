/**
 * The JWS algorithms Edgelink verifies (RFC 7518 §3, RFC 8037, RFC 9864's `Ed25519`), each
 * with the one key type and curve it may be used with and its WebCrypto parameters.
 * Symmetric (HS*) algorithms are left out on purpose: a key set is public, so an HMAC
 * "key" from it would let anyone sign.
 */
export interface AlgorithmEntry {
  kty: "RSA" | "EC" | "OKP";
  /** The curve a key must be on (EC, OKP). */
  crv?: string;
  /** For `importKey`. */
  importParams: SubtleCryptoImportKeyAlgorithm;
  /** For `sign`/`verify`. */
  signParams: SubtleCryptoSignAlgorithm;
  /** ECDSA signatures are r‖s of a fixed size (RFC 7518 §3.4). */
  signatureBytes?: number;
}

function rsa(bits: number, pss: boolean): AlgorithmEntry {
  const name = pss ? "RSA-PSS" : "RSASSA-PKCS1-v1_5";
  const hash = `SHA-${bits}`;
  return {
    kty: "RSA",
    importParams: { name, hash },
    // RFC 7518 §3.5: the salt is as long as the hash.
    signParams: pss ? { name, saltLength: bits / 8 } : { name },
  };
}

function ecdsa(crv: string, bits: number, signatureBytes: number): AlgorithmEntry {
  return {
    kty: "EC",
    crv,
    importParams: { name: "ECDSA", namedCurve: crv },
    signParams: { name: "ECDSA", hash: `SHA-${bits}` },
    signatureBytes,
  };
}

const ED25519: AlgorithmEntry = {
  kty: "OKP",
  crv: "Ed25519",
  importParams: { name: "Ed25519" },
  signParams: { name: "Ed25519" },
};

const ALGORITHMS: Record<string, AlgorithmEntry> = {
  RS256: rsa(256, false),
  RS384: rsa(384, false),
  RS512: rsa(512, false),
  PS256: rsa(256, true),
  PS384: rsa(384, true),
  PS512: rsa(512, true),
  ES256: ecdsa("P-256", 256, 64),
  ES384: ecdsa("P-384", 384, 96),
  ES512: ecdsa("P-521", 512, 132),
  EdDSA: ED25519,
  Ed25519: ED25519,
};

/** Every algorithm name {@link algorithmEntry} knows. */
export const JWS_ALGORITHMS: readonly string[] = Object.keys(ALGORITHMS);

/** RSA keys shorter than this are refused (RFC 7518 §3.3). */
export const MIN_RSA_BITS = 2048;

/** The entry for `alg`, or undefined for `none`, HS*, unknown names and non-strings. */
export function algorithmEntry(alg: unknown): AlgorithmEntry | undefined {
  return typeof alg === "string" && Object.hasOwn(ALGORITHMS, alg) ? ALGORITHMS[alg] : undefined;
}
