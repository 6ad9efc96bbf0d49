import { Hono, type MiddlewareHandler } from "hono";
import type { RouterRoute } from "hono/types";
import type { AuthOptions, Principal } from "../agent/access/auth";
import type { RegistryLimits } from "../protocol/card/registry";
import { A2AError } from "../protocol/errors";
import { authenticate, challenges } from "../worker/auth";
import { restError, toA2AError } from "../worker/errors";
import { fallbackRoute, mountRoutes } from "../worker/route-table";
import type { RegistryObject } from "./registry-object";
import { type RegistryRpc, type RegistryServices, registryRoutes } from "./registry-routes";
import type { RegistryVerifyOptions } from "./registry-verify";

type Vars<Env> = { Bindings: Env; Variables: { principal: Principal } };

/** An entry id as the registry makes them (22 base64url characters). */
const ENTRY_ID = /^[A-Za-z0-9_-]{22}$/;

/**
 * The registry's HTTP+JSON routes, every one behind `auth`:
 *
 * - `POST /agents` `{card, ttlSeconds?, proof?}`: register (201 new, 200 renewed or
 *   replaced), once the card matches the one its URL serves (`verifyRegistration`);
 * - `GET /agents?name=&role=&tag=&tag=&pageSize=&pageToken=`: discover live agents;
 * - `GET /agents/{id}`, `POST /agents/{id}/heartbeat`, `DELETE /agents/{id}` (204).
 *
 * Errors are google.rpc.Status bodies, as the agent's HTTP+JSON binding answers them.
 * Each tenant (the caller's, from `auth`) has its own registry object.
 */
export function createRegistryApp<Env extends object>(options: {
  auth: AuthOptions<Env>;
  limits: RegistryLimits;
  registry: (env: Env) => DurableObjectNamespace<RegistryObject>;
  verify?: RegistryVerifyOptions<Env>;
}): Hono<Vars<Env>> {
  const app = new Hono<Vars<Env>>();
  const { limits } = options;

  const auth: MiddlewareHandler<Vars<Env>> = async (c, next) => {
    try {
      c.set("principal", await authenticate(c.req.raw, c.env, options.auth));
    } catch (error) {
      const refusal = toA2AError(error);
      const refused = restError(refusal);
      if (refused.status === 401) {
        refused.headers.set("WWW-Authenticate", challenges(options.auth, "registry", refusal));
      }
      return refused;
    }
    return next();
  };

  const stubOf = (env: unknown, principal: Principal): RegistryRpc => {
    const ns = options.registry(env as Env);
    const name = `registry/${encodeURIComponent(principal.tenant)}`;
    return ns.get(ns.idFromName(name)) as unknown as RegistryRpc;
  };
  const entryId = (id: string): string => {
    if (!ENTRY_ID.test(id)) {
      throw new A2AError("AgentNotFound", "No live agent by that id in this registry", {
        id: id.slice(0, 64),
      });
    }
    return id;
  };

  const verify = options.verify ?? {};
  mountRoutes(
    app,
    [registryRoutes(verify, limits), [registryFallback()]],
    { stubOf, entryId, routes: () => app.routes },
    {
      auth,
      // The registry has no rate limits of its own: put it behind the platform's.
      rateLimit: () => null,
      // No registry route names a conversation.
      contextIds: null,
      // A card's characters as UTF-8 take at most 3 bytes each, plus the envelope around it.
      maxBodyBytes: limits.maxCardChars * 3 + 1024,
      tooLarge: () =>
        new A2AError(
          "PayloadTooLarge",
          `The registration is larger than a card of ${limits.maxCardChars} characters allows`,
        ),
    },
  );

  app.onError((error) => restError(toA2AError(error)));
  return app;
}

/** The registry's last route: another method of its paths (405), or another path (404). */
export function registryFallback() {
  return fallbackRoute<RegistryServices & { routes: () => readonly RouterRoute[] }>({
    id: "registry fallback",
    routesOf: ({ routes }) => routes(),
    trace: false,
    cors: "none",
    notFound: (c) => restError(new A2AError("MethodNotFound", `No endpoint at ${c.req.path}`)),
    methodNotAllowed: (_c, methods) => {
      // HEAD goes without saying: the registry lists what its routes declare.
      const order = ["GET", "POST", "PUT", "PATCH", "DELETE"];
      const allow = order.filter((m) => methods.includes(m)).join(", ");
      const response = restError(
        new A2AError("MethodNotAllowed", `This path takes ${allow}`, { allow }),
      );
      response.headers.set("Allow", allow);
      return response;
    },
  });
}
