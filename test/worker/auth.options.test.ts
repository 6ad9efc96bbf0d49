import * as jose from "jose";
import { describe, expect, it } from "vitest";
import type { AuthOptions, BearerAuth } from "../../src/agent/access/auth";
import { defineAgent } from "../../src/worker/app/define-agent";
import { AUDIENCE, ISSUER, signingKey } from "./auth-support";

/**
 * Every auth option is checked when the agent is defined, with an error naming it: a bad
 * option never reaches a request, where it could silently switch a check off.
 */

const JWK = { kty: "EC", crv: "P-256", x: "x", y: "y", kid: "k1" };
const GOOD: BearerAuth = { issuer: ISSUER, audience: AUDIENCE, algorithms: ["ES256"], keys: [JWK] };

function define(auth: AuthOptions<unknown>) {
  return () => defineAgent({ card: { name: "x", description: "x" }, auth });
}
const withBearer = (overrides: Record<string, unknown>) =>
  define({ bearer: { ...GOOD, ...overrides } as BearerAuth });

describe("auth options are validated at defineAgent", () => {
  it("the good configuration passes (so each refusal below is its option's doing)", () => {
    expect(withBearer({})).not.toThrow();
    expect(withBearer({ clockToleranceSeconds: 0 })).not.toThrow();
    expect(withBearer({ audience: ["a", "b"] })).not.toThrow();
    expect(
      withBearer({ keys: undefined, jwksUrl: "https://issuer.test/.well-known/jwks.json" }),
    ).not.toThrow();
    expect(withBearer({ keys: undefined, discovery: true })).not.toThrow();
  });

  it.each([
    ["NaN", Number.NaN],
    ["Infinity", Number.POSITIVE_INFINITY],
    ["-Infinity", Number.NEGATIVE_INFINITY],
    ["negative", -1],
    ["a string", "30"],
  ])("clockToleranceSeconds %s is refused, naming the option", (_what, value) => {
    expect(withBearer({ clockToleranceSeconds: value })).toThrow(
      /Invalid auth: bearer\.clockToleranceSeconds must be a finite number >= 0 and at most 3600/,
    );
  });

  it("why: a huge tolerance makes jose accept a token expired a year ago; NaN makes it throw", async () => {
    // Number(env.LEEWAY) with the variable unset is NaN: every bearer request would fail
    // with a TypeError (500). A tolerance in the millions switches expiry off. Both are
    // stopped at definition.
    const key = await signingKey();
    const yearAgo = Math.floor(Date.now() / 1000) - 365 * 86_400;
    const token = await new jose.SignJWT({ sub: "alice" })
      .setProtectedHeader({ alg: "ES256", kid: "k1" })
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setExpirationTime(yearAgo)
      .sign(key.privateKey);
    const keys = jose.createLocalJWKSet({ keys: [key.jwk] });
    const options = { issuer: ISSUER, audience: AUDIENCE, algorithms: ["ES256"] };
    await expect(
      jose.jwtVerify(token, keys, { ...options, clockTolerance: 1e9 }),
    ).resolves.toBeDefined();
    await expect(
      jose.jwtVerify(token, keys, { ...options, clockTolerance: Number.NaN }),
    ).rejects.toThrow(TypeError);
    await expect(jose.jwtVerify(token, keys, { ...options, clockTolerance: 3600 })).rejects.toThrow(
      /"exp" claim timestamp check failed/,
    );
    for (const tolerance of [1e9, 3601, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(withBearer({ keys: [key.jwk], clockToleranceSeconds: tolerance })).toThrow(
        /bearer\.clockToleranceSeconds must be a finite number >= 0 and at most 3600/,
      );
    }
    expect(withBearer({ keys: [key.jwk], clockToleranceSeconds: 3600 })).not.toThrow();
  });

  it.each([
    ["issuer empty", { issuer: "" }, /bearer\.issuer must be a non-empty string/],
    ["issuer not a string", { issuer: 7 }, /bearer\.issuer must be a non-empty string/],
    ["audience empty", { audience: "" }, /bearer\.audience must be a non-empty string/],
    ["audience []", { audience: [] }, /bearer\.audience must be a non-empty string/],
    ["audience with an empty one", { audience: ["a", ""] }, /bearer\.audience/],
    ["algorithms []", { algorithms: [] }, /bearer\.algorithms must list/],
    ["algorithms missing", { algorithms: undefined }, /bearer\.algorithms must list/],
    ["alg none", { algorithms: ["ES256", "none"] }, /must not include "none"/],
    ["alg NONE", { algorithms: ["NONE"] }, /must not include "none"/],
    ["HS256", { algorithms: ["HS256"] }, /bearer\.algorithms: HS256 is not supported/],
    ["an unknown alg", { algorithms: ["ES256K"] }, /bearer\.algorithms: ES256K is not supported/],
    ["no key source", { keys: undefined }, /exactly one of jwksUrl, keys or discovery/],
    [
      "two key sources",
      { jwksUrl: "https://issuer.test/jwks" },
      /exactly one of jwksUrl, keys or discovery/,
    ],
    ["keys []", { keys: [] }, /exactly one of|bearer\.keys must be a non-empty list/],
    ["keys of strings", { keys: ["k"] }, /bearer\.keys must be a non-empty list/],
    [
      "a private key",
      { keys: [{ ...JWK, d: "secret" }] },
      /bearer\.keys must hold public keys only/,
    ],
    [
      "a symmetric key",
      { keys: [{ kty: "oct", k: "c2VjcmV0" }] },
      /bearer\.keys must hold public keys only/,
    ],
    [
      "an http jwksUrl",
      { keys: undefined, jwksUrl: "http://issuer.test/jwks" },
      /bearer\.jwksUrl must be an https URL/,
    ],
    [
      "discovery on an http issuer",
      { keys: undefined, discovery: true, issuer: "http://issuer.test/" },
      /bearer\.issuer must be an https URL for discovery/,
    ],
    ["tenantClaim empty", { tenantClaim: "" }, /bearer\.tenantClaim/],
    ["allTenantsScope empty", { allTenantsScope: "" }, /bearer\.allTenantsScope/],
  ])("%s is refused, naming the option", (_what, overrides, message) => {
    expect(withBearer(overrides)).toThrow(message);
  });

  it("API key and custom options are checked too", () => {
    expect(define({ apiKeys: { secret: "" } })).toThrow(/apiKeys\.secret/);
    expect(define({ apiKeys: { secret: "KEYS", header: "X API Key" } })).toThrow(
      /apiKeys\.header must be an HTTP header name/,
    );
    expect(define({ authenticate: "yes" as never })).toThrow(/authenticate must be a function/);
    expect(define({})).toThrow(/configure at least one of bearer, apiKeys or authenticate/);
  });
});
