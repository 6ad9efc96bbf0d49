import { Hono } from "hono";
import type { Agent } from "../agent/definition";
import { signingKeys } from "../durable/push-keys";
import { A2AError } from "../models/errors";
import { JWKS_PATH } from "../push/headers";
import { publicJwks } from "../push/signing";
import { serveCard, servedFeatures } from "./card";
import { registerChat } from "./chat";
import { restError, toA2AError } from "./errors";
import { handleJsonRpc } from "./jsonrpc";
import { Operations } from "./operations";
import { handleRest, matchRest } from "./rest";

/**
 * The HTTP surface of an agent: the agent cards, the JSON-RPC endpoint at `POST /`, and
 * the HTTP+JSON binding at `/message:send`, `/tasks/...` (optionally under `/{tenant}`).
 */
export function createApp<Env extends object>(agent: Agent<Env>): Hono<{ Bindings: Env }> {
  const app = new Hono<{ Bindings: Env }>();
  const anyAgent = agent as Agent<unknown>;

  app.get("/.well-known/agent-card.json", (c) => serveCard(c.req.raw, anyAgent, "1.0"));
  app.get("/.well-known/agent.json", (c) => serveCard(c.req.raw, anyAgent, "0.3"));

  // The public keys that verify webhook signatures (served only when push is on).
  app.get(JWKS_PATH, async (c) => {
    if (!agent.push) {
      return restError(new A2AError("MethodNotFound", `No endpoint at ${JWKS_PATH}`));
    }
    return Response.json(publicJwks(await signingKeys(c.env)), {
      headers: { "Cache-Control": "public, max-age=300" },
    });
  });

  app.post("/", (c) => {
    const origin = new URL(c.req.url).origin;
    return handleJsonRpc(
      c.req.raw,
      agent,
      (tenant) => new Operations(agent, c.env, tenant, origin),
      servedFeatures(anyAgent, origin),
    );
  });

  registerChat(app, agent);

  app.all("*", (c) => {
    const url = new URL(c.req.url);
    const match = matchRest(url.pathname, c.req.method);
    if (match === null) {
      return restError(new A2AError("MethodNotFound", `No endpoint at ${url.pathname}`));
    }
    if ("allowed" in match) {
      const response = restError(
        new A2AError("MethodNotAllowed", `${c.req.method} is not allowed on ${url.pathname}`),
      );
      response.headers.set("Allow", match.allowed.join(", "));
      return response;
    }
    const ops = new Operations(agent, c.env, match.tenant, url.origin);
    const features = servedFeatures(anyAgent, url.origin);
    return handleRest(c.req.raw, match.route, agent, ops, features);
  });

  // Protocol errors thrown before a binding's handler (a bad path) keep their status.
  app.onError((error) => restError(toA2AError(error)));
  return app;
}
