/** A claim as its duplicates spell it: lower-cased, whitespace collapsed, trimmed. */
export function normalizeClaim(claim: string): string {
  return claim.toLowerCase().replace(/\s+/gu, " ").trim();
}

/**
 * Hex SHA-256 of the normalized claim: two claims differing only in case or spacing have
 * one hash, and a memory stores one fact per hash.
 * @example
 * await claimHash("Likes  Tea") === await claimHash("likes tea"); // true
 */
export async function claimHash(claim: string): Promise<string> {
  const bytes = new TextEncoder().encode(normalizeClaim(claim));
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  let hex = "";
  for (const byte of digest) hex += byte.toString(16).padStart(2, "0");
  return hex;
}
