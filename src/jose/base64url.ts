import { JoseError } from "./errors";

/** Unpadded base64url of bytes, or of a string's UTF-8 (RFC 7515 §2). */
export function encodeBase64url(input: Uint8Array | string): string {
  const bytes = typeof input === "string" ? new TextEncoder().encode(input) : input;
  let binary = "";
  // Chunked: String.fromCharCode(...bytes) overflows the stack on large inputs.
  for (let i = 0; i < bytes.length; i += 0x8000) {
    binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(binary).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

/** A length of 1 mod 4 cannot come from any byte string. */
const BASE64URL = /^[A-Za-z0-9_-]*$/;

/**
 * Decodes unpadded base64url strictly: padding, `+`, `/`, whitespace, an impossible length
 * or non-zero trailing bits are refused, so each byte string has exactly one encoding and a
 * token cannot be altered without touching its signed bytes.
 * @throws JoseError ERR_JWS_INVALID naming `what`.
 */
export function decodeBase64url(text: string, what: string): Uint8Array {
  if (!BASE64URL.test(text) || text.length % 4 === 1) {
    throw new JoseError("ERR_JWS_INVALID", `${what} is not unpadded base64url`);
  }
  const binary = atob(text.replaceAll("-", "+").replaceAll("_", "/"));
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  if (encodeBase64url(bytes) !== text) {
    throw new JoseError("ERR_JWS_INVALID", `${what} is not canonical base64url`);
  }
  return bytes;
}
