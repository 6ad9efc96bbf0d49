import { Hono, type MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { type AuthOptions, ownerOf, type Principal } from "../agent/auth";
import {
  checkRegistration,
  discoverQuery,
  RegisterRequest,
  type RegistryLimits,
} from "../protocol/card/registry";
import { A2AError, invalidParams } from "../protocol/errors";
import { unwrap } from "../storage/result";
import { authenticate, challenges } from "../worker/auth";
import { readJson } from "../worker/body";
import { restError, toA2AError } from "../worker/errors";
import type { RegistryObject } from "./registry-object";
import { type RegistryVerifyOptions, verifyRegistration } from "./registry-verify";

/**
 * The object's methods as called here: the platform's stub type would map every return
 * type through its RPC types, which recursive JSON makes endlessly deep.
 */
type RegistryRpc = Pick<
  RegistryObject,
  "register" | "heartbeat" | "unregister" | "get" | "discover"
>;
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

  app.use("*", async (c, next) => {
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
  });

  const stubOf = (env: Env, principal: Principal): RegistryRpc => {
    const ns = options.registry(env);
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

  // A card's characters as UTF-8 take at most 3 bytes each, plus the envelope around it.
  const registerLimit: MiddlewareHandler<Vars<Env>> = bodyLimit({
    maxSize: limits.maxCardChars * 3 + 1024,
    onError: () =>
      restError(
        new A2AError(
          "PayloadTooLarge",
          `The registration is larger than a card of ${limits.maxCardChars} characters allows`,
        ),
      ),
  });

  app.use("/agents", registerLimit);
  const verify = options.verify ?? {};
  app.post("/agents", async (c) => {
    const parsed = RegisterRequest.safeParse(await readJson(c.req.raw));
    if (!parsed.success) throw invalidParams(parsed.error.issues);
    checkRegistration(parsed.data.card, parsed.data.ttlSeconds, limits);
    const principal = c.get("principal");
    const origin = new URL(c.req.url);
    // Before the object is asked: the card must be the one its URL serves (and, signed,
    // come with a proof of its key), so nobody lists a URL that is not theirs.
    const fetchFn = verify.fetch;
    const { keyProven } = await verifyRegistration({
      card: parsed.data.card,
      proof: parsed.data.proof,
      limits,
      registryOrigin: origin.origin,
      subject: principal.subject,
      tenant: principal.tenant,
      fetch: fetchFn ? (request) => fetchFn(request, c.env) : (request) => fetch(request),
      allowLocalhost:
        verify.allowLocalhost ?? ["localhost", "127.0.0.1", "[::1]"].includes(origin.hostname),
      timeoutMs: verify.timeoutMs ?? 5_000,
    });
    const { entry, created } = unwrap(
      await stubOf(c.env, principal).register(
        ownerOf(principal),
        parsed.data.card,
        parsed.data.ttlSeconds,
        keyProven,
      ),
    );
    return c.json(entry, created ? 201 : 200);
  });

  app.get("/agents", async (c) => {
    const query = discoverQuery(new URL(c.req.url).searchParams, limits);
    return c.json(unwrap(await stubOf(c.env, c.get("principal")).discover(query)));
  });

  app.get("/agents/:id", async (c) => {
    const id = entryId(c.req.param("id"));
    return c.json(unwrap(await stubOf(c.env, c.get("principal")).get(id)));
  });

  app.post("/agents/:id/heartbeat", async (c) => {
    const id = entryId(c.req.param("id"));
    const principal = c.get("principal");
    return c.json(unwrap(await stubOf(c.env, principal).heartbeat(ownerOf(principal), id)));
  });

  app.delete("/agents/:id", async (c) => {
    const id = entryId(c.req.param("id"));
    const principal = c.get("principal");
    unwrap(await stubOf(c.env, principal).unregister(ownerOf(principal), id));
    return c.body(null, 204);
  });

  app.all("/agents", () => methodNotAllowed("GET, POST"));
  app.all("/agents/:id", () => methodNotAllowed("GET, DELETE"));
  app.all("/agents/:id/heartbeat", () => methodNotAllowed("POST"));
  app.notFound((c) => restError(new A2AError("MethodNotFound", `No endpoint at ${c.req.path}`)));
  app.onError((error) => restError(toA2AError(error)));
  return app;
}

function methodNotAllowed(allow: string): Response {
  const response = restError(
    new A2AError("MethodNotAllowed", `This path takes ${allow}`, { allow }),
  );
  response.headers.set("Allow", allow);
  return response;
}
