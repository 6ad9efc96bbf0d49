import type { MiddlewareHandler } from "hono";
import { cors } from "hono/cors";
import type { Agent } from "../agent/definition";

/** The card's paths, relative to where the app is mounted. */
export const CARD_PATHS = ["/.well-known/agent-card.json", "/.well-known/agent.json"] as const;

/**
 * CORS as the agent configures it, with preflights answered on every route before
 * authentication (a preflight carries no credentials). Without the option only the card
 * is readable cross-origin: it is public by design. Registered where it applies, decided
 * once from the agent: the other routes' requests pass no CORS step at all.
 */
export function useCors<Env extends object>(
  app: { use(path: string, handler: MiddlewareHandler): unknown },
  agent: Agent<Env>,
): void {
  if (agent.cors) {
    app.use("*", cors(agent.cors));
    return;
  }
  const card = cors({ origin: "*", allowMethods: ["GET", "HEAD", "OPTIONS"] });
  for (const path of CARD_PATHS) app.use(path, card);
}
