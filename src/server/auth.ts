import type { MiddlewareHandler } from "hono";
import { basePath } from "hono/route";
import { ANONYMOUS, type AuthOptions, type BearerAuth, type Principal } from "../agent/auth";
import type { Agent } from "../agent/definition";
import {
  JoseError,
  JwksUnavailableError,
  type KeyResolver,
  localKeySet,
  remoteKeySet,
  verifyJwt,
} from "../jose";
import { A2AError } from "../models/errors";
import { jsonRpcError, restError } from "./errors";

/** The Hono variables Edgelink's middleware sets. */
export type AuthVariables = { principal: Principal };

/** Thrown for a missing or bad credential; `challenge` is the WWW-Authenticate value. */
class Unauthenticated extends A2AError {
  constructor(
    message: string,
    readonly error?: "invalid_token",
  ) {
    super("Unauthenticated", message);
  }
}

const keySets = new Map<string, KeyResolver>();
const discovered = new Map<string, Promise<string>>();

/** The JWKS URL an issuer publishes through OIDC discovery (fetched once per isolate). */
function discoverJwks(issuer: string): Promise<string> {
  const url = `${issuer.replace(/\/+$/, "")}/.well-known/openid-configuration`;
  let found = discovered.get(url);
  if (!found) {
    found = fetch(url)
      .then(async (response) => {
        if (!response.ok) throw new Error(`OIDC discovery ${url} answered ${response.status}`);
        const config = (await response.json()) as { jwks_uri?: unknown };
        if (typeof config.jwks_uri !== "string") throw new Error(`${url} has no jwks_uri`);
        return config.jwks_uri;
      })
      .catch((error) => {
        discovered.delete(url);
        throw error;
      });
    discovered.set(url, found);
  }
  return found;
}

/** The key set a bearer config verifies with; a remote set caches its keys, one per URL. */
async function keySetOf(bearer: BearerAuth): Promise<KeyResolver> {
  if (bearer.keys) {
    const key = JSON.stringify(bearer.keys);
    let set = keySets.get(key);
    if (!set) {
      set = localKeySet({ keys: bearer.keys });
      keySets.set(key, set);
    }
    return set;
  }
  const url = bearer.jwksUrl ?? (await discoverJwks(bearer.issuer));
  let set = keySets.get(url);
  if (!set) {
    set = remoteKeySet(url, { cacheMaxAgeMs: 10 * 60_000 });
    keySets.set(url, set);
  }
  return set;
}

async function verifyBearer(token: string, bearer: BearerAuth): Promise<Principal> {
  try {
    const { payload } = await verifyJwt(token, await keySetOf(bearer), {
      issuer: bearer.issuer,
      audience: bearer.audience,
      algorithms: bearer.algorithms,
      clockToleranceSeconds: bearer.clockToleranceSeconds ?? 30,
      requiredClaims: ["sub", "exp"],
    });
    const tenant = bearer.tenantClaim ? payload[bearer.tenantClaim] : "";
    if (typeof tenant !== "string") {
      throw new Unauthenticated(`The token has no ${bearer.tenantClaim} claim`, "invalid_token");
    }
    const principal: Principal = {
      subject: payload.sub as string,
      tenant,
      scheme: "bearer",
      claims: payload,
    };
    if (bearer.allTenantsScope && scopesOf(payload).includes(bearer.allTenantsScope)) {
      principal.allTenants = true;
    }
    return principal;
  } catch (error) {
    if (error instanceof Unauthenticated) throw error;
    if (error instanceof JoseError) {
      throw new Unauthenticated(`Invalid bearer token: ${error.code}`, "invalid_token");
    }
    // Discovery or the key set failed: our side, not the caller's credential, so no 401
    // (a client would drop a good token) but a 503 it can retry.
    if (error instanceof JwksUnavailableError) {
      throw new A2AError(
        "Unavailable",
        "The bearer token's issuer keys cannot be fetched right now; retry later",
      );
    }
    throw error;
  }
}

/** A token's scopes: the `scope` claim (space-separated, RFC 8693) or an `scp` list. */
function scopesOf(payload: Record<string, unknown>): string[] {
  if (typeof payload.scope === "string") return payload.scope.split(" ");
  if (Array.isArray(payload.scp)) return payload.scp.filter((s) => typeof s === "string");
  return [];
}

const encoder = new TextEncoder();

async function digest(text: string): Promise<ArrayBuffer> {
  return crypto.subtle.digest("SHA-256", encoder.encode(text));
}

/** Key → principal, from the secret: comma-separated keys, or JSON with subjects. */
interface KeyEntry {
  key: string;
  subject: string;
  tenant: string;
  allTenants?: boolean;
}

function parseKeys(raw: string): KeyEntry[] {
  const text = raw.trim();
  if (text.startsWith("{")) {
    const table = JSON.parse(text) as Record<
      string,
      { subject?: string; tenant?: string; allTenants?: unknown }
    >;
    return Object.entries(table).map(([key, v], i) => ({
      key,
      subject: v.subject ?? `apiKey:${i}`,
      tenant: v.tenant ?? "",
      allTenants: v.allTenants === true,
    }));
  }
  return text
    .split(",")
    .map((k) => k.trim())
    .filter(Boolean)
    .map((key, i) => ({ key, subject: `apiKey:${i}`, tenant: "" }));
}

