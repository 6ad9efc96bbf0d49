import { SELF } from "cloudflare:test";
import { expect } from "vitest";
import { BASE, parseSse, userMessage } from "../../support/helpers";

type Json = Record<string, unknown>;

/** SendStreamingMessage over JSON-RPC; the `result` of every SSE event, in order. */
export async function streamMessage(text: string, contextId?: string): Promise<Json[]> {
  const response = await SELF.fetch(`${BASE}/`, {
    method: "POST",
    headers: { "Content-Type": "application/json", "A2A-Version": "1.0" },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "SendStreamingMessage",
      params: { message: userMessage(text, contextId ? { contextId } : {}) },
    }),
  });
  expect(response.headers.get("content-type")).toMatch(/text\/event-stream/);
  return parseSse(await response.text()).map((e) => (e.data as { result: Json }).result);
}
