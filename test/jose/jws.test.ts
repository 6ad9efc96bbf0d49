import * as jose from "jose";
import { describe, expect, it } from "vitest";
import { decodeBase64url, encodeBase64url } from "../../src/jose/base64url";
import { JoseError } from "../../src/jose/errors";
import { importPrivateJwk, importPublicJwk, type JWK, jwkThumbprint } from "../../src/jose/jwk";
import { localKeySet } from "../../src/jose/jwks";
import { signCompact, verifyCompact } from "../../src/jose/jws";
import { verifyJwt } from "../../src/jose/jwt";
import {
  RFC7515_CLAIMS,
  RFC7515_ES256,
  RFC7515_ES512,
  RFC7515_RS256,
  RFC7638,
  RFC8037,
} from "./vectors";

/**
 * src/jose (issue 13: Edgelink's own JOSE on WebCrypto instead of the jose library):
 * published vectors, interop with jose both ways, and every rule a token can break.
 */

const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
const b64 = (value: unknown) => encodeBase64url(JSON.stringify(value));

async function codeOf(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error, "expected a refusal").toBeInstanceOf(JoseError);
  return (error as JoseError).code;
}

describe("published test vectors", () => {
  it.each([
    ["RFC 7515 A.2 RS256", RFC7515_RS256, "RS256", RFC7515_CLAIMS],
    ["RFC 7515 A.3 ES256", RFC7515_ES256, "ES256", RFC7515_CLAIMS],
    ["RFC 7515 A.4 ES512", RFC7515_ES512, "ES512", "Payload"],
    ["RFC 8037 A.4 EdDSA", RFC8037, "EdDSA", RFC8037.payload],
  ] as const)("%s verifies with the appendix's public key", async (_name, vector, alg, payload) => {
    const verified = await verifyCompact(vector.jws, localKeySet({ keys: [vector.jwk] }), [alg]);
    expect(verified.header.alg).toBe(alg);
    expect(text(verified.payload)).toBe(payload);
  });

  it("RFC 8037 A.4: signing reproduces the appendix's Ed25519 signature byte for byte", async () => {
    const key = await importPrivateJwk(RFC8037.jwk, "EdDSA");
    const jws = await signCompact({ alg: "EdDSA" }, new TextEncoder().encode(RFC8037.payload), key);
    expect(jws).toBe(RFC8037.jws);
  });

  it("RFC 7638 §3.1 and RFC 8037 A.3 thumbprints", async () => {
    expect(await jwkThumbprint(RFC7638.jwk)).toBe(RFC7638.thumbprint);
    expect(await jwkThumbprint(RFC8037.jwk)).toBe(RFC8037.thumbprint);
    const { d: _d, ...publicHalf } = RFC7515_ES256.jwk;
    expect(await jwkThumbprint(RFC7515_ES256.jwk)).toBe(await jwkThumbprint(publicHalf));
    expect(await jwkThumbprint(RFC7515_ES256.jwk)).toBe(
      await jose.calculateJwkThumbprint(RFC7515_ES256.jwk),
    );
  });
});

/** A fresh key pair for `alg`, made by jose, with its public JWK. */
async function pair(alg: string): Promise<{ privateKey: CryptoKey; jwk: JWK }> {
  const { privateKey, publicKey } = await jose.generateKeyPair(alg, { extractable: true });
  return { privateKey, jwk: { ...(await jose.exportJWK(publicKey)), kid: `${alg}-key` } };
}

const NOW = Date.UTC(2026, 10, 24, 12) / 1000;
const CLAIMS = { iss: "https://issuer.test/", aud: "api", sub: "alice", iat: NOW, exp: NOW + 600 };
const OPTIONS = {
  issuer: "https://issuer.test/",
  audience: "api",
  now: NOW * 1000,
};

