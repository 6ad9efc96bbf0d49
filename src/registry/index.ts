/**
 * `edgelink/registry`: an agent registry on Workers, apart from `defineAgent` so an
 * agent's Worker does not carry it. Agents register their card for a time-to-live and
 * renew it with heartbeats; clients discover them by name, role and tags (`RegistryClient`
 * in `edgelink/client`, which also types its entries and pages).
 * @packageDocumentation
 */
import type { Hono } from "hono";
import { type AuthOptions, checkAuth, type Principal } from "../agent/access/auth";
import { REGISTRY_LIMITS, type RegistryLimits } from "../protocol/card/registry";
import { createRegistryApp } from "./registry-app";
import { RegistryObject } from "./registry-object";
import type { RegistryVerifyOptions } from "./registry-verify";

export type { RegisterRequest, RegistryLimits } from "../protocol/card/registry";
export { REGISTRY_LIMITS } from "../protocol/card/registry";
export type { RegistryVerifyOptions } from "./registry-verify";

/** What `defineRegistry` takes. */
export interface RegistryConfig<Env> {
  /**
   * Who may use the registry: required, since an open registry lets anyone list any URL.
   * A principal (`ownerOf`: scheme, issuer and subject) owns the entries it registers;
   * its tenant has its own registry.
   */
  auth: AuthOptions<Env>;
  /** Bounds (defaults: `REGISTRY_LIMITS`). */
  limits?: Partial<RegistryLimits>;
  /** The Durable Object binding of the registry class. Default `EDGELINK_REGISTRY`. */
  binding?: string;
  /**
   * How registrations are checked against the card each agent serves (always on): the
   * fetch that reads cards, local agents for development, the time one read may take.
   */
  verify?: RegistryVerifyOptions<Env>;
}

/** What `defineRegistry` returns: a Worker's default export and its Durable Object class. */
export interface RegistryWorker<Env extends object> {
  fetch(request: Request, env: Env, ctx: ExecutionContext): Response | Promise<Response>;
  /** The routes, to mount in your own app: `app.route("/registry", registry.app)`. */
  app: Hono<{ Bindings: Env; Variables: { principal: Principal } }>;
  /** Export it under the class name wrangler.toml binds (`EDGELINK_REGISTRY` by default). */
  EdgelinkRegistry: typeof RegistryObject<Env>;
  /** The limits in force. */
  limits: RegistryLimits;
}

/** The characters of cards one discovery page may carry at most. */
const MAX_PAGE_CHARS = 16 * 1024 * 1024;

function checkLimits(partial: Partial<RegistryLimits>): RegistryLimits {
  const limits = { ...REGISTRY_LIMITS, ...partial };
  for (const [key, value] of Object.entries(limits)) {
    if (!Number.isSafeInteger(value) || value < 1) {
      throw new TypeError(`Invalid registry limits: ${key} must be a positive integer`);
    }
  }
  // A card is one row: its characters, up to 3 bytes each in UTF-8, stay under the 2 MB a
  // row may hold. Counting live entries and a page's rows stay cheap under the others.
  const ceilings: Partial<Record<keyof RegistryLimits, number>> = {
    maxCardChars: 512 * 1024,
    maxAgents: 100_000,
    maxPageSize: 1_000,
    maxTags: 1_000,
  };
  for (const [key, ceiling] of Object.entries(ceilings)) {
    if (limits[key as keyof RegistryLimits] > (ceiling as number)) {
      throw new TypeError(`Invalid registry limits: ${key} must be at most ${ceiling}`);
    }
  }
  // A discovery page carries up to maxPageSize cards: bounded as a whole, not only each.
  if (limits.maxCardChars * limits.maxPageSize > MAX_PAGE_CHARS) {
    throw new TypeError(
      `Invalid registry limits: maxCardChars × maxPageSize must be at most ${MAX_PAGE_CHARS} (the characters of cards one discovery page may carry)`,
    );
  }
  if (
    limits.minTtlSeconds > limits.defaultTtlSeconds ||
    limits.defaultTtlSeconds > limits.maxTtlSeconds
  ) {
    throw new TypeError(
      "Invalid registry limits: minTtlSeconds <= defaultTtlSeconds <= maxTtlSeconds",
    );
  }
  return limits;
}

/**
 * Defines an agent registry: its routes and its Durable Object class.
 *
 * @example
 * ```ts
 * // registry.ts, with wrangler.toml binding EDGELINK_REGISTRY to class EdgelinkRegistry
 * import { defineRegistry } from "edgelink/registry";
 *
 * const registry = defineRegistry({ auth: { apiKeys: { secret: "REGISTRY_API_KEYS" } } });
 * export const { EdgelinkRegistry } = registry;
 * export default registry;
 * ```
 * Then `POST /agents {"card": ...}` registers, `GET /agents?tag=travel` discovers, and
 * `POST /agents/{id}/heartbeat` keeps an entry alive.
 */
export function defineRegistry<Env extends object = Record<string, unknown>>(
  config: RegistryConfig<Env>,
): RegistryWorker<Env> {
  if (!config?.auth) {
    throw new TypeError("defineRegistry needs auth: an open registry lets anyone list any URL");
  }
  const auth = checkAuth(config.auth);
  const limits = checkLimits(config.limits ?? {});
  const binding = config.binding ?? "EDGELINK_REGISTRY";

  class EdgelinkRegistry extends RegistryObject<Env> {
    protected override get limits(): RegistryLimits {
      return limits;
    }
  }

  const verify = config.verify ?? {};
  if (
    verify.timeoutMs !== undefined &&
    !(Number.isInteger(verify.timeoutMs) && verify.timeoutMs >= 1 && verify.timeoutMs <= 30_000)
  ) {
    throw new TypeError("Invalid registry verify.timeoutMs: a whole number from 1 to 30000");
  }
  const app = createRegistryApp<Env>({
    auth,
    limits,
    verify,
    registry: (env) => {
      const ns = (env as Record<string, unknown>)[binding];
      if (!ns || typeof (ns as DurableObjectNamespace).idFromName !== "function") {
        throw new Error(`The registry's Durable Object binding ${binding} is missing`);
      }
      return ns as DurableObjectNamespace<RegistryObject>;
    },
  });
  return {
    fetch: (request, env, ctx) => app.fetch(request, env, ctx),
    app,
    EdgelinkRegistry,
    limits,
  };
}
