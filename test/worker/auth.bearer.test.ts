import * as jose from "jose";
import { describe, expect, it, vi } from "vitest";
import { defineAgent } from "../../src/worker/app/define-agent";
import { AUDIENCE, authedAgent, call, ISSUER, signingKey } from "./auth-support";

/**
 * Bearer tokens verified with jose: the algorithms the config may pin, RSA and EdDSA
 * issuers, key/algorithm mismatches, and an issuer whose JWKS cannot be fetched.
 */

const list = { jsonrpc: "2.0", id: 1, method: "ListTasks", params: {} };

async function bearerAgent(alg: string, extra: Record<string, unknown> = {}) {
  const { privateKey, publicKey } = await jose.generateKeyPair(alg, { extractable: true });
  const jwk = { ...(await jose.exportJWK(publicKey)), kid: "k1" };
  const key = await signingKey();
  const worker = authedAgent(key, {
    auth: {
      bearer: {
        issuer: ISSUER,
        audience: AUDIENCE,
        algorithms: [alg],
        keys: [jwk],
        tenantClaim: "org",
        ...extra,
      },
    },
  });
  const token = (header: Record<string, unknown> = {}, signer = privateKey) =>
    new jose.SignJWT({ org: "acme" })
      .setProtectedHeader({ alg, kid: "k1", ...header } as jose.JWTHeaderParameters)
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setSubject("alice")
      .setExpirationTime("5m")
      .sign(signer);
  return { worker, token };
}

describe("bearer auth on jose", () => {
  it.each(["RS256", "PS384", "ES384", "EdDSA"])(
    "%s tokens from an issuer are accepted",
    async (alg) => {
      const { worker, token } = await bearerAgent(alg);
      const response = await call(worker, "POST", "/", {
        headers: { Authorization: `Bearer ${await token()}` },
        body: list,
      });
      expect(response.status).toBe(200);
    },
  );

  it("a token claiming another algorithm than the pinned one is 401 with a challenge", async () => {
    const { worker } = await bearerAgent("RS256");
    const es = await signingKey();
    const forged = await new jose.SignJWT({ org: "acme" })
      .setProtectedHeader({ alg: "ES256", kid: "k1" })
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setSubject("alice")
      .setExpirationTime("5m")
      .sign(es.privateKey);
    const response = await call(worker, "POST", "/", {
      headers: { Authorization: `Bearer ${forged}` },
      body: list,
    });
    expect(response.status).toBe(401);
    expect(response.headers.get("WWW-Authenticate")).toMatch(
      /error="invalid_token", error_description="Invalid bearer token: ERR_JOSE_ALG_NOT_ALLOWED"/,
    );
  });

  it("algorithms Edgelink cannot verify are refused when the agent is defined", () => {
    for (const alg of ["HS256", "ES256K", "RS1"]) {
      expect(
        () =>
          defineAgent({
            card: { name: "x", description: "x" },
            auth: { bearer: { issuer: "i", audience: "a", algorithms: ["ES256", alg], keys: [] } },
          }),
        alg,
      ).toThrow(new RegExp(`bearer.algorithms: ${alg} is not supported`));
    }
  });

  it("a token over 16 KiB is refused unread: 401", async () => {
    const { worker, token } = await bearerAgent("ES256");
    const good = await token();
    const [h, p, sig] = good.split(".");
    const padded = `${h}.${p}${"A".repeat(16_384)}.${sig}`;
    const response = await call(worker, "POST", "/", {
      headers: { Authorization: `Bearer ${padded}` },
      body: list,
    });
    expect(response.status).toBe(401);
    expect(response.headers.get("WWW-Authenticate")).toMatch(/ERR_JWS_INVALID/);
  });

  it("an issuer whose JWKS cannot be fetched is our failure, not the caller's: 503, never 401", async () => {
    // The workers tests have no network: the JWKS URL answers 503.
    const { worker, token } = await bearerAgent("ES256", {
      keys: undefined,
      jwksUrl: "https://issuer.test/.well-known/jwks.json",
    });
    const response = await call(worker, "POST", "/", {
      headers: { Authorization: `Bearer ${await token()}` },
      body: list,
    });
    expect(response.status).toBe(503);
    expect(response.headers.get("WWW-Authenticate")).toBeNull();
    const body = (await response.json()) as { error: { code: number; message: string } };
    expect(body.error.code).toBe(-32603);
    expect(body.error.message).toMatch(/issuer keys cannot be fetched/);
  });

  it("discovery through the app: a document for another issuer is 503, and not refetched per request", async () => {
    const issuer = "https://discovery-app.test/";
    const seen: string[] = [];
    const spy = vi.spyOn(globalThis, "fetch").mockImplementation(async (input) => {
      seen.push(String(input));
      return Response.json({ issuer: "https://evil.test/", jwks_uri: "https://evil.test/k" });
    });
    try {
      const worker = defineAgent<Record<string, unknown>>({
        card: { name: "Discovering", description: "x" },
        auth: { bearer: { issuer, audience: AUDIENCE, algorithms: ["ES256"], discovery: true } },
      });
      const { token } = await bearerAgent("ES256");
      for (let i = 0; i < 3; i++) {
        const response = await call(worker, "POST", "/", {
          headers: { Authorization: `Bearer ${await token()}` },
          body: list,
        });
        expect(response.status).toBe(503);
        await response.body?.cancel();
      }
      expect(seen).toStrictEqual([`${issuer}.well-known/openid-configuration`]);
    } finally {
      spy.mockRestore();
    }
  });
});
