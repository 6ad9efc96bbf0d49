import type { Context, MiddlewareHandler } from "hono";
import { basePath } from "hono/route";
import { ownerOf, type Principal } from "../agent/access/auth";
import type { ContextIdGuard, RouteEntry } from "../agent/routes";
import { A2AError } from "../protocol/errors";
import { refusal, tenantFor } from "./auth";
import { requestedTenant } from "./tenant";

/**
 * Whose data one request reaches, resolved by the route table's scoping guard before the
 * handler runs and read by the handler as `c.get("scope")`. A handler never works out a
 * tenant, an owner or a context id's validity itself: it asks its scope.
 */
export interface CallerScope {
  /** The tenant the caller acts in (a `/{tenant}` prefix naming another was refused). */
  readonly tenant: string;
  /** The caller's owner within it; "" on a route scoped to the tenant only, or anonymous. */
  readonly owner: string;
  /**
   * The same caller acting in a tenant the body names (JSON-RPC's `params.tenant`): this
   * scope when it names none or its own, a 403 for another the caller may not act in.
   */
  within(requested: string): CallerScope;
  /**
   * A context id the request names, verified for this caller as the route declares: the
   * id, or null for a filter that matches nothing. Refused (`write`: 400 naming `field`;
   * `read`: 404) when it is not the caller's. `field` and `use` default to the route's
   * declaration; a route declaring no context ids refuses every call, so a handler cannot
   * name a conversation its route did not declare.
   */
  contextId(value: string, field?: string, use?: ContextIdGuard["use"]): Promise<string | null>;
}

/** How an app verifies context ids (the agent's issued-id keys); absent in an app without them. */
export type ContextVerifier = (
  c: Context,
  scope: { tenant: string; owner: string },
  value: string,
  field: string,
  use: ContextIdGuard["use"],
) => Promise<string | null>;

/** The Hono variables the scoping guard sets. */
export type ScopeVariables = { principal: Principal; scope: CallerScope };

class RequestScope implements CallerScope {
  /** Made at the first id verified: most requests name none before their handler. */
  private verified: Map<string, Promise<string | null>> | null = null;

  constructor(
    private readonly c: Context,
    private readonly route: string,
    private readonly principal: Principal,
    private readonly guard: "none" | ContextIdGuard,
    private readonly verify: ContextVerifier | null,
    readonly tenant: string,
    readonly owner: string,
  ) {}

  within(requested: string): CallerScope {
    if (requested === "" || requested === this.tenant) return this;
    const tenant = tenantFor(this.principal, requested);
    if (tenant === this.tenant) return this;
    const { c, route, principal, guard, verify, owner } = this;
    return new RequestScope(c, route, principal, guard, verify, tenant, owner);
  }

  contextId(value: string, field?: string, use?: ContextIdGuard["use"]): Promise<string | null> {
    const guard = this.guard;
    if (guard === "none" || this.verify === null) {
      return Promise.reject(
        new A2AError(
          "Internal",
          `Route ${JSON.stringify(this.route)} names a context id but declares none (guards.contextIds)`,
        ),
      );
    }
    const how = use ?? guard.use;
    const where = field ?? guard.field ?? guard.name;
    // Verified once per request, whoever asks: the guard before the handler, then the handler.
    const key = `${how}\u0000${where}\u0000${value}`;
    this.verified ??= new Map();
    let found = this.verified.get(key);
    if (!found) {
      found = this.verify(this.c, this, value, where, how);
      this.verified.set(key, found);
    }
    return found;
  }
}

/** The value a path or query declaration names; undefined when the request names none. */
function declaredValue(c: Context, guard: ContextIdGuard): string | undefined {
  if (guard.in === "path") return c.req.param(guard.name) || undefined;
  if (guard.in === "query") return c.req.query(guard.name);
  return undefined;
}

/**
 * The scoping and context-id guards of a declaration, as one middleware: the caller's
 * tenant (from the `/{tenant}` prefix, 400 when malformed, 403 when not the caller's) and
 * owner, then a context id the declaration names in the path or query, verified before the
 * handler runs. Null for a route scoped to nothing.
 */
export function scopeGuard<S>(
  entry: RouteEntry<S>,
  verify: ContextVerifier | null,
): MiddlewareHandler | null {
  const { scoping, contextIds } = entry.guards;
  if (scoping === "none") return null;
  const early = contextIds !== "none" && contextIds.in !== "body" ? contextIds : null;
  const refuse = (c: Context, error: unknown) => {
    if (!(error instanceof A2AError)) throw error;
    return refusal(c.req.raw, error, {}, basePath(c));
  };
  // Not async: a route naming no context id before its handler adds no promise of its own.
  return (c, next) => {
    const principal = c.get("principal") as Principal;
    let named: string | undefined;
    let scope: RequestScope;
    try {
      const tenant = tenantFor(principal, requestedTenant(c.req.param("tenant"), "tenant"));
      const owner = scoping === "owner" ? ownerOf(principal) : "";
      scope = new RequestScope(c, entry.id, principal, contextIds, verify, tenant, owner);
      c.set("scope", scope);
      named = early ? declaredValue(c, early) : undefined;
    } catch (error) {
      return Promise.resolve(refuse(c, error));
    }
    if (named === undefined) return next();
    return scope.contextId(named).then(
      () => next(),
      (error: unknown) => refuse(c, error),
    );
  };
}
