import type { Agent } from "../../agent/definition";
import type { CardSigningKey } from "../../client/card-keys";
import { cardToV1, cardToV03, type ServedFeatures } from "../../protocol/card/agent-card";
import { JWKS_PATH } from "../../push/headers";
import { signedCardJson } from "./card-signing";

/** What the server really serves, for the card's capability flags. */
export function servedFeatures(agent: Agent<unknown>, baseUrl: string): ServedFeatures {
  const delegatesToAgents = Object.keys(agent.agents).length > 0;
  return {
    baseUrl,
    streaming: agent.streaming,
    pushNotifications: agent.push !== null,
    extendedAgentCard: agent.extendedCard !== null,
    hasLlm: agent.model !== null,
    // Tools the model may call: its own, other agents (`agents`) and MCP servers' tools.
    toolCalling: Object.keys(agent.tools).length > 0 || delegatesToAgents || agent.mcp !== null,
    // The agent's model hands work to other agents. (A handler may also call
    // `ctx.delegate`, which the card cannot know ahead of time.)
    delegation: delegatesToAgents,
  };
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
 * The agent card, v1 or v0.3, with the caching headers of §8.6: Cache-Control max-age and
 * Last-Modified (app.ts adds the ETag and answers If-None-Match with 304).
 */
export function serveCard(
  agent: Agent<unknown>,
  baseUrl: string,
  version: "1.0" | "0.3",
): Response {
  const features = cardFeatures(agent, baseUrl);
  const card = version === "1.0" ? cardToV1(agent.card, features) : cardToV03(agent.card, features);
  return cardResponse(agent, JSON.stringify(card));
}

/**
 * The v1 card signed with the card signing keys (§8.4), its `jku` the JWKS this app
 * serves beside it. Signed once per isolate for each base URL the card is served at.
 */
export async function serveSignedCard(
  agent: Agent<unknown>,
  baseUrl: string,
  keys: Promise<CardSigningKey[]>,
): Promise<Response> {
  const features = cardFeatures(agent, baseUrl);
  const json = await signedCardJson(
    agent,
    features.baseUrl,
    keys,
    () => cardToV1(agent.card, features),
    features.baseUrl + JWKS_PATH,
  );
  return cardResponse(agent, json);
}

// A configured public URL keeps the card the same whatever Host the request named;
// without one the card follows the request's origin, so caches must key on Host.
const configuredUrl = (agent: Agent<unknown>) => agent.card.url?.replace(/\/+$/, "");

function cardFeatures(agent: Agent<unknown>, baseUrl: string): ServedFeatures {
  return servedFeatures(agent, configuredUrl(agent) || baseUrl);
}

function cardResponse(agent: Agent<unknown>, json: string): Response {
  return new Response(json, {
    headers: {
      "Content-Type": "application/json",
      "Cache-Control": `public, max-age=${agent.cardMaxAgeSeconds}`,
      "Last-Modified": firstServed(agent).toUTCString(),
      "Access-Control-Allow-Origin": "*",
      ...(configuredUrl(agent) ? {} : { Vary: "Host" }),
    },
  });
}
