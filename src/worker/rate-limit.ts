import type { Context, MiddlewareHandler } from "hono";
import { basePath } from "hono/route";
import { ownerOf, type Principal } from "../agent/access/auth";
import type { ResolvedLimiter } from "../agent/access/rate-limit";
import type { Agent } from "../agent/definition";
import { A2AError, errorReference } from "../protocol/errors";
import { logEvent } from "../telemetry/log";
import { type AuthVariables, refusal, tenantFor } from "./auth";
import { errorHeaders } from "./errors";
import { requestedTenant } from "./tenant";

/**
 * What a Workers Rate Limiting binding offers (`[[ratelimits]]` in wrangler.toml):
 * `limit({ key })` counts one request for `key` and says whether it is within the limit.
 */
export interface RateLimitBinding {
  limit(options: { key: string }): Promise<{ success: boolean }>;
}

type Vars<Env extends object> = { Bindings: Env; Variables: AuthVariables };

/**
 * Where a route's tenant is known: in its path (`/{tenant}/...`, or none), or only in the
 * JSON-RPC body (`params.tenant`), checked with `bodyTenant` once it is parsed.
 */
export type TenantSource = "path" | "body";

/** The rate limits of one app: route middleware, and the check for a body's tenant. */
export interface RateLimiter<Env extends object> {
  /**
   * Counts the request against its caller's limit and, when the route tells its tenant
   * before the body, against the tenant's; a refusal is a 429 in the route's binding.
   * Runs after authentication and before the body is read.
   */
  guard(tenantFrom: TenantSource): MiddlewareHandler<Vars<Env>>;
  /**
   * Counts a JSON-RPC request against the tenant its `params.tenant` names, when the
   * caller may name one (anonymous, or the multi-tenant admin role); otherwise the guard
   * has counted it already. Throws the 429 as an A2AError.
   */
  bodyTenant(c: Context<Vars<Env>>, tenant: string): Promise<void>;
}

/**
 * A host no stranger can reach: loopback, or a name under a TLD that never resolves on
 * the internet (RFC 6761: .localhost, .test, .invalid, .example; and mDNS .local).
 */
function isPrivateHost(url: string): boolean {
  // The origin (the text before the path) decides: a URL is parsed once per origin.
  const end = url.indexOf("/", url.indexOf("//") + 2);
  const origin = end < 0 ? url : url.slice(0, end);
  if (origin === privateOrigin) return true;
  const host = new URL(url).hostname;
  const known =
    ["localhost", "127.0.0.1", "[::1]"].includes(host) ||
    /\.(localhost|test|invalid|example|local)$/.test(host);
  if (known) privateOrigin = origin;
  return known;
}
let privateOrigin = "";

/** Whether the tenant a caller acts in is its own whatever the request names. */
const tenantIsFixed = (p: Principal) => p.scheme !== "anonymous" && p.allTenants !== true;

/**
 * The rate limits `agent.rateLimit` configures. The bindings are looked up per request in
 * `env` (a Worker has no env before its first request); a binding the operator named and
 * the Worker lacks fails every limited request with a configuration error naming it.
 */
