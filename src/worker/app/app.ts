import type { Context, Hono, MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { etag } from "hono/etag";
import { HonoBase } from "hono/hono-base";
import { methodNotAllowed } from "hono/method-not-allowed";
import { basePath } from "hono/route";
import { ownerOf } from "../../agent/auth";
import type { Agent } from "../../agent/definition";
import { SERVE_ENDPOINT } from "../../agent/endpoints";
import { signingKeys } from "../../conversation/push/push-keys";
import { A2AError } from "../../protocol/errors";
import { JWKS_PATH } from "../../push/headers";
import { publicJwks } from "../../push/signing";
import { serveCard, servedFeatures, serveSignedCard } from "../a2a/card";
import { cardSigningKeys, mergeJwks } from "../a2a/card-signing";
import { registerChat } from "../a2a/chat";
import { handleJsonRpc } from "../a2a/jsonrpc";
import { REST_ROUTES } from "../a2a/operation-table";
import { Operations } from "../a2a/operations";
import { checkPathEncoding, handleRest } from "../a2a/rest";
import { type AuthVariables, requireAuth, tenantFor } from "../auth";
import { useCors } from "../cors";
import { jsonRpcError, restError, toA2AError } from "../errors";
import { mountInspector, serveTaskSteps, TASK_STEPS_PATH } from "../inspector/inspector";
import { warnWhenOpen } from "../open-warning";
import { rateLimiter } from "../rate-limit";
import { RememberingRouter } from "../router";
import { startupCheck } from "../startup";
import { requestedTenant } from "../tenant";
import { requestTrace, traceRequests } from "../tracing";

/**
 * Where the agent is served: the request's origin plus the path the app is mounted at
 * (`app.route("/agent", edgelink.app)` gives `https://host/agent`), so the card
 * advertises URLs that reach it.
 */
export function baseUrlOf(c: Context, url: URL = new URL(c.req.url)): string {
  const base = basePath(c);
  return url.origin + (base === "/" ? "" : base);
}

/** A normalized URL's origin (`Request.url` is one), read without parsing the URL. */
function originOf(url: string): string {
  const end = url.indexOf("/", url.indexOf("//") + 2);
  return end < 0 ? url : url.slice(0, end);
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
  app.use("*", traceRequests(anyAgent));
  // An agent without auth on a public host says so once, whichever route is asked first
  // (an agent with auth has nothing to say: no step).
  if (!agent.auth) app.use("*", warnWhenOpen(agent));
  // CORS first: a preflight is answered before method checks and authentication.
  useCors(app, agent);
  // Then the configuration, checked once: a misconfigured Worker answers nothing else.
  app.use("*", startupCheck(agent));

  // A path served under other methods is 405 with Allow, in the A2A error shape.
  app.use(
    methodNotAllowed({
      app,
      onMethodNotAllowed: (c, methods) => {
        const response = restError(
          new A2AError("MethodNotAllowed", `${c.req.method} is not allowed on ${c.req.path}`),
        );
        response.headers.set("Allow", methods.join(", "));
        return response;
      },
    }),
  );

  // Middleware for every Edgelink route goes here, before the routes: a Hono handler that
  // answers ends the chain, so middleware added after a route never runs for it.

  const cardCache = etag({ retainedHeaders: ["cache-control", "etag", "last-modified", "vary"] });
  app.get("/.well-known/agent-card.json", cardCache, (c) => {
    // Signed only when the operator configured card signing keys.
    const keys = cardSigningKeys(c.env);
    return keys
      ? serveSignedCard(anyAgent, baseUrlOf(c), keys)
      : serveCard(anyAgent, baseUrlOf(c), "1.0");
  });
  app.get("/.well-known/agent.json", cardCache, (c) => serveCard(anyAgent, baseUrlOf(c), "0.3"));

  // The public keys that verify webhook signatures (when push is on) and the card's
  // signatures (when card signing keys are configured); without either there is no JWKS.
  app.get(JWKS_PATH, async (c) => {
    const cardKeys = cardSigningKeys(c.env);
    if (!agent.push && !cardKeys) {
      return restError(new A2AError("MethodNotFound", `No endpoint at ${JWKS_PATH}`));
    }
    const pushKeys = agent.push ? publicJwks(await signingKeys(c.env)).keys : [];
    const card = cardKeys ? (await cardKeys).map((k) => k.publicJwk) : [];
    return Response.json(mergeJwks(card, pushKeys), {
      headers: { "Cache-Control": "public, max-age=300" },
    });
  });

  // The inspector's page and script hold no data (their requests carry the user's token).
  mountInspector(app, agent);

  // Everything below is authenticated (the card, JWKS and inspector page above are public).
  app.use("*", requireAuth(agent));

  // Rate limits: on each route, after authentication (a caller is counted as who it is)
  // and before its body is read or any object is touched.
  const limits = rateLimiter(agent);
  const limited = limits.guard("path");

  const rpcLimit: MiddlewareHandler<Vars> = bodyLimit({
    maxSize: agent.maxBodyBytes,
    onError: () => Response.json(jsonRpcError(null, tooLarge()), { status: 413 }),
  });
  app.post("/", limits.guard("body"), rpcLimit, (c: Context<Vars>) => {
    // No URL parsed for a message: its origin is the URL's head (the URL a request
    // carries is already normalized); the card's features only for the method that shows them.
    const url = c.req.url;
    const principal = c.get("principal");
    return handleJsonRpc(
      c.req.raw,
      agent,
      async (tenant) => {
        const acting = tenantFor(principal, tenant);
        await limits.bodyTenant(c, acting);
        const trace = requestTrace(c.req.raw);
        return new Operations(agent, c.env, acting, originOf(url), ownerOf(principal), trace);
      },
      () => servedFeatures(anyAgent, baseUrlOf(c, new URL(url))),
      url,
    );
  });

  // HTTP+JSON: every route, then every route again under `/{tenant}` (§11.3). Unprefixed
  // first, so `/tasks/tasks` is task "tasks", not the task list of tenant "tasks".
  const restLimit: MiddlewareHandler<Vars> = bodyLimit({
    maxSize: agent.maxBodyBytes,
    onError: () => restError(tooLarge()),
  });

  // The inspector's task steps, found as GetTask finds the task (off: see mountInspector).
  app.get(TASK_STEPS_PATH, limited, (c: Context<Vars>) => {
    const url = new URL(c.req.url);
    checkPathEncoding(url.pathname);
    const principal = c.get("principal");
    const owner = ownerOf(principal);
    const ops = new Operations(agent, c.env, tenantFor(principal, ""), url.origin, owner);
    return serveTaskSteps(ops as Operations<unknown>, c.req.param("id") ?? "");
  });

  // The chat endpoint: a streaming view of the same tasks for front ends.
  registerChat(app, agent, [limited, restLimit]);

  for (const prefix of ["", "/:tenant"]) {
    for (const route of REST_ROUTES) {
      app.on([...route.methods], prefix + route.path, limited, restLimit, (c: Context<Vars>) => {
        checkPathEncoding(new URL(c.req.url).pathname);
        const origin = new URL(c.req.url).origin;
        const principal = c.get("principal");
        const tenant = tenantFor(principal, requestedTenant(c.req.param("tenant"), "tenant"));
        const trace = requestTrace(c.req.raw);
        const ops = new Operations(agent, c.env, tenant, origin, ownerOf(principal), trace);
        // The card's features only for the operation that shows them.
        const features = () => servedFeatures(anyAgent, baseUrlOf(c));
        return handleRest(c.req.raw, route, c.req.param(), agent, ops, features);
      });
    }
  }

  // Long-term memory's routes, when the agent serves them: their code comes with `memory()`.
  agent.memory?.mount(app as never, agent, { any: [limited], body: [limited, restLimit] });

  // The agent's own routes, after the A2A ones so that those always win. Their
  // serving code comes with `endpoint()`, so a Worker without any bundles none of it.
  for (const spec of agent.endpoints) {
    const serve = spec[SERVE_ENDPOINT](agent.keepAliveMs);
    if (spec.source === "body") app.on(spec.method, spec.path, limited, restLimit, serve);
    else app.on(spec.method, spec.path, limited, serve);
  }

  app.notFound((c) => restError(new A2AError("MethodNotFound", `No endpoint at ${c.req.path}`)));
  // Protocol errors thrown before a binding's handler (a bad path) keep their status.
  app.onError((error) => restError(toA2AError(error)));
  return app;
}
