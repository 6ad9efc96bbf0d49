import { A2AError } from "../models/errors";
import { checkDepth } from "../models/limits";

/** Media types a JSON endpoint accepts (§9.1 application/json, §11 application/a2a+json). */
export const JSON_MEDIA_TYPES: readonly string[] = ["application/json", "application/a2a+json"];

/** Refuses a body that is not declared as JSON: 415, before a byte of it is read. */
export function requireJsonContentType(request: Request): void {
  const header = request.headers.get("Content-Type");
  const type = header?.split(";")[0]?.trim().toLowerCase() ?? "";
  if (JSON_MEDIA_TYPES.includes(type)) return;
  throw new A2AError(
    "UnsupportedMediaType",
    `Content-Type ${header === null ? "is missing" : `${header} is not supported`}; send ${JSON_MEDIA_TYPES.join(" or ")}`,
    { contentType: header ?? "" },
  );
}

/**
 * Reads and parses a JSON body, refusing anything over `limit` bytes before parsing:
 * by Content-Length when the client sent one, and by counting as it streams otherwise.
 */
export async function readJson(request: Request, limit: number): Promise<unknown> {
  requireJsonContentType(request);
  const tooLarge = () =>
    new A2AError("PayloadTooLarge", `Request body exceeds the limit of ${limit} bytes`, {
      limitBytes: String(limit),
    });
  const header = request.headers.get("Content-Length");
  const declared = header !== null && /^\d+$/.test(header) ? Number(header) : null;
  if (declared !== null && declared > limit) throw tooLarge();
  // With a valid declared length the runtime holds the body to it: one read is enough.
  if (declared !== null) return parse(await request.text());
  if (!request.body) return parse("");
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel();
      throw tooLarge();
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return parse(new TextDecoder().decode(bytes));
}

function parse(text: string): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    const detail = error instanceof Error ? error.message : "malformed JSON";
    throw new A2AError("JSONParse", `Invalid JSON payload: ${detail}`);
  }
  checkDepth(value, "");
  return value;
}
