import type { JWK } from "jose";
import { JWS_ALGORITHMS } from "../../jwks/algorithms";
import { isKeyUrl } from "../../jwks/discovery";
import { isJwkSet, MAX_JWKS_KEYS } from "../../jwks/remote";
import type { SecurityScheme } from "../../protocol/card/agent-card";

/**
 * Who is calling: the subject that owns the tasks and conversations it creates, and the
 * tenant it belongs to. Without `auth` every caller is the one anonymous principal.
 */
export interface Principal {
  /**
   * Stable id of the caller within its scheme and issuer (a JWT's `sub`, an API key's
   * configured subject or its hash, ...). Never compare subjects alone: {@link ownerOf}.
   */
  subject: string;
  /** Who vouches for the subject: the bearer token's `iss`; absent for other schemes. */
  issuer?: string;
  /** The tenant the caller acts in; "" for the default tenant. */
  tenant: string;
  /** How the caller proved it: which configured scheme accepted it. */
  scheme: "bearer" | "apiKey" | "custom" | "anonymous";
  /** Verified claims (JWT payload) when the scheme has any. */
  claims?: Record<string, unknown>;
  /**
   * The multi-tenant admin role: the caller may act in any tenant a request names (a
   * `/{tenant}` prefix or `params.tenant`), else in its own. It acts there as itself:
   * it owns what it creates and sees only that, as every principal does.
   */
  allTenants?: boolean;
}

/**
 * The owner of what a principal creates (tasks, conversations, registry entries): its
 * scheme, issuer and subject as one string no other principal can produce. JSON keeps the
 * three apart whatever they contain, so a token whose `sub` is "apiKey:0", or a custom
 * subject spelled like an API key's, is another owner. Anonymous callers own "".
 * @example
 * ownerOf({ scheme: "bearer", issuer: "https://login.example.com/", subject: "u1", tenant: "" });
 * // '["bearer","https://login.example.com/","u1"]'
 */
export function ownerOf(principal: Principal): string {
  if (principal.scheme === "anonymous") return "";
  return JSON.stringify([principal.scheme, principal.issuer ?? "", principal.subject]);
}

/** What a custom `authenticate` answers: a subject and, optionally, its tenant. */
export interface PrincipalInput {
  subject: string;
  tenant?: string;
  claims?: Record<string, unknown>;
  /** The multi-tenant admin role (see {@link Principal.allTenants}). */
  allTenants?: boolean;
}

/** The caller of an agent without `auth`: everyone, in the default tenant. */
export const ANONYMOUS: Principal = Object.freeze({
  subject: "",
  tenant: "",
  scheme: "anonymous",
}) as Principal;

/** JWT bearer tokens (RFC 6750), verified with `jose`. */
export interface BearerAuth {
  /** The `iss` every token must carry. */
  issuer: string;
  /** The `aud` tokens must be issued for (any of them). */
  audience: string | string[];
  /** Accepted signature algorithms, e.g. `["RS256"]` or `["EdDSA"]`. `none` is never accepted. */
  algorithms: string[];
  /** Where the issuer publishes its keys (fetched and cached). */
  jwksUrl?: string;
  /** Public JWKs to verify with, instead of fetching them. */
  keys?: JWK[];
  /**
   * Find the JWKS through OIDC discovery: `{issuer}/.well-known/openid-configuration`.
   * The card then declares an `openIdConnect` scheme.
   */
  discovery?: boolean;
  /** Claim that names the caller's tenant; without one every caller is in tenant "". */
  tenantClaim?: string;
  /**
   * An OAuth scope (in the token's space-separated `scope` claim, or its `scp` list) that
   * gives the caller the multi-tenant admin role ({@link Principal.allTenants}). Unset:
   * no token has it.
   */
  allTenantsScope?: string;
  /** Leeway for `exp` and `nbf`, in seconds: finite, from 0 to 3600. Default 30. */
  clockToleranceSeconds?: number;
}

/**
 * API keys read from a secret (never from source): `wrangler secret put <secret>` with
 * either comma-separated keys, or JSON `{"<key>": {"subject": "...", "tenant": "..."}}`
 * (add `"allTenants": true` for the multi-tenant admin role). A key without a subject is
 * known by `sha256:` and the base64url of the first 128 bits of its SHA-256, so it keeps
 * its tasks whatever other keys are added or removed.
 */
export interface ApiKeyAuth {
  /** Name of the env binding (a secret) holding the keys. */
  secret: string;
  /** Header the key travels in; the card names it. Default `X-API-Key`. */
  header?: string;
}

/**
 * Authentication of every request except the public card and JWKS, before any Durable
 * Object is touched. Configure one or more; a request is accepted by the first scheme
 * whose credential it carries.
 * @example
 * defineAgent({
 *   card,
 *   auth: {
 *     bearer: {
 *       issuer: "https://login.example.com/",
 *       audience: "https://agent.example.com",
 *       algorithms: ["RS256"],
 *       jwksUrl: "https://login.example.com/.well-known/jwks.json",
 *       tenantClaim: "org_id",
 *     },
 *     apiKeys: { secret: "AGENT_API_KEYS" },
 *   },
 * });
 */
export interface AuthOptions<Env = unknown> {
  bearer?: BearerAuth;
  apiKeys?: ApiKeyAuth;
  /**
   * Anything else (mTLS via `request.cf`, a gateway header, a session): answer the
   * principal, or null when the request carries no valid credential. Tried after the
   * bearer and API key schemes.
   */
  authenticate?: (
    request: Request,
    env: Env,
  ) => PrincipalInput | null | Promise<PrincipalInput | null>;
  /** How the card describes `authenticate`'s scheme (e.g. `{ type: "mutualTLS" }`). */
  customScheme?: SecurityScheme;
}

