import type { Context, Hono, MiddlewareHandler } from "hono";
import { HonoBase } from "hono/hono-base";
import { basePath } from "hono/route";
import type { Agent } from "../../agent/definition";
import { A2AError } from "../../protocol/errors";
import { GEN_AI_AGENT_NAME } from "../../telemetry";
import { type AuthVariables, requireAuth } from "../auth";
import { contextVerifier } from "../context-ids";
import { useCors } from "../cors";
import { restError, toA2AError } from "../errors";
import { openWarning } from "../open-warning";
import { type RateLimiter, rateLimiter } from "../rate-limit";
import { mountRoutes } from "../route-table";
import { RememberingRouter } from "../router";
import { startupCheck } from "../startup";
import { traceRequests } from "../tracing";
import { agentRoutes } from "./agent-routes";

/**
 * Where the agent is served: the request's origin plus the path the app is mounted at
 * (`app.route("/agent", edgelink.app)` gives `https://host/agent`), so the card
 * advertises URLs that reach it.
 */
export function baseUrlOf(c: Context, url: URL = new URL(c.req.url)): string {
  const base = basePath(c);
  return url.origin + (base === "/" ? "" : base);
}

/**
 * The HTTP surface of an agent: the agent cards, the JSON-RPC endpoint at `POST /`, and
 * the HTTP+JSON binding at `/message:send`, `/tasks/...` (optionally under `/{tenant}`).
 * It is a plain Hono app: serve it alone, or mount it in your own app with
 * `app.route("/agent", edgelink.app)`, after your own middleware.
 */
export function createApp<Env extends object>(
  agent: Agent<Env>,
): Hono<{ Bindings: Env; Variables: AuthVariables }> {
  type Vars = { Bindings: Env; Variables: AuthVariables };
  // HonoBase: Hono's default routers stay out of the bundle; RememberingRouter is the router.
  const app: Hono<Vars> = new HonoBase<Vars>({ router: new RememberingRouter() });
  const anyAgent = agent as Agent<unknown>;
  const tooLarge = () =>
    new A2AError(
      "PayloadTooLarge",
      `Request body exceeds the limit of ${agent.maxBodyBytes} bytes`,
      {
        limitBytes: String(agent.maxBodyBytes),
      },
    );
  // The request's server span first, so it covers every refusal too (a no-op untraced).
  // An agent without auth on a public host says so once, whichever route is asked first
  // (an agent with auth has nothing to say: no step), in the same layer.
  const warn = agent.auth ? undefined : openWarning(agent);
  app.use("*", traceRequests({ [GEN_AI_AGENT_NAME]: agent.card.name }, warn));
  // CORS first: a preflight is answered before method checks and authentication.
  const routes = agentRoutes(anyAgent);
  useCors(app, agent, routes);
  // Then the configuration, checked once: a misconfigured Worker answers nothing else.
  app.use("*", startupCheck(agent));

  // Middleware for every Edgelink route goes here, before the routes: a Hono handler that
  // answers ends the chain, so middleware added after a route never runs for it.

  // Every route, from the route table, each behind the guards it declares (route-table.ts):
  // public ones first, then authentication, then the rest; a route's rate limit guard runs
  // after authentication (a caller is counted as who it is) and before its body is read.
  const limits = rateLimiter(agent);
  mountRoutes(
    app,
    routes,
    {
      agent: anyAgent,
      limits: limits as unknown as RateLimiter<object>,
      baseUrl: baseUrlOf,
      routes: () => app.routes,
    },
    {
      auth: requireAuth(agent) as MiddlewareHandler,
      rateLimit: (from) => (agent.rateLimit ? (limits.guard(from) as MiddlewareHandler) : null),
      maxBodyBytes: agent.maxBodyBytes,
      tooLarge,
      contextIds: contextVerifier({
        clientContextIds: agent.clientContextIds,
        indexBinding: agent.bindings.index,
      }),
    },
  );

  // Protocol errors thrown before a binding's handler (a bad path) keep their status.
  app.onError((error) => restError(toA2AError(error)));
  return app;
}
