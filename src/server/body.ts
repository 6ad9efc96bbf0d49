import { A2AError } from "../models/errors";

/**
 * Parses a JSON body. Its size was checked before (Hono's `bodyLimit` on every route
 * that takes a body, answering 413), so this only reads and parses.
 */
export async function readJson(request: Request): Promise<unknown> {
  const text = await request.text();
  try {
    return JSON.parse(text);
  } catch (error) {
    const detail = error instanceof Error ? error.message : "malformed JSON";
    throw new A2AError("JSONParse", `Invalid JSON payload: ${detail}`);
  }
}
