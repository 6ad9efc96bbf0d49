import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import * as jose from "jose";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { defineAgent } from "../../src/worker/app/define-agent";
import { BASE } from "../support/helpers";
import { AUDIENCE, ISSUER } from "./auth-support";

/**
 * Differential: every token below, good or hostile, is given to Edgelink's bearer auth
 * (through the Hono app) and to a direct `jose.jwtVerify` with the same options. Both
 * must accept or refuse it alike, and as the table expects (so the test fails when both
 * drift the same way). The one rule Edgelink adds on top of jose, `sub` as a non-empty
 * string, is part of the oracle.
 */

const T0 = Date.UTC(2026, 10, 27, 12);
const NOW = T0 / 1000;
const TOLERANCE = 30;
const ALGORITHMS = ["RS256", "ES256"];

type Json = Record<string, unknown>;

let rsa: { privateKey: CryptoKey; jwk: jose.JWK; pem: string };
let ec: { privateKey: CryptoKey; jwk: jose.JWK };
let keys: ReturnType<typeof jose.createLocalJWKSet>;
let worker: ReturnType<typeof defineAgent<Record<string, unknown>>>;

const enc = (value: unknown) =>
  jose.base64url.encode(typeof value === "string" ? value : JSON.stringify(value));

const claims = (overrides: Json = {}): Json => ({
  iss: ISSUER,
  aud: AUDIENCE,
  sub: "alice",
  iat: NOW,
  exp: NOW + 600,
  ...overrides,
});

/** A compact JWS signed with WebCrypto over exactly these bytes (any header, any payload). */
async function rawRs256(header: Json, payload: Json | string): Promise<string> {
  const input = `${enc(header)}.${enc(payload)}`;
  const signature = await crypto.subtle.sign(
    "RSASSA-PKCS1-v1_5",
    rsa.privateKey,
    new TextEncoder().encode(input),
  );
  return `${input}.${jose.base64url.encode(new Uint8Array(signature))}`;
}

const rs256 = (payload: Json = claims(), header: Json = {}) =>
  new jose.SignJWT(payload)
    .setProtectedHeader({ alg: "RS256", kid: "rsa-1", ...header } as jose.JWTHeaderParameters)
    .sign(rsa.privateKey);

const es256 = (payload: Json = claims(), header: Json = {}) =>
  new jose.SignJWT(payload)
    .setProtectedHeader({ alg: "ES256", kid: "ec-1", ...header } as jose.JWTHeaderParameters)
    .sign(ec.privateKey);

beforeAll(async () => {
  vi.useFakeTimers({ toFake: ["Date"] });
  vi.setSystemTime(T0);
  const r = await jose.generateKeyPair("RS256", { extractable: true });
  rsa = {
    privateKey: r.privateKey,
    jwk: { ...(await jose.exportJWK(r.publicKey)), kid: "rsa-1" },
    pem: await jose.exportSPKI(r.publicKey),
  };
  const e = await jose.generateKeyPair("ES256", { extractable: true });
  ec = { privateKey: e.privateKey, jwk: { ...(await jose.exportJWK(e.publicKey)), kid: "ec-1" } };
  keys = jose.createLocalJWKSet({ keys: [rsa.jwk, ec.jwk] });
  worker = defineAgent<Record<string, unknown>>({
    card: { name: "Differential", description: "Bearer auth against jose" },
    auth: {
      bearer: {
        issuer: ISSUER,
        audience: AUDIENCE,
        algorithms: ALGORITHMS,
        keys: [rsa.jwk, ec.jwk],
        clockToleranceSeconds: TOLERANCE,
      },
    },
  });
});
afterAll(() => {
  vi.useRealTimers();
});

