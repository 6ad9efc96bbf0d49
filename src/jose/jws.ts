import { type AlgorithmEntry, algorithmEntry } from "./algorithms";
import { decodeBase64url, encodeBase64url } from "./base64url";
import { JoseError } from "./errors";

/** A JWS protected header; `alg` is always present once parsed. */
export interface JwsHeader {
  alg: string;
  kid?: string;
  typ?: string;
  [member: string]: unknown;
}

/**
 * Finds the keys that may verify a token: those whose `kid` matches the header's (every
 * fitting key when the header names none) and whose type fits `alg`.
 * @throws JoseError ERR_JWKS_NO_MATCHING_KEY when none fits.
 */
export type KeyResolver = (header: JwsHeader) => Promise<readonly CryptoKey[]>;

/** Tokens longer than this are refused before any decoding (bearer tokens of large
 * identity providers stay under 8 KiB). */
export const MAX_TOKEN_LENGTH = 16_384;

/** Signs `payload` as a compact JWS with `key` (whose algorithm is `header.alg`). */
export async function signCompact(
  header: JwsHeader,
  payload: Uint8Array,
  key: CryptoKey,
): Promise<string> {
  const entry = algorithmEntry(header.alg);
  if (!entry) throw new JoseError("ERR_JOSE_ALG_NOT_ALLOWED", `cannot sign with ${header.alg}`);
  const input = `${encodeBase64url(JSON.stringify(header))}.${encodeBase64url(payload)}`;
  const signature = await crypto.subtle.sign(
    entry.signParams,
    key,
    new TextEncoder().encode(input),
  );
  return `${input}.${encodeBase64url(new Uint8Array(signature))}`;
}

/** The decoded parts of a compact JWS whose signature has been checked. */
export interface VerifiedJws {
  header: JwsHeader;
  payload: Uint8Array;
}

/**
 * Verifies a compact JWS (RFC 7515 §7.1): three segments of unpadded base64url, a JSON
 * object header with an `alg` from `algorithms` (never `none`, never one we do not know),
 * no `crit` (we understand no extension) and no unencoded payload (`b64: false`), then a
 * signature by one of the keys `keys` resolves.
 * @throws JoseError naming the first rule the token breaks.
 */
export async function verifyCompact(
  token: string,
  keys: KeyResolver,
  algorithms: readonly string[],
): Promise<VerifiedJws> {
  if (token.length > MAX_TOKEN_LENGTH) {
    throw new JoseError("ERR_JWS_INVALID", `the token is longer than ${MAX_TOKEN_LENGTH}`);
  }
  const parts = token.split(".");
  if (parts.length !== 3) {
    throw new JoseError("ERR_JWS_INVALID", "a compact JWS has three segments");
  }
  const [encodedHeader = "", encodedPayload = "", encodedSignature = ""] = parts;
  const header = parseHeader(decodeBase64url(encodedHeader, "the header"));
  const entry = allowedEntry(header.alg, algorithms);
  const payload = decodeBase64url(encodedPayload, "the payload");
  const signature = decodeBase64url(encodedSignature, "the signature");
  const input = new TextEncoder().encode(`${encodedHeader}.${encodedPayload}`);

  const candidates = await keys(header);
  if (entry.signatureBytes === undefined || signature.length === entry.signatureBytes) {
    for (const key of candidates) {
      // A runtime that throws on a malformed signature instead of answering false still
      // refuses it as a bad signature, never as an error of ours.
      const valid = await crypto.subtle
        .verify(entry.signParams, key, signature, input)
        .catch(() => false);
      if (valid) return { header, payload };
    }
  }
  throw new JoseError("ERR_JWS_SIGNATURE_VERIFICATION_FAILED", "signature verification failed");
}

function parseHeader(bytes: Uint8Array): JwsHeader {
  let header: unknown;
  try {
    header = JSON.parse(new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes));
  } catch {
    throw new JoseError("ERR_JWS_INVALID", "the header is not JSON");
  }
  if (typeof header !== "object" || header === null || Array.isArray(header)) {
    throw new JoseError("ERR_JWS_INVALID", "the header is not a JSON object");
  }
  const h = header as Record<string, unknown>;
  if (typeof h.alg !== "string") {
    throw new JoseError("ERR_JOSE_ALG_NOT_ALLOWED", 'the header has no "alg"');
  }
  if (h.crit !== undefined) {
    throw new JoseError("ERR_JOSE_NOT_SUPPORTED", 'no "crit" header extension is understood');
  }
  if (h.b64 !== undefined && h.b64 !== true) {
    throw new JoseError("ERR_JOSE_NOT_SUPPORTED", "unencoded payloads (b64) are not supported");
  }
  if (h.kid !== undefined && typeof h.kid !== "string") {
    throw new JoseError("ERR_JWS_INVALID", 'the header\'s "kid" is not a string');
  }
  return h as JwsHeader;
}

function allowedEntry(alg: string, algorithms: readonly string[]): AlgorithmEntry {
  const entry = algorithmEntry(alg);
  if (!entry || !algorithms.includes(alg)) {
    throw new JoseError("ERR_JOSE_ALG_NOT_ALLOWED", `"alg" ${JSON.stringify(alg)} is not allowed`);
  }
  return entry;
}
