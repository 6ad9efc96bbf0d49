import type { MiddlewareHandler } from "hono";
import { cors } from "hono/cors";
import type { Agent } from "../agent/definition";

const CARD_PATHS = new Set(["/.well-known/agent-card.json", "/.well-known/agent.json"]);

/**
 * CORS as the agent configures it, with preflights answered on every route before
 * authentication (a preflight carries no credentials). Without the option only the card
 * is readable cross-origin: it is public by design.
 */
export function corsFor<Env extends object>(agent: Agent<Env>): MiddlewareHandler {
  if (agent.cors) return cors(agent.cors);
  const card = cors({ origin: "*", allowMethods: ["GET", "HEAD", "OPTIONS"] });
  return (c, next) => (CARD_PATHS.has(c.req.path) ? card(c, next) : next());
}