/** Edgelink's verdict: the app's answer to ListTasks with the token. */
async function edgelinkAccepts(token: string): Promise<boolean> {
  const ctx = createExecutionContext();
  const response = await worker.fetch(
    new Request(`${BASE}/`, {
      method: "POST",
      headers: {
        "Content-Type": "application/json",
        "A2A-Version": "1.0",
        Authorization: `Bearer ${token}`,
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ListTasks", params: {} }),
    }),
    { ...env },
    ctx,
  );
  await waitOnExecutionContext(ctx);
  await response.body?.cancel();
  // Anything but accepted or a 401 would be a bug of its own (a 500 on hostile input).
  expect([200, 401]).toContain(response.status);
  return response.status === 200;
}

/** The oracle: jose's jwtVerify with the same options, plus a non-empty string `sub`. */
async function joseAccepts(token: string): Promise<boolean> {
  try {
    const { payload } = await jose.jwtVerify(token, keys, {
      issuer: ISSUER,
      audience: AUDIENCE,
      algorithms: ALGORITHMS,
      clockTolerance: TOLERANCE,
      requiredClaims: ["sub", "exp"],
    });
    return typeof payload.sub === "string" && payload.sub !== "";
  } catch (error) {
    if (error instanceof jose.errors.JOSEError) return false;
    throw error;
  }
}

type Case = [name: string, accept: boolean, token: () => Promise<string>];

const CASES: Case[] = [
  ["a valid RS256 token", true, () => rs256()],
  ["a valid ES256 token", true, () => es256()],
  ["no kid, one key of the type fits", true, () => rs256(claims(), { kid: undefined })],
  ["typ at+jwt (no typ is pinned)", true, () => rs256(claims(), { typ: "at+jwt" })],
  ["aud as a list containing ours", true, () => rs256(claims({ aud: ["x", AUDIENCE] }))],
  // alg none and algorithm confusion
  ["alg none", false, async () => new jose.UnsecuredJWT(claims()).encode()],
  [
    "alg none with a kid and a signature",
    false,
    async () => {
      const [, , s] = (await rs256()).split(".");
      return `${enc({ alg: "none", kid: "rsa-1" })}.${enc(claims())}.${s}`;
    },
  ],
  ["alg NONE", false, async () => `${enc({ alg: "NONE" })}.${enc(claims())}.`],
  [
    "no alg",
    false,
    async () => {
      const [, p, s] = (await rs256()).split(".");
      return `${enc({ kid: "rsa-1" })}.${p}.${s}`;
    },
  ],
  [
    "HS256 with the RSA public key (PEM) as the HMAC secret",
    false,
    () =>
      new jose.SignJWT(claims())
        .setProtectedHeader({ alg: "HS256", kid: "rsa-1" })
        .sign(new TextEncoder().encode(rsa.pem)),
  ],
  [
    "HS256 with the RSA modulus as the HMAC secret",
    false,
    () =>
      new jose.SignJWT(claims())
        .setProtectedHeader({ alg: "HS256", kid: "rsa-1" })
        .sign(jose.base64url.decode(rsa.jwk.n as string)),
  ],
  [
    "RS256 header over an ES256 signature",
    false,
    async () => {
      const [, p, s] = (await es256()).split(".");
      return `${enc({ alg: "RS256", kid: "rsa-1" })}.${p}.${s}`;
    },
  ],
  [
    "ES256 header naming the RSA key",
    false,
    async () => {
      const [, p, s] = (await es256()).split(".");
      return `${enc({ alg: "ES256", kid: "rsa-1" })}.${p}.${s}`;
    },
  ],
  [
    "PS256 (not pinned) signed by the RSA key",
    false,
    async () => {
      const { privateKey } = await jose.generateKeyPair("PS256");
      return new jose.SignJWT(claims())
        .setProtectedHeader({ alg: "PS256", kid: "rsa-1" })
        .sign(privateKey);
    },
  ],
  // crit and extensions
  [
    "crit naming an unknown extension",
    false,
    () => rawRs256({ alg: "RS256", kid: "rsa-1", crit: ["x-ext"], "x-ext": 1 }, claims()),
  ],
  ["crit empty", false, () => rawRs256({ alg: "RS256", kid: "rsa-1", crit: [] }, claims())],
  [
    "crit naming a registered header",
    false,
    () => rawRs256({ alg: "RS256", kid: "rsa-1", crit: ["alg"] }, claims()),
  ],
  [
    "crit that is not a list",
    false,
    () => rawRs256({ alg: "RS256", kid: "rsa-1", crit: "x-ext", "x-ext": 1 }, claims()),
  ],
  [
    "b64 false under crit",
    false,
    () => rawRs256({ alg: "RS256", kid: "rsa-1", b64: false, crit: ["b64"] }, claims()),
  ],
  // kid
  ["kid of no key", false, () => rs256(claims(), { kid: "rsa-2" })],
  ["kid that is not a string", false, () => rawRs256({ alg: "RS256", kid: 1 }, claims())],
  [
    "signed by another RSA key under our kid",
    false,
    async () => {
      const { privateKey } = await jose.generateKeyPair("RS256");
      return new jose.SignJWT(claims())
        .setProtectedHeader({ alg: "RS256", kid: "rsa-1" })
        .sign(privateKey);
    },
  ],
  // time claims around the tolerance
  [`exp ${TOLERANCE + 1} s ago`, false, () => rs256(claims({ exp: NOW - TOLERANCE - 1 }))],
  [`exp exactly ${TOLERANCE} s ago`, false, () => rs256(claims({ exp: NOW - TOLERANCE }))],
  [
    `exp ${TOLERANCE - 1} s ago (within tolerance)`,
    true,
    () => rs256(claims({ exp: NOW - TOLERANCE + 1 })),
  ],
  ["exp a year ago", false, () => rs256(claims({ exp: NOW - 365 * 86_400 }))],
  ["exp missing", false, () => rs256(claims({ exp: undefined }))],
  ["exp a string", false, () => rs256(claims({ exp: String(NOW + 600) }))],
  ["exp null", false, () => rawRs256({ alg: "RS256", kid: "rsa-1" }, claims({ exp: null }))],
  [`nbf ${TOLERANCE + 1} s ahead`, false, () => rs256(claims({ nbf: NOW + TOLERANCE + 1 }))],
  [`nbf exactly ${TOLERANCE} s ahead`, true, () => rs256(claims({ nbf: NOW + TOLERANCE }))],
  ["nbf a string", false, () => rs256(claims({ nbf: "now" }))],
  ["iat in the future (no max age is set)", true, () => rs256(claims({ iat: NOW + 3600 }))],
  ["iat a string", false, () => rs256(claims({ iat: "yesterday" }))],
  // iss, aud, sub
  ["another issuer", false, () => rs256(claims({ iss: "https://evil.test/" }))],
  [
    "issuer without its trailing slash",
    false,
    () => rs256(claims({ iss: ISSUER.replace(/\/$/, "") })),
  ],
  ["no issuer", false, () => rs256(claims({ iss: undefined }))],
  ["another audience", false, () => rs256(claims({ aud: "https://elsewhere.test" }))],
  ["no audience", false, () => rs256(claims({ aud: undefined }))],
  ["sub missing", false, () => rs256(claims({ sub: undefined }))],
  ["sub a number", false, () => rs256(claims({ sub: 123 }))],
  ["sub empty", false, () => rs256(claims({ sub: "" }))],
  ["sub an object", false, () => rs256(claims({ sub: {} }))],
  // encoding and shape
  ["payload not JSON", false, () => rawRs256({ alg: "RS256", kid: "rsa-1" }, "not json")],
  [
    "payload a JSON list",
    false,
    async () => {
      const input = `${enc({ alg: "RS256", kid: "rsa-1" })}.${enc("[1]")}`;
      const [, , s] = (await rawRs256({ alg: "RS256", kid: "rsa-1" }, "[1]")).split(".");
      return `${input}.${s}`;
    },
  ],
  [
    "header with base64 padding",
    false,
    async () => {
      const [h, p, s] = (await rs256()).split(".");
      return `${h}=.${p}.${s}`;
    },
  ],
  [
    "payload with a + (base64, not base64url)",
    false,
    async () => {
      const [h, p, s] = (await rs256()).split(".");
      return `${h}.${p}+.${s}`;
    },
  ],
  [
    "signature with a character outside base64url",
    false,
    async () => {
      const [h, p, s] = (await rs256()).split(".");
      return `${h}.${p}.${s}*`;
    },
  ],
  [
    "signature cut short",
    false,
    async () => {
      const [h, p, s] = (await rs256()).split(".");
      return `${h}.${p}.${s?.slice(0, -4)}`;
    },
  ],
  [
    "payload with one character changed",
    false,
    async () => {
      const [h, p, s] = (await rs256()).split(".");
      const flipped = `${p?.slice(0, -1)}${p?.endsWith("A") ? "B" : "A"}`;
      return `${h}.${flipped}.${s}`;
    },
  ],
  [
    "an empty signature",
    false,
    async () => {
      const [h, p] = (await rs256()).split(".");
      return `${h}.${p}.`;
    },
  ],
  ["two segments", false, async () => (await rs256()).split(".").slice(0, 2).join(".")],
  ["four segments", false, async () => `${await rs256()}.${enc("x")}`],
  ["five segments (JWE-shaped)", false, async () => `${await rs256()}.a.b`],
  [
    "a header that is not JSON",
    false,
    async () => {
      const [, p, s] = (await rs256()).split(".");
      return `${enc("{alg")}.${p}.${s}`;
    },
  ],
];

describe("differential: Edgelink's bearer auth and jose.jwtVerify agree on every token", () => {
  it.each(CASES)("%s (accepted: %s)", async (_name, accept, make) => {
    const token = await make();
    const [edgelink, reference] = await Promise.all([edgelinkAccepts(token), joseAccepts(token)]);
    expect({ edgelink, reference }).toStrictEqual({ edgelink: accept, reference: accept });
  });

  it("the table covers both verdicts", () => {
    expect(CASES.filter(([, accept]) => accept).length).toBeGreaterThan(5);
    expect(CASES.filter(([, accept]) => !accept).length).toBeGreaterThan(40);
  });
});
