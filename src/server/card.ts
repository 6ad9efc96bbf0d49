import type { Agent } from "../agent/definition";
import { cardToV1, cardToV03, type ServedFeatures } from "../models/agent-card";

/** What the server really serves, for the card's capability flags (A3). */
export function servedFeatures(agent: Agent<unknown>, baseUrl: string): ServedFeatures {
  return {
    baseUrl,
    streaming: agent.streaming,
    pushNotifications: agent.push !== null,
    extendedAgentCard: agent.extendedCard !== null,
  };
}

/**
 * The agent card, v1 or v0.3, with the caching headers of §8.6: Cache-Control max-age and
 * Last-Modified (app.ts adds the ETag and answers If-None-Match with 304).
 */
export function serveCard(
  agent: Agent<unknown>,
  baseUrl: string,
  version: "1.0" | "0.3",
): Response {
  const features = servedFeatures(agent, baseUrl);
  const card = version === "1.0" ? cardToV1(agent.card, features) : cardToV03(agent.card, features);
  return new Response(JSON.stringify(card), {
    headers: {
      "Content-Type": "application/json",
      "Cache-Control": `public, max-age=${agent.cardMaxAgeSeconds}`,
      "Last-Modified": agent.loadedAt.toUTCString(),
      "Access-Control-Allow-Origin": "*",
    },
  });
}
