import { A2AError } from "../models/errors";

/**
 * Reads and parses a JSON body, refusing anything over `limit` bytes before parsing:
 * by Content-Length when the client sent one, and by counting as it streams otherwise.
 */
export async function readJson(request: Request, limit: number): Promise<unknown> {
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
  try {
    return JSON.parse(text);
  } catch (error) {
    const detail = error instanceof Error ? error.message : "malformed JSON";
    throw new A2AError("JSONParse", `Invalid JSON payload: ${detail}`);
  }
}
