import type { MiddlewareHandler } from "hono";
import { basePath } from "hono/route";
import { base64url, createLocalJWKSet, errors, type JWTVerifyGetKey } from "jose";
import { scopesOf } from "../agent/access/approvers";
import { ANONYMOUS, type AuthOptions, type BearerAuth, type Principal } from "../agent/access/auth";
import type { Agent } from "../agent/definition";
import { discoverJwksUri, JwksUnavailableError, remoteKeySet, verifyJwt } from "../jwks";
import { A2AError } from "../protocol/errors";
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

/** Key sets, one per configured key list or URL, so their caches live as long as the isolate. */
const keySets = new Map<string, JWTVerifyGetKey>();

/** The key set a bearer config verifies with. */
async function keySetOf(bearer: BearerAuth): Promise<JWTVerifyGetKey> {
  if (bearer.keys) {
    const key = JSON.stringify(bearer.keys);
    let set = keySets.get(key);
    if (!set) {
      set = createLocalJWKSet({ keys: bearer.keys });
      keySets.set(key, set);
    }
    return set;
  }
  const url = bearer.jwksUrl ?? (await discoverJwksUri(bearer.issuer));
  let set = keySets.get(url);
  if (!set) {
    set = remoteKeySet(url);
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
      clockTolerance: bearer.clockToleranceSeconds ?? 30,
      requiredClaims: ["sub", "exp"],
    });
    // "" is the anonymous owner and a number or an object is no identity (RFC 7519 §4.1.2).
    if (typeof payload.sub !== "string" || payload.sub === "") {
      throw new Unauthenticated(
        "Invalid bearer token: sub must be a non-empty string",
        "invalid_token",
      );
    }
    const tenant = bearer.tenantClaim ? payload[bearer.tenantClaim] : "";
    if (typeof tenant !== "string") {
      throw new Unauthenticated(`The token has no ${bearer.tenantClaim} claim`, "invalid_token");
    }
    const principal: Principal = {
      subject: payload.sub,
      issuer: bearer.issuer,
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
    // Discovery or the key set failed: our side, not the caller's credential, so no 401
    // (a client would drop a good token) but a 503 it can retry.
    if (error instanceof JwksUnavailableError) {
      throw new A2AError(
        "Unavailable",
        "The bearer token's issuer keys cannot be fetched right now; retry later",
      );
    }
    if (error instanceof errors.JOSEError) {
      throw new Unauthenticated(`Invalid bearer token: ${error.code}`, "invalid_token");
    }
    throw error;
  }
}

const encoder = new TextEncoder();

async function digest(text: string): Promise<ArrayBuffer> {
  return crypto.subtle.digest("SHA-256", encoder.encode(text));
}

/** Key → principal, from the secret: comma-separated keys, or JSON with subjects. */
interface KeyEntry {
  key: string;
  /** The configured subject; none: derived from the key's hash. */
  subject?: string;
  tenant: string;
  allTenants?: boolean;
}

/** The secret's keys; throws a message naming what is wrong, never echoing a key. */
function parseKeys(raw: string): KeyEntry[] {
  const text = raw.trim();
  if (!text.startsWith("{")) {
    return text
      .split(",")
      .map((k) => k.trim())
      .filter(Boolean)
      .map((key) => ({ key, tenant: "" }));
  }
  let table: unknown;
  try {
    table = JSON.parse(text);
  } catch {
    throw new Error("it is neither comma-separated keys nor valid JSON");
  }
  if (typeof table !== "object" || table === null || Array.isArray(table)) {
    throw new Error("its JSON must be an object of keys");
  }
  return Object.entries(table).map(([key, value], i) => {
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      throw new Error(`the entry of key #${i} must be an object ({"subject": ..., "tenant": ...})`);
    }
    const v = value as Record<string, unknown>;
    if (v.subject !== undefined && (typeof v.subject !== "string" || v.subject === "")) {
      throw new Error(`the subject of key #${i} must be a non-empty string`);
    }
    if (v.tenant !== undefined && typeof v.tenant !== "string") {
      throw new Error(`the tenant of key #${i} must be a string`);
    }
    const entry: KeyEntry = { key, tenant: (v.tenant as string | undefined) ?? "" };
    if (v.subject !== undefined) entry.subject = v.subject as string;
    if (v.allTenants === true) entry.allTenants = true;
    return entry;
  });
}

/**
 * A key's subject when none is configured: from its hash, never its position, so adding
 * or removing other keys moves no task. 128 bits: no two keys meet by chance.
 */
function derivedSubject(hash: ArrayBuffer): string {
  return `sha256:${base64url.encode(new Uint8Array(hash, 0, 16))}`;
}

async function verifyApiKey(presented: string, secret: unknown, name: string): Promise<Principal> {
  if (typeof secret !== "string" || secret.trim() === "") {
    throw new A2AError(
      "Internal",
      `The API key secret ${name} is not set; wrangler secret put ${name}`,
    );
  }
  let entries: KeyEntry[];
  try {
    entries = parseKeys(secret);
  } catch (error) {
    throw new A2AError(
      "Internal",
      `The API key secret ${name} is invalid: ${(error as Error).message}`,
    );
  }
  const wanted = await digest(presented);
  let match: Principal | null = null;
  // Every key is compared, in constant time, so timing says nothing about which matched.
  for (const entry of entries) {
    const hash = await digest(entry.key);
    const equal = crypto.subtle.timingSafeEqual(wanted, hash);
    if (equal && !match) {
      const subject = entry.subject ?? derivedSubject(hash);
      match = { subject, tenant: entry.tenant, scheme: "apiKey" };
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
      if (principal.tenant !== undefined && typeof principal.tenant !== "string") {
        throw new TypeError("auth.authenticate must answer a string tenant (or none)");
      }
      // Only these members: a custom principal cannot claim another scheme or an issuer.
      const custom: Principal = {
        subject: principal.subject,
        tenant: principal.tenant ?? "",
        scheme: "custom",
      };
      if (principal.claims !== undefined) custom.claims = principal.claims;
      if (principal.allTenants === true) custom.allTenants = true;
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
  type Guarded = Parameters<MiddlewareHandler<{ Bindings: Env; Variables: AuthVariables }>>;
  const authenticated = async (c: Guarded[0], next: Guarded[1], auth: AuthOptions<Env>) => {
    try {
      c.set("principal", await authenticate(c.req.raw, c.env, auth));
    } catch (error) {
      if (error instanceof Unauthenticated) {
        const challenge = { "WWW-Authenticate": challenges(auth, agent.card.name, error) };
        return refusal(c.req.raw, error, challenge, basePath(c));
      }
      // In the binding's shape too (an issuer's keys unavailable: 503).
      if (error instanceof A2AError) return refusal(c.req.raw, error, {}, basePath(c));
      throw error;
    }
    return next();
  };
  // `agent.auth` is read per request (a test may set it after the app is built). Without
  // it the request goes on with no promise of this layer's own.
  return (c, next) => {
    if (!agent.auth) {
      c.set("principal", ANONYMOUS);
      return next();
    }
    return authenticated(c, next, agent.auth);
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
