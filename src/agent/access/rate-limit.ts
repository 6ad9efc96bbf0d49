/** The binding used for the per-principal limit when `rateLimit.perPrincipal` is not set. */
export const PRINCIPAL_RATE_LIMIT_BINDING = "EDGELINK_PRINCIPAL_RATE_LIMIT";
/** The binding used for the per-tenant limit when `rateLimit.perTenant` is not set. */
export const TENANT_RATE_LIMIT_BINDING = "EDGELINK_TENANT_RATE_LIMIT";

/**
 * One limiter: the name of a Workers Rate Limiting binding (`[[ratelimits]]` in
 * wrangler.toml), or the name with the period that binding declares. The period is what
 * a refused caller is told to wait (`Retry-After`); the binding cannot report it, so say
 * it here when it is 10. Default 60, the longest period a binding can have.
 */
export type RateLimiterOption = string | { binding: string; periodSeconds?: 10 | 60 };

/**
 * Rate limits on every A2A operation, the chat endpoint and the agent's own endpoints,
 * counted by Cloudflare's Rate Limiting binding. The agent card, the webhook JWKS and the
 * inspector page are never limited.
 *
 * Each limiter is a binding name (that binding must exist, or every limited request fails
 * with a configuration error), `false` (off), or unset: then the binding with the
 * conventional name (`EDGELINK_PRINCIPAL_RATE_LIMIT`, `EDGELINK_TENANT_RATE_LIMIT`) is
 * used when the Worker has one. `rateLimit: false` turns both off.
 * @example
 * ```ts
 * // wrangler.toml:
 * // [[ratelimits]]
 * // name = "CALLER_LIMIT"
 * // namespace_id = "1001"
 * // simple = { limit = 120, period = 60 }
 * defineAgent({
 *   card,
 *   handler,
 *   rateLimit: { perPrincipal: "CALLER_LIMIT", perTenant: false },
 * });
 * ```
 */
export interface RateLimitOptions {
  /**
   * Counts each caller: an authenticated principal by its scheme, issuer and subject; an
   * anonymous caller (an agent without `auth`) by its IP address.
   */
  perPrincipal?: RateLimiterOption | false;
  /** Counts each tenant, over all of its callers. */
  perTenant?: RateLimiterOption | false;
}

/** A limiter as resolved at `defineAgent` time. */
export interface ResolvedLimiter {
  /** The env binding name. */
  binding: string;
  /** The binding's period, sent as `Retry-After`. */
  periodSeconds: 10 | 60;
  /** The option that named it, for configuration errors. */
  option: "rateLimit.perPrincipal" | "rateLimit.perTenant";
  /** Named by the operator: a missing binding is an error, not "no limit". */
  required: boolean;
}

/** Both limiters; null when turned off. */
export interface ResolvedRateLimit {
  perPrincipal: ResolvedLimiter | null;
  perTenant: ResolvedLimiter | null;
}

const BINDING_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;
const KEYS = new Set(["perPrincipal", "perTenant"]);

/**
 * Validates `rateLimit`; a bad option throws a TypeError naming it, when the Worker loads.
 * Null: both limiters are off.
 */
export function resolveRateLimit(
  option: RateLimitOptions | false | undefined,
): ResolvedRateLimit | null {
  if (option === false) return null;
  if (option !== undefined && (typeof option !== "object" || option === null)) {
    throw new TypeError("rateLimit must be an object or false");
  }
  const given = option ?? {};
  const unknown = Object.keys(given).filter((key) => !KEYS.has(key));
  if (unknown.length) {
    throw new TypeError(
      `rateLimit: unknown option ${unknown.join(", ")} (the options are perPrincipal and perTenant)`,
    );
  }
  const resolved: ResolvedRateLimit = {
    perPrincipal: limiter(
      "rateLimit.perPrincipal",
      given.perPrincipal,
      PRINCIPAL_RATE_LIMIT_BINDING,
    ),
    perTenant: limiter("rateLimit.perTenant", given.perTenant, TENANT_RATE_LIMIT_BINDING),
  };
  return resolved.perPrincipal || resolved.perTenant ? resolved : null;
}

function limiter(
  name: ResolvedLimiter["option"],
  value: RateLimiterOption | false | undefined,
  conventional: string,
): ResolvedLimiter | null {
  if (value === false) return null;
  if (value === undefined) {
    return { binding: conventional, periodSeconds: 60, option: name, required: false };
  }
  const { binding, periodSeconds = 60 } = typeof value === "string" ? { binding: value } : value;
  if (typeof binding !== "string" || !BINDING_NAME.test(binding)) {
    throw new TypeError(
      `${name} must name a rate limit binding (letters, digits and _), or be false`,
    );
  }
  if (periodSeconds !== 10 && periodSeconds !== 60) {
    throw new TypeError(`${name}.periodSeconds must be 10 or 60, the binding's period`);
  }
  return { binding, periodSeconds, option: name, required: true };
}