describe("interop with jose (the reference implementation), both ways", () => {
  const ALGS = [
    "RS256",
    "RS384",
    "RS512",
    "PS256",
    "PS384",
    "PS512",
    "ES256",
    "ES384",
    "EdDSA",
    "Ed25519",
  ];

  it.each(ALGS)("%s: a JWT signed by jose verifies with ours", async (alg) => {
    const { privateKey, jwk } = await pair(alg);
    const token = await new jose.SignJWT(CLAIMS)
      .setProtectedHeader({ alg, kid: jwk.kid as string })
      .sign(privateKey);
    const { payload, header } = await verifyJwt(token, localKeySet({ keys: [jwk] }), {
      ...OPTIONS,
      algorithms: [alg],
    });
    expect(payload).toEqual(CLAIMS);
    expect(header.kid).toBe(jwk.kid);
  });

  it.each(ALGS)("%s: a JWT signed by ours verifies with jose", async (alg) => {
    const { privateKey, jwk } = await pair(alg);
    const token = await signCompact(
      { alg, kid: jwk.kid as string },
      new TextEncoder().encode(JSON.stringify(CLAIMS)),
      privateKey,
    );
    const { payload } = await jose.jwtVerify(token, jose.createLocalJWKSet({ keys: [jwk] }), {
      issuer: OPTIONS.issuer,
      audience: OPTIONS.audience,
      algorithms: [alg],
      currentDate: new Date(OPTIONS.now),
    });
    expect(payload).toEqual(CLAIMS);
  });
});