async function verifyApiKey(presented: string, secret: unknown, name: string): Promise<Principal> {
  if (typeof secret !== "string" || secret.trim() === "") {
    throw new A2AError(
      "Internal",
      `The API key secret ${name} is not set; wrangler secret put ${name}`,
    );
  }
  const wanted = await digest(presented);
  let match: Principal | null = null;
  // Every key is compared, in constant time, so timing says nothing about which matched.
  for (const entry of parseKeys(secret)) {
    const equal = crypto.subtle.timingSafeEqual(wanted, await digest(entry.key));
    if (equal && !match) {
      match = { subject: entry.subject, tenant: entry.tenant, scheme: "apiKey" };
      if (entry.allTenants) match.allTenants = true;
    }
  }
  if (!match) throw new Unauthenticated("Invalid API key");
  return match;
}

/** Who sent `request`, by the configured schemes; throws Unauthenticated when nobody. */
export async function authenticate<Env>(
  request: Request,
  env: Env,
  auth: AuthOptions<Env>,
): Promise<Principal> {
  const authorization = request.headers.get("Authorization");
  if (auth.bearer && authorization) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    if (match?.[1]) return verifyBearer(match[1], auth.bearer);
  }
  if (auth.apiKeys) {
    const header = auth.apiKeys.header ?? "X-API-Key";
    const presented = request.headers.get(header);
    if (presented) {
      const secret = (env as Record<string, unknown>)[auth.apiKeys.secret];
      return verifyApiKey(presented, secret, auth.apiKeys.secret);
    }
  }
  if (auth.authenticate) {
    const principal = await auth.authenticate(request, env);
    if (principal) {
      if (typeof principal.subject !== "string" || principal.subject === "") {
        throw new TypeError("auth.authenticate must answer a principal with a non-empty subject");
      }
      const { allTenants, ...rest } = principal;
      const custom: Principal = { ...rest, tenant: principal.tenant ?? "", scheme: "custom" };
      if (allTenants === true) custom.allTenants = true;
      return custom;
    }
  }
  throw new Unauthenticated("Authentication required");
}

/**
 * The WWW-Authenticate challenges for the configured schemes (RFC 9110 §11.6.1), in
 * `realm`; a refused bearer token's challenge says why.
 */
export function challenges<Env>(
  auth: AuthOptions<Env>,
  realmName: string,
  error: A2AError,
): string {
  const realm = `realm=${JSON.stringify(realmName)}`;
  const reason = error instanceof Unauthenticated ? error.error : undefined;
  const out: string[] = [];
  if (auth.bearer) {
    out.push(
      reason
        ? `Bearer ${realm}, error="${reason}", error_description=${JSON.stringify(error.message)}`
        : `Bearer ${realm}`,
    );
  }
  if (auth.apiKeys) out.push(`ApiKey ${realm}, header="${auth.apiKeys.header ?? "X-API-Key"}"`);
  if (auth.authenticate && out.length === 0) out.push(`Custom ${realm}`);
  return out.join(", ");
}

/**
 * A refusal in the binding's shape: JSON-RPC at `POST /` of the app (`base`, where it is
 * mounted, e.g. `/agent`), google.rpc.Status elsewhere.
 */
export function refusal(
  request: Request,
  error: A2AError,
  headers: HeadersInit = {},
  base = "/",
): Response {
  const path = new URL(request.url).pathname;
  const root = base === "/" ? "/" : base.replace(/\/$/, "");
  const rpc = request.method === "POST" && (path === root || path === `${root}/`);
  const response = rpc
    ? Response.json(jsonRpcError(null, error), { status: error.httpStatus })
    : restError(error);
  for (const [k, v] of new Headers(headers)) response.headers.set(k, v);
  return response;
}

/**
 * Middleware: authenticates every request it guards before any Durable Object is
 * touched, and records the principal (ANONYMOUS for an agent without `auth`).
 */
export function requireAuth<Env extends object>(
  agent: Agent<Env>,
): MiddlewareHandler<{ Bindings: Env; Variables: AuthVariables }> {
  return async (c, next) => {
    if (!agent.auth) {
      c.set("principal", ANONYMOUS);
      return next();
    }
    try {
      c.set("principal", await authenticate(c.req.raw, c.env, agent.auth));
    } catch (error) {
      if (error instanceof Unauthenticated) {
        const challenge = { "WWW-Authenticate": challenges(agent.auth, agent.card.name, error) };
        return refusal(c.req.raw, error, challenge, basePath(c));
      }
      // In the binding's shape too (an issuer's keys unavailable: 503).
      if (error instanceof A2AError) return refusal(c.req.raw, error, {}, basePath(c));
      throw error;
    }
    return next();
  };
}

/**
 * The tenant a request acts in: the principal's. A `/{tenant}` prefix or `params.tenant`
 * may repeat it; one that differs is refused (403) unless the principal has the
 * multi-tenant admin role. An agent without `auth` keeps taking the tenant from the
 * request, as one anonymous principal spanning tenants.
 */
export function tenantFor(principal: Principal, requested: string): string {
  if (principal.scheme === "anonymous") return requested;
  if (principal.allTenants === true && requested !== "") return requested;
  if (requested !== "" && requested !== principal.tenant) {
    throw new A2AError(
      "PermissionDenied",
      `The caller's tenant does not allow acting in tenant ${JSON.stringify(requested)}`,
      { tenant: requested },
    );
  }
  return principal.tenant;
}
