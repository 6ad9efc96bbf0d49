import { A2AError } from "../protocol/errors";
import { checkDepth } from "../protocol/limits";

/** Media types a JSON endpoint accepts (§9.1 application/json, §11 application/a2a+json). */
export const JSON_MEDIA_TYPES: readonly string[] = ["application/json", "application/a2a+json"];

/** The 415 for a body not declared as JSON; null when it is. Reads no byte of the body. */
export function jsonMediaProblem(request: Request): A2AError | null {
  const header = request.headers.get("Content-Type");
  const type = header?.split(";")[0]?.trim().toLowerCase() ?? "";
  if (JSON_MEDIA_TYPES.includes(type)) return null;
  return new A2AError(
    "UnsupportedMediaType",
    `Content-Type ${header === null ? "is missing" : `${header} is not supported`}; send ${JSON_MEDIA_TYPES.join(" or ")}`,
    { contentType: header ?? "" },
  );
}

/** Refuses a body that is not declared as JSON: 415, before a byte of it is read. */
export function requireJsonContentType(request: Request): void {
  const problem = jsonMediaProblem(request);
  if (problem) throw problem;
}

/**
 * Parses a JSON body. Its size was checked before (Hono's `bodyLimit` on every route
 * that takes a body, answering 413), so this only reads and parses.
 */
export async function readJson(request: Request): Promise<unknown> {
  requireJsonContentType(request);
  return readJsonBody(request);
}

/** `readJson` for a route whose guard checked the media type already (see route-table.ts). */
export function readJsonBody(request: Request): Promise<unknown> {
  // Not async: the body's own promise is the only one a request waits on here.
  return request.arrayBuffer().then(parseBytes);
}

const parseBytes = (bytes: ArrayBuffer): unknown => parse(utf8(bytes));

const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });

/**
 * JSON is UTF-8 (RFC 8259 §8.1). A lenient decoder would store U+FFFD in place of the
 * client's bytes, changing what it sent without saying so; refused instead.
 */
function utf8(bytes: ArrayBuffer): string {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    throw new A2AError("JSONParse", "Invalid JSON payload: the body is not valid UTF-8");
  }
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
