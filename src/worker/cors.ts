import type { MiddlewareHandler } from "hono";
import { cors } from "hono/cors";
import type { Agent } from "../agent/definition";
import type { RouteEntry } from "../agent/routes";

/** The card's paths, relative to where the app is mounted. */
export const CARD_PATHS = ["/.well-known/agent-card.json", "/.well-known/agent.json"] as const;

/**
 * CORS as the agent configures it, with preflights answered on every route before
 * authentication (a preflight carries no credentials). Without the option only the routes
 * the table declares public (the cards) are readable cross-origin: public by design. Registered where it applies, decided
 * once from the agent: the other routes' requests pass no CORS step at all.
 */
export function useCors<Env extends object>(
  app: { use(path: string, handler: MiddlewareHandler): unknown },
  agent: Agent<Env>,
  /** The app's route table: its routes declaring `cors: "public"` are readable by anyone. */
  routes: readonly (readonly RouteEntry<never>[])[],
): void {
  if (agent.cors) {
    app.use("*", cors(agent.cors));
    return;
  }
  const open = cors({ origin: "*", allowMethods: ["GET", "HEAD", "OPTIONS"] });
  for (const entry of routes.flat()) {
    if (entry.guards.cors !== "public") continue;
    for (const path of entry.paths) app.use(path, open);
  }
}
