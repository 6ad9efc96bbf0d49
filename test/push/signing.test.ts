import { createLocalJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify } from "jose";
import { describe, expect, it } from "vitest";
import {
  bodySha256,
  generateSigningKey,
  loadSigningKey,
  loadSigningKeys,
  publicJwks,
  signDelivery,
} from "../../src/push/signing";
import { AGENT, HOOK, NOW } from "./fixtures";

const BODY = '{"statusUpdate":{"taskId":"task-1"}}';

describe("signing keys (issue 5: ES256 or EdDSA via jose)", () => {
  it.each(["ES256", "EdDSA"] as const)(
    "generateSigningKey(%s) is a private JWK with kid",
    async (alg) => {
      const jwk = JSON.parse(await generateSigningKey(alg));
      expect(jwk).toMatchObject({
        alg,
        use: "sig",
        kid: expect.any(String),
        d: expect.any(String),
      });
      expect(jwk.kty).toBe(alg === "ES256" ? "EC" : "OKP");
      expect(jwk.crv).toBe(alg === "ES256" ? "P-256" : "Ed25519");
      expect(jwk.key_ops).toBeUndefined();
      const key = await loadSigningKey(JSON.stringify(jwk));
      expect(key.kid).toBe(jwk.kid);
      expect(key.alg).toBe(alg);
    },
  );

  it("Ed25519 is an alias published as EdDSA", async () => {
    const jwk = JSON.parse(await generateSigningKey("Ed25519"));
    expect(jwk.alg).toBe("EdDSA");
    const key = await loadSigningKey({ ...jwk, alg: "Ed25519" });
    expect(key.alg).toBe("EdDSA");
    expect(key.publicJwk.alg).toBe("EdDSA");
  });

  it("a key without kid gets its RFC 7638 thumbprint, stable across loads", async () => {
    const { kid, ...jwk } = JSON.parse(await generateSigningKey("ES256"));
    const a = await loadSigningKey(jwk);
    const b = await loadSigningKey(JSON.stringify(jwk));
    expect(a.kid).toBe(kid);
    expect(b.kid).toBe(kid);
  });

  it("the public JWK has no private part", async () => {
    const key = await loadSigningKey(await generateSigningKey("ES256"));
    expect(Object.keys(key.publicJwk).sort()).toEqual([
      "alg",
      "crv",
      "kid",
      "kty",
      "use",
      "x",
      "y",
    ]);
    const ed = await loadSigningKey(await generateSigningKey("EdDSA"));
    expect(Object.keys(ed.publicJwk).sort()).toEqual(["alg", "crv", "kid", "kty", "use", "x"]);
  });

  it.each([
    ["not JSON", "{nope", /not valid JSON/],
    ["an array", "[]", /push signing key is not a JWK object/],
    ["a public key", "PUBLIC", /no private part/],
    [
      "an RSA key",
      JSON.stringify({ kty: "RSA", n: "x", e: "AQAB", d: "y" }),
      /is not an ES256 \(EC P-256\) or EdDSA/,
    ],
    [
      "a P-384 key",
      JSON.stringify({ kty: "EC", crv: "P-384", x: "a", y: "b", d: "c" }),
      /is not an ES256 \(EC P-256\) or EdDSA/,
    ],
    [
      "an HMAC secret",
      JSON.stringify({ kty: "oct", k: "c2VjcmV0" }),
      /is not an ES256 \(EC P-256\) or EdDSA/,
    ],
    ["an encryption key", "ENC", /use "enc"/],
    ["a mislabelled alg", "ALG", /is not an ES256 \(EC P-256\) or EdDSA/],
  ])("refuses %s with a clear error", async (_label, secret, message) => {
    const jwk = JSON.parse(await generateSigningKey("ES256"));
    const value =
      secret === "PUBLIC"
        ? JSON.stringify({ ...jwk, d: undefined })
        : secret === "ENC"
          ? JSON.stringify({ ...jwk, use: "enc" })
          : secret === "ALG"
            ? JSON.stringify({ ...jwk, alg: "EdDSA" })
            : secret;
    const error = await loadSigningKey(value).catch((e: Error) => e);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toMatch(message);
    // The private scalar never appears in an error.
    expect((error as Error).message).not.toContain(jwk.d);
  });

  it("refuses a corrupt private scalar", async () => {
    const jwk = JSON.parse(await generateSigningKey("EdDSA"));
    await expect(loadSigningKey({ ...jwk, d: "AAAA" })).rejects.toThrow(/could not be imported/);
  });
});