export function rateLimiter<Env extends object>(agent: Agent<Env>): RateLimiter<Env> {
  const config = agent.rateLimit;
  let warned = false;
  const logged = new Set<string>();

  /** A configuration error, logged once, answered every time: never a silent pass. */
  const misconfigured = (message: string, cause?: unknown): A2AError => {
    const reference = errorReference();
    if (!logged.has(message)) {
      logged.add(message);
      logEvent("error", `edgelink: ${message}`, { reference, error: cause });
    }
    return new A2AError("Internal", message, { reference });
  };

  const bindingOf = (env: Env, limiter: ResolvedLimiter | null): RateLimitBinding | null => {
    if (limiter === null) return null;
    const value = (env as Record<string, unknown>)[limiter.binding];
    if (value === undefined && !limiter.required) return null;
    if (typeof (value as RateLimitBinding | undefined)?.limit !== "function") {
      throw misconfigured(notABinding(limiter));
    }
    return value as RateLimitBinding;
  };

  /** One request counted on `limiter`; a refusal is thrown as a RateLimited error. */
  const count = async (
    binding: RateLimitBinding,
    limiter: ResolvedLimiter,
    scope: "principal" | "tenant",
    key: string,
  ): Promise<void> => {
    let success: unknown;
    let failure: unknown;
    try {
      success = ((await binding.limit({ key })) as { success?: unknown } | null)?.success;
    } catch (error) {
      failure = error;
    }
    if (typeof success !== "boolean") {
      // It threw, or answered without `{ success: boolean }`: not a working limiter.
      throw misconfigured(
        `${limiter.option}: the rate limit binding ${limiter.binding} failed; check its [[ratelimits]] declaration`,
        failure,
      );
    }
    if (success) return;
    const seconds = String(limiter.periodSeconds);
    throw new A2AError(
      "RateLimited",
      `Rate limit exceeded for this ${scope === "principal" ? "caller" : "tenant"}; retry after ${seconds} seconds`,
      { limit: scope, retryAfterSeconds: seconds },
    );
  };

  const countTenant = async (env: Env, tenant: string) => {
    const binding = bindingOf(env, config?.perTenant ?? null);
    if (binding && config?.perTenant) {
      await count(binding, config.perTenant, "tenant", await tenantKey(tenant));
    }
  };

  /** The tenant a route names before its body, or null when only the body can tell. */
  const pathTenant = (c: Context<Vars<Env>>, from: TenantSource): string | null => {
    const principal = c.get("principal");
    if (tenantIsFixed(principal)) return principal.tenant;
    if (from === "body") return null;
    try {
      return tenantFor(principal, requestedTenant(c.req.param("tenant"), "tenant"));
    } catch {
      // A bad or foreign tenant: the route's handler refuses it with its own error.
      return null;
    }
  };

  const refuse = (c: Context<Vars<Env>>, error: unknown) => {
    if (!(error instanceof A2AError)) throw error;
    return refusal(c.req.raw, error, errorHeaders(error), basePath(c));
  };

  /** The counting itself, once a binding is there to count on. */
  const counted = async (
    c: Context<Vars<Env>>,
    from: TenantSource,
    perPrincipal: RateLimitBinding | null,
  ): Promise<Response | null> => {
    try {
      if (perPrincipal && config?.perPrincipal) {
        const key = await principalKey(c.get("principal"), c.req.raw);
        await count(perPrincipal, config.perPrincipal, "principal", key);
      }
      const tenant = pathTenant(c, from);
      if (tenant !== null) await countTenant(c.env, tenant);
    } catch (error) {
      return refuse(c, error);
    }
    return null;
  };

  return {
    // Not async: with no binding to count on, a request goes on without a promise of its own.
    guard: (from) => (c, next) => {
      if (config === null) return next();
      let perPrincipal: RateLimitBinding | null;
      let perTenant: RateLimitBinding | null;
      try {
        perPrincipal = bindingOf(c.env, config.perPrincipal);
        perTenant = bindingOf(c.env, config.perTenant);
      } catch (error) {
        return Promise.resolve(refuse(c, error));
      }
      if (!perPrincipal && !perTenant) {
        if (!warned && !isPrivateHost(c.req.url)) {
          warned = true;
          logEvent(
            "warn",
            `edgelink: ${agent.card.name} is not rate-limited: declare [[ratelimits]] EDGELINK_PRINCIPAL_RATE_LIMIT and EDGELINK_TENANT_RATE_LIMIT in wrangler.toml, or set rateLimit: false`,
          );
        }
        return next();
      }
      return counted(c, from, perPrincipal).then(
        (refused): Response | Promise<Response | undefined> =>
          refused ?? (next() as Promise<undefined>),
      );
    },
    bodyTenant: async (c, tenant) => {
      if (config === null || tenantIsFixed(c.get("principal"))) return;
      await countTenant(c.env, tenant);
    },
  };
}

/**
 * At load: every binding `rateLimit` names must be a Rate Limiting binding of the Worker,
 * or the Worker does not start (a TypeError naming the option). The env the Worker loads
 * with is the one its requests get; where none is readable at load, the same check runs
 * on each request instead.
 */
export function checkRateLimitBindings(agent: Agent<never>, env: unknown): void {
  if (agent.rateLimit === null || typeof env !== "object" || env === null) return;
  for (const limiter of [agent.rateLimit.perPrincipal, agent.rateLimit.perTenant]) {
    if (!limiter?.required) continue;
    const value = (env as Record<string, unknown>)[limiter.binding];
    if (typeof (value as RateLimitBinding | undefined)?.limit !== "function") {
      throw new TypeError(notABinding(limiter));
    }
  }
}

/** Missing, or something else of that name (a variable, a KV namespace). */
const notABinding = ({ option, binding }: ResolvedLimiter) =>
  `${option}: ${binding} is not a rate limit binding of this Worker; declare it in wrangler.toml ([[ratelimits]] name = "${binding}")`;

/**
 * The key a caller is counted under: its owner (scheme, issuer and subject), so no two
 * schemes or issuers share a count; an anonymous caller's IP address (an IPv6 address by
 * its /64, which one client holds whole). Hashed: keys stay short and subjects do not
 * travel to the limiter.
 */
export function principalKey(principal: Principal, request: Request): Promise<string> {
  if (principal.scheme === "anonymous") {
    const ip = request.headers.get("CF-Connecting-IP") ?? "";
    return hashedKey("principal", ["anonymous", ipPrefix(ip)]);
  }
  return hashedKey("principal", ["owner", ownerOf(principal)]);
}

/** The key a tenant is counted under ("" is the default tenant). */
export function tenantKey(tenant: string): Promise<string> {
  return hashedKey("tenant", [tenant]);
}

const encoder = new TextEncoder();

async function hashedKey(scope: string, parts: string[]): Promise<string> {
  // A JSON array of strings: no two different lists have the same text.
  const digest = await crypto.subtle.digest("SHA-256", encoder.encode(JSON.stringify(parts)));
  return `edgelink:${scope}:${btoa(String.fromCharCode(...new Uint8Array(digest)))}`;
}

/** An IPv4 address as is; an IPv6 address as its first four groups (its /64). */
export function ipPrefix(ip: string): string {
  // IPv4, or IPv4 written inside IPv6 (::ffff:192.0.2.1): the whole address.
  if (!ip.includes(":") || ip.includes(".")) return ip;
  const [head = "", tail] = ip.toLowerCase().split("::");
  const left = head ? head.split(":") : [];
  const right = tail ? tail.split(":") : [];
  const zeros = Array(Math.max(8 - left.length - right.length, 0)).fill("0");
  const groups = [...left, ...zeros, ...right].slice(0, 4);
  return `${groups.map((g) => g.replace(/^0+(?=.)/, "")).join(":")}::/64`;
}
