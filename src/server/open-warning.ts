import type { MiddlewareHandler } from "hono";
import type { Agent } from "../agent/definition";
import { logEvent } from "../telemetry/log";

/** Hosts of local development (`wrangler dev`, tests): an open agent there is expected. */
const LOCAL_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"]);

// Per isolate: one warning per agent, however many requests the isolate serves.
const warned = new WeakSet<object>();

/**
 * Warns once, on the first request from a non-local host, that an agent without `auth`
 * is open to anyone who can reach it: an open agent should be a decision, not an oversight.
 */
export function warnWhenOpen<Env extends object>(
  agent: Agent<Env>,
): MiddlewareHandler<{ Bindings: Env }> {
  return async (c, next) => {
    if (!agent.auth && !warned.has(agent)) {
      const { hostname, origin } = new URL(c.req.url);
      if (!LOCAL_HOSTS.has(hostname)) {
        warned.add(agent);
        logEvent(
          "warn",
          `edgelink: agent "${agent.card.name}" is served at ${origin} without auth: anyone who can reach it can send it messages and read its tasks. Close it with the auth option of defineAgent, e.g. auth: { apiKeys: { secret: "AGENT_API_KEYS" } } (see docs/security-defaults.md).`,
        );
      }
    }
    await next();
  };
}
