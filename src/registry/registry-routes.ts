import type { Context } from "hono";
import { ownerOf, type Principal } from "../agent/access/auth";
import type { RouteEntry, RouteGuards } from "../agent/routes";
import {
  checkRegistration,
  discoverQuery,
  RegisterRequest,
  type RegistryLimits,
} from "../protocol/card/registry";
import { invalidParams } from "../protocol/errors";
import { unwrap } from "../storage/rpc-result";
import { readJson } from "../worker/body";
import type { RegistryObject } from "./registry-object";
import { type RegistryVerifyOptions, verifyRegistration } from "./registry-verify";

/**
 * The object's methods as called here: the platform's stub type would map every return
 * type through its RPC types, which recursive JSON makes endlessly deep.
 */
export type RegistryRpc = Pick<
  RegistryObject,
  "register" | "heartbeat" | "unregister" | "get" | "discover"
>;

/** What the registry's routes are made from. */
export interface RegistryServices {
  /** The registry object of the caller's tenant. */
  readonly stubOf: (env: unknown, principal: Principal) => RegistryRpc;
  /** An entry id from the path; not found when it is not of the registry's shape. */
  readonly entryId: (id: string) => string;
}

type C = Context<{ Bindings: object; Variables: { principal: Principal } }>;
type RegistryRoute = RouteEntry<RegistryServices>;

/** A registry route: the caller's tenant's registry; entries it changes must be its own. */
const REGISTRY: RouteGuards = {
  auth: "caller",
  scoping: "owner",
  contextIds: "none",
  rateLimit: "none",
  body: "none",
  cors: "none",
  trace: false,
};

/**
 * The registry's route table (see `createRegistryApp`): register, discover, read, renew and
 * unregister. Discovery and reads see the tenant's live entries; changes only the caller's.
 */
export function registryRoutes<Env>(
  verify: RegistryVerifyOptions<Env>,
  limits: RegistryLimits,
): RegistryRoute[] {
  return [
    {
      id: "registry register",
      methods: ["POST"],
      paths: ["/agents"],
      guards: { ...REGISTRY, body: "json" },
      summary: "Registers a card its URL serves (201 new, 200 renewed)",
      serve:
        ({ stubOf }) =>
        async (c: C) => {
          const parsed = RegisterRequest.safeParse(await readJson(c.req.raw));
          if (!parsed.success) throw invalidParams(parsed.error.issues);
          checkRegistration(parsed.data.card, parsed.data.ttlSeconds, limits);
          const principal = c.get("principal");
          const origin = new URL(c.req.url);
          // Before the object is asked: the card must be the one its URL serves (and, signed,
          // come with a proof of its key), so nobody lists a URL that is not theirs.
          const fetchFn = verify.fetch;
          const verdict = await verifyRegistration({
            card: parsed.data.card,
            proof: parsed.data.proof,
            limits,
            registryOrigin: origin.origin,
            subject: principal.subject,
            tenant: principal.tenant,
            fetch: fetchFn
              ? (request) => fetchFn(request, c.env as Env)
              : (request) => fetch(request),
            allowLocalhost:
              verify.allowLocalhost ??
              ["localhost", "127.0.0.1", "[::1]"].includes(origin.hostname),
            timeoutMs: verify.timeoutMs ?? 5_000,
          });
          const { entry, created } = unwrap(
            await stubOf(c.env, principal).register(
              ownerOf(principal),
              verdict.card,
              parsed.data.ttlSeconds,
              verdict.keyProven,
            ),
          );
          return c.json(entry, created ? 201 : 200);
        },
    },
    {
      id: "registry discover",
      methods: ["GET"],
      paths: ["/agents"],
      guards: { ...REGISTRY, scoping: "tenant" },
      summary: "Discovers live agents by name, role and tags",
      serve:
        ({ stubOf }) =>
        async (c: C) => {
          const query = discoverQuery(new URL(c.req.url).searchParams, limits);
          return c.json(unwrap(await stubOf(c.env, c.get("principal")).discover(query)));
        },
    },
    {
      id: "registry get",
      methods: ["GET"],
      paths: ["/agents/:id"],
      guards: { ...REGISTRY, scoping: "tenant" },
      summary: "Reads one live entry",
      serve:
        ({ stubOf, entryId }) =>
        async (c: C) => {
          const id = entryId(c.req.param("id") ?? "");
          return c.json(unwrap(await stubOf(c.env, c.get("principal")).get(id)));
        },
    },
    {
      id: "registry heartbeat",
      methods: ["POST"],
      paths: ["/agents/:id/heartbeat"],
      guards: REGISTRY,
      summary: "Renews the caller's entry",
      serve:
        ({ stubOf, entryId }) =>
        async (c: C) => {
          const id = entryId(c.req.param("id") ?? "");
          const principal = c.get("principal");
          return c.json(unwrap(await stubOf(c.env, principal).heartbeat(ownerOf(principal), id)));
        },
    },
    {
      id: "registry unregister",
      methods: ["DELETE"],
      paths: ["/agents/:id"],
      guards: REGISTRY,
      summary: "Removes the caller's entry (204)",
      serve:
        ({ stubOf, entryId }) =>
        async (c: C) => {
          const id = entryId(c.req.param("id") ?? "");
          const principal = c.get("principal");
          unwrap(await stubOf(c.env, principal).unregister(ownerOf(principal), id));
          return c.body(null, 204);
        },
    },
  ];
}