describe("several keys for rotation", () => {
  it("loads a JWK, an array or a JWK Set; the first signs", async () => {
    const a = JSON.parse(await generateSigningKey("ES256"));
    const b = JSON.parse(await generateSigningKey("EdDSA"));
    for (const secret of [JSON.stringify([a, b]), JSON.stringify({ keys: [a, b] })]) {
      const keys = await loadSigningKeys(secret);
      expect(keys.map((k) => k.kid)).toEqual([a.kid, b.kid]);
    }
    expect((await loadSigningKeys(JSON.stringify(a))).map((k) => k.kid)).toEqual([a.kid]);
  });

  it("publicJwks publishes every key, public parts only, signing key first", async () => {
    const keys = await loadSigningKeys(
      JSON.stringify([
        JSON.parse(await generateSigningKey("EdDSA")),
        JSON.parse(await generateSigningKey("ES256")),
      ]),
    );
    const jwks = publicJwks(keys);
    expect(jwks.keys.map((k) => k.kid)).toEqual(keys.map((k) => k.kid));
    for (const jwk of jwks.keys) {
      expect(jwk.d).toBeUndefined();
      expect(jwk.use).toBe("sig");
    }
    expect(jwks.keys.map((k) => k.alg)).toEqual(["EdDSA", "ES256"]);
  });

  it("refuses an empty set and duplicate kids", async () => {
    await expect(loadSigningKeys("[]")).rejects.toThrow(/empty/);
    const a = await generateSigningKey("ES256");
    await expect(loadSigningKeys(`[${a},${a}]`)).rejects.toThrow(/appears twice/);
    await expect(loadSigningKeys("nope")).rejects.toThrow(/not valid JSON/);
  });
});

describe("signDelivery (issue 5: iss, aud, iat, exp, jti, taskId, body hash)", () => {
  it("bodySha256 is base64url SHA-256 of the exact bytes", async () => {
    // sha256("{}") = 44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a
    expect(await bodySha256("{}")).toBe("RBNvo1WzZ4oRRq0W9-hknpT7T8If536DEMBg9hyq_4o");
    expect(await bodySha256(new TextEncoder().encode("{}"))).toBe(await bodySha256("{}"));
    expect(await bodySha256("{} ")).not.toBe(await bodySha256("{}"));
  });

  it.each(["ES256", "EdDSA"] as const)(
    "%s: the JWT carries exactly the documented claims",
    async (alg) => {
      const key = await loadSigningKey(await generateSigningKey(alg));
      const jwt = await signDelivery({
        key,
        issuer: AGENT,
        audience: HOOK,
        eventId: "evt-7",
        taskId: "task-1",
        body: BODY,
        now: NOW,
      });
      expect(decodeProtectedHeader(jwt)).toEqual({ alg, kid: key.kid, typ: "a2a-push+jwt" });
      const iat = NOW / 1000;
      expect(decodeJwt(jwt)).toEqual({
        iss: AGENT,
        aud: HOOK,
        iat,
        exp: iat + 300,
        jti: "evt-7",
        taskId: "task-1",
        bodySha256: await bodySha256(BODY),
      });
      const { payload } = await jwtVerify(jwt, createLocalJWKSet(publicJwks([key])), {
        currentDate: new Date(NOW),
      });
      expect(payload.jti).toBe("evt-7");
    },
  );

  it("ttlSeconds sets exp; it must be positive", async () => {
    const key = await loadSigningKey(await generateSigningKey("EdDSA"));
    const input = {
      key,
      issuer: AGENT,
      audience: HOOK,
      eventId: "e",
      taskId: "t",
      body: "",
      now: NOW,
    };
    const jwt = await signDelivery({ ...input, ttlSeconds: 60 });
    expect(decodeJwt(jwt).exp).toBe(NOW / 1000 + 60);
    await expect(signDelivery({ ...input, ttlSeconds: 0 })).rejects.toThrow(/positive/);
  });
});