/** The card's security schemes, derived from what is configured (never declared by hand). */
export function securitySchemesOf(auth: AuthOptions<never>): Record<string, SecurityScheme> {
  const schemes: Record<string, SecurityScheme> = {};
  if (auth.bearer) {
    schemes.bearer = auth.bearer.discovery
      ? {
          type: "openIdConnect",
          openIdConnectUrl: `${auth.bearer.issuer.replace(/\/+$/, "")}/.well-known/openid-configuration`,
        }
      : { type: "http", scheme: "bearer", bearerFormat: "JWT" };
  }
  if (auth.apiKeys) {
    schemes.apiKey = { type: "apiKey", in: "header", name: auth.apiKeys.header ?? "X-API-Key" };
  }
  if (auth.authenticate) {
    schemes.custom = auth.customScheme ?? {
      type: "http",
      scheme: "custom",
      description: "Authenticated by the agent's own authenticate(request, env)",
    };
  }
  return schemes;
}

/** The largest `clockToleranceSeconds` accepted. */
const MAX_TOLERANCE = 3600;

const nonEmpty = (value: unknown): value is string => typeof value === "string" && value !== "";

/** Checks an `auth` option at definition time, naming the bad field. */
export function checkAuth<Env>(auth: AuthOptions<Env>): AuthOptions<Env> {
  const fail = (why: string): never => {
    throw new TypeError(`Invalid auth: ${why}`);
  };
  if (typeof auth !== "object" || auth === null) fail("expected an object");
  if (!auth.bearer && !auth.apiKeys && !auth.authenticate) {
    fail("configure at least one of bearer, apiKeys or authenticate");
  }
  const b = auth.bearer;
  if (b) checkBearer(b, fail);
  if (auth.apiKeys) {
    if (!nonEmpty(auth.apiKeys.secret)) fail("apiKeys.secret names the secret holding the keys");
    const header = auth.apiKeys.header;
    if (
      header !== undefined &&
      (!nonEmpty(header) || !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(header))
    ) {
      fail("apiKeys.header must be an HTTP header name");
    }
  }
  if (auth.authenticate !== undefined && typeof auth.authenticate !== "function") {
    fail("authenticate must be a function");
  }
  return auth;
}

function checkBearer(b: BearerAuth, fail: (why: string) => never): void {
  if (!nonEmpty(b.issuer)) fail("bearer.issuer must be a non-empty string");
  const audiences = typeof b.audience === "string" ? [b.audience] : b.audience;
  if (!Array.isArray(audiences) || audiences.length === 0 || !audiences.every(nonEmpty)) {
    fail("bearer.audience must be a non-empty string or a non-empty list of them");
  }
  if (!Array.isArray(b.algorithms) || b.algorithms.length === 0) {
    fail("bearer.algorithms must list the accepted algorithms (pin them)");
  }
  if (b.algorithms.some((a) => typeof a === "string" && a.toLowerCase() === "none")) {
    fail('bearer.algorithms must not include "none"');
  }
  const unknown = b.algorithms.find((a) => !JWS_ALGORITHMS.includes(a));
  if (unknown !== undefined) {
    fail(`bearer.algorithms: ${unknown} is not supported (${JWS_ALGORITHMS.join(", ")})`);
  }
  if ([b.jwksUrl, b.keys, b.discovery].filter(Boolean).length !== 1) {
    fail("bearer needs exactly one of jwksUrl, keys or discovery: true");
  }
  if (b.jwksUrl !== undefined && !(typeof b.jwksUrl === "string" && isKeyUrl(b.jwksUrl))) {
    fail("bearer.jwksUrl must be an https URL");
  }
  if (b.discovery && !isKeyUrl(b.issuer)) {
    fail("bearer.issuer must be an https URL for discovery");
  }
  if (
    b.keys !== undefined &&
    (!Array.isArray(b.keys) || b.keys.length === 0 || !isJwkSet({ keys: b.keys }))
  ) {
    fail(`bearer.keys must be a non-empty list of at most ${MAX_JWKS_KEYS} public JWKs`);
  }
  // A private or symmetric key here would verify nothing (and should not be in config).
  if (b.keys?.some((k) => k.kty === "oct" || "d" in k || "k" in k)) {
    fail("bearer.keys must hold public keys only (no private or symmetric JWK)");
  }
  const tolerance = b.clockToleranceSeconds;
  // Past an hour, a tolerance is no longer clock skew: it switches expiry off.
  if (
    tolerance !== undefined &&
    !(
      typeof tolerance === "number" &&
      Number.isFinite(tolerance) &&
      tolerance >= 0 &&
      tolerance <= MAX_TOLERANCE
    )
  ) {
    fail(
      `bearer.clockToleranceSeconds must be a finite number >= 0 and at most ${MAX_TOLERANCE}, not ${String(tolerance)}`,
    );
  }
  if (b.tenantClaim !== undefined && !nonEmpty(b.tenantClaim)) {
    fail("bearer.tenantClaim must be a non-empty string");
  }
  if (b.allTenantsScope !== undefined && !nonEmpty(b.allTenantsScope)) {
    fail("bearer.allTenantsScope must be a non-empty string");
  }
}
