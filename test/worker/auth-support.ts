import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { exportJWK, generateKeyPair, SignJWT } from "jose";
import type { AgentConfig } from "../../src/agent/agent-config";
import { defineAgent } from "../../src/worker/app/define-agent";
import { BASE } from "../support/helpers";

/**
 * An authenticated agent served in-process: the same Durable Object bindings as the
 * demo agent (its handler runs the tasks), with `auth` in front.
 */

export const ISSUER = "https://issuer.test/";
export const AUDIENCE = "https://agent.test";

/** Keys for the API key scheme: three principals, two tenants. */
export const API_KEYS = JSON.stringify({
  "alice-key-0123456789": { subject: "alice", tenant: "acme" },
  "bob-key-0123456789": { subject: "bob", tenant: "acme" },
  "eve-key-0123456789": { subject: "eve", tenant: "evil" },
  "root-key-0123456789": { subject: "root", tenant: "ops", allTenants: true },
});
export const ALICE = { "X-API-Key": "alice-key-0123456789" };
export const BOB = { "X-API-Key": "bob-key-0123456789" };
export const EVE = { "X-API-Key": "eve-key-0123456789" };
/** A multi-tenant admin (`allTenants`), its own tenant "ops". */
export const ROOT = { "X-API-Key": "root-key-0123456789" };

export async function signingKey() {
  const { privateKey, publicKey } = await generateKeyPair("ES256", { extractable: true });
  const jwk = { ...(await exportJWK(publicKey)), kid: "k1", alg: "ES256", use: "sig" };
  return { privateKey, jwk };
}

export type Key = Awaited<ReturnType<typeof signingKey>>;

/** A token for `sub`, valid unless `overrides` spoil it. */
export function token(
  key: Key,
  overrides: {
    aud?: string;
    exp?: number;
    kid?: string;
    sub?: string;
    tenant?: string;
    scope?: string;
  } = {},
): Promise<string> {
  const scope = overrides.scope === undefined ? {} : { scope: overrides.scope };
  return new SignJWT({ org: overrides.tenant ?? "acme", ...scope })
    .setProtectedHeader({ alg: "ES256", kid: overrides.kid ?? "k1" })
    .setIssuer(ISSUER)
    .setAudience(overrides.aud ?? AUDIENCE)
    .setSubject(overrides.sub ?? "alice")
    .setIssuedAt()
    .setExpirationTime(overrides.exp ?? Math.floor(Date.now() / 1000) + 600)
    .sign(key.privateKey);
}

export function authedAgent(key: Key, extra: Partial<AgentConfig<Record<string, unknown>>> = {}) {
  return defineAgent<Record<string, unknown>>({
    card: { name: "Guarded", description: "An agent with auth" },
    push: {},
    auth: {
      bearer: {
        issuer: ISSUER,
        audience: AUDIENCE,
        algorithms: ["ES256"],
        keys: [key.jwk],
        tenantClaim: "org",
        allTenantsScope: "a2a:all-tenants",
      },
      apiKeys: { secret: "AGENT_API_KEYS" },
    },
    ...extra,
  });
}

export type Worker = ReturnType<typeof authedAgent>;

/** Calls the in-process worker; `AGENT_API_KEYS` is set as a secret would be. */
export async function call(
  worker: Worker,
  method: string,
  path: string,
  init: { body?: unknown; headers?: Record<string, string> } = {},
): Promise<Response> {
  const ctx = createExecutionContext();
  const request = new Request(`${BASE}${path}`, {
    method,
    headers: { "Content-Type": "application/json", "A2A-Version": "1.0", ...init.headers },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  const response = await worker.fetch(request, { ...env, AGENT_API_KEYS: API_KEYS }, ctx);
  void waitOnExecutionContext(ctx);
  return response;
}

export async function rpcAs(
  worker: Worker,
  headers: Record<string, string>,
  method: string,
  params: unknown,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await call(worker, "POST", "/", {
    headers,
    body: { jsonrpc: "2.0", id: 7, method, params },
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}
