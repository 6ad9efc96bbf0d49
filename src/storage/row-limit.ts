import { A2AError } from "../protocol/errors";

/**
 * Largest value one SQLite row may hold here. Durable Object rows are capped at 2 MB;
 * the rest is left for the row's other columns.
 */
export const MAX_ROW_BYTES = 2_000_000 - 64 * 1024;

/**
 * Characters per chunk row, for values kept across several rows. A UTF-8 character takes
 * at most 3 bytes here (JSON escapes astral pairs as one 4-byte pair), so 256 Ki
 * characters stay under 1 MB whatever the text.
 */
export const CHUNK_CHARS = 256 * 1024;

const encoder = new TextEncoder();

/**
 * Refuses a value too big for one row, with an error naming what it was, instead of
 * letting SQLite fail the transaction with SQLITE_TOOBIG. `texts` are the row's JSON values;
 * a string of n UTF-16 units takes at most 3n UTF-8 bytes, so short ones are never encoded.
 */
export function checkRowBytes(what: string, ...texts: (string | null)[]): void {
  let length = 0;
  for (const text of texts) length += text?.length ?? 0;
  if (length * 3 <= MAX_ROW_BYTES) return;
  let bytes = 0;
  for (const text of texts) bytes += text ? encoder.encode(text).byteLength : 0;
  if (bytes <= MAX_ROW_BYTES) return;
  throw new A2AError(
    "InvalidParams",
    `The ${what} is ${bytes} bytes, over the ${MAX_ROW_BYTES}-byte limit of one stored row; send it in smaller pieces`,
    { what, bytes: String(bytes), limitBytes: String(MAX_ROW_BYTES) },
  );
}
