import type { Agent } from "../agent/definition";
import { cardToV1, cardToV03, type ServedFeatures } from "../models/agent-card";

/** What the server really serves, for the card's capability flags (A3). */
export function servedFeatures(agent: Agent<unknown>, baseUrl: string): ServedFeatures {
  return {
    baseUrl,
    streaming: agent.streaming,
    pushNotifications: agent.push !== null,
    extendedAgentCard: agent.extendedCard !== null,
    hasLlm: agent.model !== null,
    toolCalling: Object.keys(agent.tools).length > 0,
    // Nothing in Edgelink hands a task to another agent yet, whatever the card says.
    delegation: false,
  };
}

const etags = new Map<string, string>();

async function etagOf(body: string): Promise<string> {
  const cached = etags.get(body);
  if (cached) return cached;
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(body));
  const hex = [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
  const etag = `"${hex.slice(0, 32)}"`;
  if (etags.size > 64) etags.clear();
  etags.set(body, etag);
  return etag;
}

const served = new WeakMap<object, Date>();

/**
 * When this agent's card was first served by this isolate: its Last-Modified. Taken at
 * the first request, not at module scope, where workerd's clock still reads 1970.
 */
function firstServed(agent: Agent<unknown>): Date {
  let at = served.get(agent);
  if (!at) {
    at = new Date();
    served.set(agent, at);
  }
  return at;
}

/**
 * The agent card, v1 or v0.3, with the caching headers of §8.6: Cache-Control max-age,
 * an ETag of the content (answered with 304 on If-None-Match) and Last-Modified.
 */
export async function serveCard(
  request: Request,
  agent: Agent<unknown>,
  version: "1.0" | "0.3",
): Promise<Response> {
  // A configured public URL keeps the card the same whatever Host the request named;
  // without one the card follows the request's origin, so caches must key on Host.
  const configured = agent.card.url?.replace(/\/+$/, "");
  const features = servedFeatures(agent, configured || new URL(request.url).origin);
  const card = version === "1.0" ? cardToV1(agent.card, features) : cardToV03(agent.card, features);
  const body = JSON.stringify(card);
  const etag = await etagOf(body);
  const headers = {
    "Content-Type": "application/json",
    "Cache-Control": `public, max-age=${agent.cardMaxAgeSeconds}`,
    ETag: etag,
    "Last-Modified": firstServed(agent).toUTCString(),
    "Access-Control-Allow-Origin": "*",
    ...(configured ? {} : { Vary: "Host" }),
  };
  const match = request.headers.get("If-None-Match");
  if (match?.split(",").some((t) => t.trim() === etag || t.trim() === "*")) {
    return new Response(null, { status: 304, headers });
  }
  return new Response(body, { headers });
}