describe("refusals: every rule a token can break", () => {
  let es: { privateKey: CryptoKey; jwk: JWK };
  let keys: ReturnType<typeof localKeySet>;
  const sign = (claims: object = CLAIMS, header: Record<string, unknown> = {}) =>
    new jose.SignJWT({ ...claims })
      .setProtectedHeader({ alg: "ES256", kid: "ES256-key", ...header })
      .sign(es.privateKey);
  const verify = (token: string, over: Record<string, unknown> = {}) =>
    verifyJwt(token, keys, { ...OPTIONS, algorithms: ["ES256"], ...over });

  it("setup: a valid token passes (so each refusal below is the rule's doing)", async () => {
    es = await pair("ES256");
    keys = localKeySet({ keys: [es.jwk] });
    expect((await verify(await sign())).payload.sub).toBe("alice");
  });

  it("alg none is refused, even when the caller lists it", async () => {
    const token = `${b64({ alg: "none" })}.${b64(CLAIMS)}.`;
    expect(await codeOf(verify(token))).toBe("ERR_JOSE_ALG_NOT_ALLOWED");
    expect(await codeOf(verify(token, { algorithms: ["none", "ES256"] }))).toBe(
      "ERR_JOSE_ALG_NOT_ALLOWED",
    );
  });

  it("an alg outside the allow-list is refused before any key is looked at", async () => {
    const token = await sign();
    expect(await codeOf(verify(token, { algorithms: ["RS256", "EdDSA"] }))).toBe(
      "ERR_JOSE_ALG_NOT_ALLOWED",
    );
    const noAlg = `${b64({ kid: "ES256-key" })}.${b64(CLAIMS)}.${token.split(".")[2]}`;
    expect(await codeOf(verify(noAlg))).toBe("ERR_JOSE_ALG_NOT_ALLOWED");
    const hs = await new jose.SignJWT(CLAIMS)
      .setProtectedHeader({ alg: "HS256", kid: "ES256-key" })
      .sign(new TextEncoder().encode("a-shared-secret-of-32-bytes-long!"));
    expect(await codeOf(verify(hs, { algorithms: ["HS256", "ES256"] }))).toBe(
      "ERR_JOSE_ALG_NOT_ALLOWED",
    );
  });

  it("a key never verifies an algorithm of another key type or curve", async () => {
    const rsa = await pair("RS256");
    const ed = await pair("EdDSA");
    const p384 = await pair("ES384");
    const token = await sign({}, { kid: undefined });
    // Each set holds only keys of the wrong type for ES256: none is even tried.
    for (const jwk of [rsa.jwk, ed.jwk, p384.jwk]) {
      const set = localKeySet({ keys: [{ ...jwk, kid: undefined }] });
      const error = verifyJwt(token, set, { algorithms: ["ES256"] });
      expect(await codeOf(error)).toBe("ERR_JWKS_NO_MATCHING_KEY");
      // Importing one for the wrong alg directly is refused too.
      expect(await codeOf(importPublicJwk(jwk, "ES256"))).toBe("ERR_JWK_INVALID");
    }
    // And the other way round: an RS256 token against EC and OKP keys.
    const rs = await new jose.SignJWT(CLAIMS)
      .setProtectedHeader({ alg: "RS256" })
      .sign(rsa.privateKey);
    const notRsa = localKeySet({
      keys: [
        { ...es.jwk, kid: undefined },
        { ...ed.jwk, kid: undefined },
      ],
    });
    expect(await codeOf(verifyJwt(rs, notRsa, { algorithms: ["RS256"] }))).toBe(
      "ERR_JWKS_NO_MATCHING_KEY",
    );
    // A JWK pinned to another alg (`alg: ES384` on a P-256 key) does not match either.
    const pinned = localKeySet({ keys: [{ ...es.jwk, alg: "ES384" }] });
    expect(await codeOf(verifyJwt(await sign(), pinned, { algorithms: ["ES256"] }))).toBe(
      "ERR_JWKS_NO_MATCHING_KEY",
    );
  });

  it("a tampered payload, header or signature fails the signature", async () => {
    const [h, p, s] = (await sign()).split(".") as [string, string, string];
    const forgedPayload = b64({ ...CLAIMS, sub: "root" });
    const forgedHeader = b64({ alg: "ES256", kid: "ES256-key", typ: "JWT" });
    const flipped = encodeBase64url(decodeBase64url(s, "s").map((b, i) => (i === 5 ? b ^ 1 : b)));
    for (const token of [
      `${h}.${forgedPayload}.${s}`,
      `${forgedHeader}.${p}.${s}`,
      `${h}.${p}.${flipped}`,
    ]) {
      expect(await codeOf(verify(token))).toBe("ERR_JWS_SIGNATURE_VERIFICATION_FAILED");
    }
    // A valid signature by another key under the same kid.
    const other = await pair("ES256");
    const forged = await new jose.SignJWT(CLAIMS)
      .setProtectedHeader({ alg: "ES256", kid: "ES256-key" })
      .sign(other.privateKey);
    expect(await codeOf(verify(forged))).toBe("ERR_JWS_SIGNATURE_VERIFICATION_FAILED");
    // Signatures of the wrong length, for each key type.
    for (const alg of ["RS256", "PS256", "EdDSA"]) {
      const k = await pair(alg);
      const [kh, kp, ks] = (
        await new jose.SignJWT(CLAIMS).setProtectedHeader({ alg }).sign(k.privateKey)
      ).split(".") as [string, string, string];
      const cut = encodeBase64url(decodeBase64url(ks, "s").subarray(1));
      const set = localKeySet({ keys: [k.jwk] });
      for (const sig of [cut, "", `${ks}AAAA`]) {
        expect(await codeOf(verifyJwt(`${kh}.${kp}.${sig}`, set, { algorithms: [alg] })), alg).toBe(
          "ERR_JWS_SIGNATURE_VERIFICATION_FAILED",
        );
      }
    }
    // A truncated ECDSA signature (not r‖s of 64 bytes).
    const short = encodeBase64url(decodeBase64url(s, "s").subarray(0, 63));
    expect(await codeOf(verify(`${h}.${p}.${short}`))).toBe(
      "ERR_JWS_SIGNATURE_VERIFICATION_FAILED",
    );
  });

  it("bad base64url, wrong segment counts and non-object JSON are malformed", async () => {
    const [h, p, s] = (await sign()).split(".") as [string, string, string];
    const malformed = [
      "",
      "a.b",
      `${h}.${p}.${s}.x`,
      `${h}=.${p}.${s}`, // padding
      `${h}.${p}.${s}=`,
      `${h}.${p.replace(/./, "+")}.${s}`, // standard base64 alphabet
      `${h}.${p}.${s.slice(0, -1)}*`,
      `${h} .${p}.${s}`,
      `${h}.${p}x.${s}`, // a length no byte string has
      `${encodeBase64url("not json")}.${p}.${s}`,
      `${b64(["ES256"])}.${p}.${s}`,
      `${b64(null)}.${p}.${s}`,
    ];
    for (const token of malformed) {
      expect(await codeOf(verify(token)), token.slice(0, 40)).toBe("ERR_JWS_INVALID");
    }
    // Non-canonical: the last character carries bits that decode to nothing.
    const lastBits = `${h}.${p}.${s.slice(0, -1)}${s.endsWith("A") ? "B" : "A"}`;
    expect(["ERR_JWS_INVALID", "ERR_JWS_SIGNATURE_VERIFICATION_FAILED"]).toContain(
      await codeOf(verify(lastBits)),
    );
    expect(() => decodeBase64url("QQ", "x")).not.toThrow();
    expect(() => decodeBase64url("QR", "x")).toThrow(/canonical/);
  });

  it("a signed payload that is not a JSON object is not a JWT", async () => {
    for (const payload of ["[1]", '"x"', "null", "{"]) {
      const token = await signCompact(
        { alg: "ES256", kid: "ES256-key" },
        new TextEncoder().encode(payload),
        es.privateKey,
      );
      expect(await codeOf(verify(token)), payload).toBe("ERR_JWT_INVALID");
    }
  });

  it("crit is refused (no extension is understood), and so is b64: false", async () => {
    // jose will not sign these, so they are signed here: the signature is valid each time.
    const signed = (header: Record<string, unknown>) =>
      signCompact(
        { alg: "ES256", kid: "ES256-key", ...header },
        new TextEncoder().encode(JSON.stringify(CLAIMS)),
        es.privateKey,
      );
    expect((await verify(await signed({}))).payload.sub).toBe("alice");
    for (const header of [
      { crit: ["exp"], exp: NOW },
      { crit: [] },
      { b64: false, crit: ["b64"] },
      { b64: false },
    ]) {
      expect(await codeOf(verify(await signed(header))), JSON.stringify(header)).toBe(
        "ERR_JOSE_NOT_SUPPORTED",
      );
    }
  });

  it("an oversized token is refused before it is decoded", async () => {
    const huge = await sign({ ...CLAIMS, pad: "x".repeat(16_400) });
    expect(huge.length).toBeGreaterThan(16_384);
    const error = (await verify(huge).catch((e: unknown) => e)) as JoseError;
    expect(error.code).toBe("ERR_JWS_INVALID");
    expect(error.message).toMatch(/longer than 16384/);
    // Just under the limit still verifies.
    const fits = await sign({ ...CLAIMS, pad: "x".repeat(12_000) });
    expect((await verify(fits)).payload.sub).toBe("alice");
  });

  it("exp: refused once past, within the clock tolerance accepted", async () => {
    const token = await sign({ ...CLAIMS, exp: NOW - 10 });
    expect(await codeOf(verify(token))).toBe("ERR_JWT_EXPIRED");
    expect((await verify(token, { clockToleranceSeconds: 30 })).payload.sub).toBe("alice");
    const older = await sign({ ...CLAIMS, exp: NOW - 31 });
    expect(await codeOf(verify(older, { clockToleranceSeconds: 30 }))).toBe("ERR_JWT_EXPIRED");
    // exp equal to now is already expired (RFC 7519 §4.1.4: "on or after").
    expect(await codeOf(verify(await sign({ ...CLAIMS, exp: NOW })))).toBe("ERR_JWT_EXPIRED");
  });

  it("nbf: refused before it, within the clock tolerance accepted", async () => {
    const token = await sign({ ...CLAIMS, nbf: NOW + 10 });
    const error = (await verify(token).catch((e: unknown) => e)) as JoseError;
    expect([error.code, error.claim]).toEqual(["ERR_JWT_CLAIM_VALIDATION_FAILED", "nbf"]);
    expect((await verify(token, { clockToleranceSeconds: 30 })).payload.sub).toBe("alice");
    expect((await verify(await sign({ ...CLAIMS, nbf: NOW }))).payload.sub).toBe("alice");
  });

  it("times that are not numbers are refused", async () => {
    for (const claim of ["exp", "nbf", "iat"]) {
      const token = await sign({ ...CLAIMS, [claim]: String(NOW + 60) });
      const error = (await verify(token).catch((e: unknown) => e)) as JoseError;
      expect([error.code, error.claim], claim).toEqual(["ERR_JWT_CLAIM_VALIDATION_FAILED", claim]);
    }
  });

  it("wrong or missing iss and aud are refused with the claim named", async () => {
    const cases: [object, string][] = [
      [{ ...CLAIMS, iss: "https://evil.test/" }, "iss"],
      [{ ...CLAIMS, iss: undefined }, "iss"],
      [{ ...CLAIMS, aud: "other" }, "aud"],
      [{ ...CLAIMS, aud: ["other", "more"] }, "aud"],
      [{ ...CLAIMS, aud: undefined }, "aud"],
      [{ ...CLAIMS, aud: 7 }, "aud"],
    ];
    for (const [claims, claim] of cases) {
      const error = (await verify(await sign(claims)).catch((e: unknown) => e)) as JoseError;
      expect([error.code, error.claim], JSON.stringify(claims)).toEqual([
        "ERR_JWT_CLAIM_VALIDATION_FAILED",
        claim,
      ]);
    }
    // An audience list containing ours, and one of several accepted audiences, pass.
    expect((await verify(await sign({ ...CLAIMS, aud: ["x", "api"] }))).payload.sub).toBe("alice");
    const many = await verify(await sign({ ...CLAIMS, aud: "b" }), { audience: ["a", "b"] });
    expect(many.payload.sub).toBe("alice");
  });

  it("typ is checked as a media type when asked; required claims must be present", async () => {
    const typed = await sign({}, { typ: "a2a-push+jwt" });
    const opts = { typ: "application/a2a-push+jwt", issuer: undefined, audience: undefined };
    expect((await verify(typed, opts)).header.typ).toBe("a2a-push+jwt");
    const untyped = (await verify(await sign({}), opts).catch((e: unknown) => e)) as JoseError;
    expect(untyped.claim).toBe("typ");
    const missing = (await verify(await sign({ ...CLAIMS, sub: undefined }), {
      requiredClaims: ["sub"],
    }).catch((e: unknown) => e)) as JoseError;
    expect([missing.code, missing.claim]).toEqual(["ERR_JWT_CLAIM_VALIDATION_FAILED", "sub"]);
  });

  it("kid selects the key; without a kid every key of the right type is tried", async () => {
    const a = await pair("ES256");
    const b = await pair("ES256");
    const set = localKeySet({
      keys: [
        { ...a.jwk, kid: "a" },
        { ...b.jwk, kid: "b" },
      ],
    });
    const byB = (kid?: string) =>
      new jose.SignJWT(CLAIMS)
        .setProtectedHeader(kid ? { alg: "ES256", kid } : { alg: "ES256" })
        .sign(b.privateKey);
    const opts = { ...OPTIONS, algorithms: ["ES256"] };
    expect((await verifyJwt(await byB("b"), set, opts)).payload.sub).toBe("alice");
    expect((await verifyJwt(await byB(), set, opts)).payload.sub).toBe("alice");
    // Named as key a: only key a is tried, and it did not sign.
    expect(await codeOf(verifyJwt(await byB("a"), set, opts))).toBe(
      "ERR_JWS_SIGNATURE_VERIFICATION_FAILED",
    );
    expect(await codeOf(verifyJwt(await byB("c"), set, opts))).toBe("ERR_JWKS_NO_MATCHING_KEY");
    const numericKid = `${b64({ alg: "ES256", kid: 1 })}.${b64(CLAIMS)}.AA`;
    expect(await codeOf(verifyJwt(numericKid, set, opts))).toBe("ERR_JWS_INVALID");
  });

  it("a malformed key in the set does not stop a good one; alone it refuses the token", async () => {
    const broken = { ...es.jwk, kid: undefined, x: "AAAA" };
    const token = await sign({}, { kid: undefined });
    const opts = { algorithms: ["ES256"] };
    const mixed = localKeySet({ keys: [broken, { ...es.jwk, kid: undefined }] });
    expect((await verifyJwt(token, mixed, opts)).header.alg).toBe("ES256");
    expect(await codeOf(verifyJwt(token, localKeySet({ keys: [broken] }), opts))).toBe(
      "ERR_JWK_INVALID",
    );
  });

  it("keys for encryption or without verify in key_ops are not used", async () => {
    for (const extra of [{ use: "enc" }, { key_ops: ["sign"] }]) {
      const set = localKeySet({ keys: [{ ...es.jwk, ...extra }] });
      const error = verifyJwt(await sign(), set, { algorithms: ["ES256"] });
      expect(await codeOf(error), JSON.stringify(extra)).toBe("ERR_JWKS_NO_MATCHING_KEY");
    }
  });

  it("RSA keys under 2048 bits are refused", async () => {
    const { privateKey, publicKey } = (await crypto.subtle.generateKey(
      {
        name: "RSASSA-PKCS1-v1_5",
        modulusLength: 1024,
        publicExponent: new Uint8Array([1, 0, 1]),
        hash: "SHA-256",
      },
      true,
      ["sign", "verify"],
    )) as CryptoKeyPair;
    const jwk = (await crypto.subtle.exportKey("jwk", publicKey)) as JWK;
    const token = await signCompact(
      { alg: "RS256" },
      new TextEncoder().encode(JSON.stringify(CLAIMS)),
      privateKey,
    );
    const { alg: _alg, key_ops: _ops, ...bare } = jwk;
    const error = verifyJwt(token, localKeySet({ keys: [bare] }), {
      ...OPTIONS,
      algorithms: ["RS256"],
    });
    expect(await codeOf(error)).toBe("ERR_JWK_INVALID");
  });
});
