import * as jose from "jose";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { JwksUnavailableError, remoteKeySet, verifyJwt } from "../../src/jwks";
import { hangingFetch } from "../support/hanging-fetch";

type JWK = jose.JWK;

/**
 * The remote key set around jose's local key set: cached 10 minutes, refetched at once on
 * an unknown kid, every fetch (good or failed) at most once per 30 s cooldown, the last
 * good set kept an hour past its age while the issuer fails, with a time and a size limit
 * on each fetch and no redirect followed.
 */

const URL = "https://issuer.test/.well-known/jwks.json";
const T0 = Date.UTC(2026, 10, 24, 12);

async function pair(kid: string): Promise<{ privateKey: CryptoKey; jwk: JWK }> {
  const { privateKey, publicKey } = await jose.generateKeyPair("ES256", { extractable: true });
  return { privateKey, jwk: { ...(await jose.exportJWK(publicKey)), kid, alg: "ES256" } };
}

function tokenOf(key: { privateKey: CryptoKey }, kid: string): Promise<string> {
  return new jose.SignJWT({ sub: "alice" })
    .setProtectedHeader({ alg: "ES256", kid })
    .setExpirationTime(T0 / 1000 + 86_400)
    .sign(key.privateKey);
}

/** A fake JWKS endpoint serving `published` (changeable), counting its fetches. */
function endpoint(published: { keys: JWK[] }) {
  const calls: { url: string; init: RequestInit | undefined }[] = [];
  const fetchFn = (async (input: RequestInfo | URL, init?: RequestInit) => {
    calls.push({ url: String(input), init });
    return Response.json(published);
  }) as typeof fetch;
  return { calls, fetch: fetchFn };
}

const verifyWith = (keys: ReturnType<typeof remoteKeySet>, token: string) =>
  verifyJwt(token, keys, { algorithms: ["ES256"], currentDate: new Date(Date.now()) });

async function refusal(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => expect.fail("expected a refusal"),
    (e: unknown) => e,
  );
}

beforeEach(() => {
  vi.useFakeTimers({ toFake: ["Date"] });
  vi.setSystemTime(T0);
});
afterEach(() => {
  vi.useRealTimers();
});

describe("remoteKeySet: caching and refetching", () => {
  it("fetches once (GET, no redirects followed) and caches for 10 minutes", async () => {
    const a = await pair("a");
    const server = endpoint({ keys: [a.jwk] });
    const keys = remoteKeySet(URL, { fetch: server.fetch });
    for (let i = 0; i < 3; i++) await verifyWith(keys, await tokenOf(a, "a"));
    expect(server.calls).toHaveLength(1);
    expect(server.calls[0]?.url).toBe(URL);
    expect(server.calls[0]?.init).toMatchObject({ method: "GET", redirect: "manual" });
    vi.setSystemTime(T0 + 10 * 60_000 - 1);
    await verifyWith(keys, await tokenOf(a, "a"));
    expect(server.calls).toHaveLength(1);
    vi.setSystemTime(T0 + 10 * 60_000);
    await verifyWith(keys, await tokenOf(a, "a"));
    expect(server.calls).toHaveLength(2);
  });

  it("an unknown kid refetches at once after the cooldown, and finds a rotated key", async () => {
    const a = await pair("a");
    const b = await pair("b");
    const published = { keys: [a.jwk] };
    const server = endpoint(published);
    const keys = remoteKeySet(URL, { fetch: server.fetch });
    await verifyWith(keys, await tokenOf(a, "a"));
    published.keys = [a.jwk, b.jwk]; // the issuer rotates
    vi.setSystemTime(T0 + 30_000);
    const { payload } = await verifyWith(keys, await tokenOf(b, "b"));
    expect(payload.sub).toBe("alice");
    expect(server.calls).toHaveLength(2);
  });

  it("a flood of made-up kids fetches at most once per 30 s cooldown", async () => {
    const a = await pair("a");
    const server = endpoint({ keys: [a.jwk] });
    const keys = remoteKeySet(URL, { fetch: server.fetch });
    await verifyWith(keys, await tokenOf(a, "a"));
    const flood = async (n: number) => {
      const tokens = await Promise.all(
        Array.from({ length: n }, (_, i) => tokenOf(a, `made-up-${i}`)),
      );
      const errors = await Promise.all(tokens.map((t) => refusal(verifyWith(keys, t))));
      for (const error of errors) {
        expect((error as jose.errors.JOSEError).code).toBe("ERR_JWKS_NO_MATCHING_KEY");
      }
    };
    await flood(50); // within the cooldown of the first fetch: no fetch at all
    expect(server.calls).toHaveLength(1);
    vi.setSystemTime(T0 + 30_000);
    await flood(50); // past it: one refetch, concurrent tokens included
    expect(server.calls).toHaveLength(2);
    vi.setSystemTime(T0 + 59_999);
    await flood(10);
    expect(server.calls).toHaveLength(2);
    vi.setSystemTime(T0 + 60_000);
    await flood(10);
    expect(server.calls).toHaveLength(3);
  });

  it("a failed fetch cools down: no refetch on every request, one per 30 s", async () => {
    const a = await pair("a");
    let up = false;
    let calls = 0;
    const fetchFn = (async () => {
      calls++;
      return up ? Response.json({ keys: [a.jwk] }) : new Response("down", { status: 503 });
    }) as typeof fetch;
    const keys = remoteKeySet(URL, { fetch: fetchFn });
    for (let i = 0; i < 5; i++) {
      expect(await refusal(verifyWith(keys, await tokenOf(a, "a")))).toBeInstanceOf(
        JwksUnavailableError,
      );
    }
    expect(calls).toBe(1);
    up = true;
    vi.setSystemTime(T0 + 29_999);
    expect(await refusal(verifyWith(keys, await tokenOf(a, "a")))).toBeInstanceOf(
      JwksUnavailableError,
    );
    expect(calls).toBe(1);
    vi.setSystemTime(T0 + 30_000);
    expect((await verifyWith(keys, await tokenOf(a, "a"))).payload.sub).toBe("alice");
    expect(calls).toBe(2);
  });

  it("while the issuer is down, the last good set serves for an hour past its age, then not", async () => {
    const a = await pair("a");
    let up = true;
    let calls = 0;
    const fetchFn = (async () => {
      calls++;
      return up ? Response.json({ keys: [a.jwk] }) : new Response("down", { status: 500 });
    }) as typeof fetch;
    const keys = remoteKeySet(URL, { fetch: fetchFn });
    await verifyWith(keys, await tokenOf(a, "a"));
    up = false;
    // Past the 10 min age: a refetch fails, the stale set still verifies.
    vi.setSystemTime(T0 + 10 * 60_000);
    expect((await verifyWith(keys, await tokenOf(a, "a"))).payload.sub).toBe("alice");
    expect(calls).toBe(2);
    // Within the cooldown of that failure: no fetch, still the stale set.
    expect((await verifyWith(keys, await tokenOf(a, "a"))).payload.sub).toBe("alice");
    expect(calls).toBe(2);
    // An unknown kid while the issuer fails: "try later" (it may be a new key), not 401.
    expect(await refusal(verifyWith(keys, await tokenOf(a, "rotated")))).toBeInstanceOf(
      JwksUnavailableError,
    );
    vi.setSystemTime(T0 + 70 * 60_000 - 1);
    expect((await verifyWith(keys, await tokenOf(a, "a"))).payload.sub).toBe("alice");
    // Past the grace: refused as unavailable.
    vi.setSystemTime(T0 + 70 * 60_000);
    expect(await refusal(verifyWith(keys, await tokenOf(a, "a")))).toBeInstanceOf(
      JwksUnavailableError,
    );
    // Back up: fetched again (past the cooldown) and served fresh.
    up = true;
    vi.setSystemTime(T0 + 71 * 60_000);
    expect((await verifyWith(keys, await tokenOf(a, "a"))).payload.sub).toBe("alice");
  });

  it("several keys fit a token without a kid: each is tried", async () => {
    const a = await pair("a");
    const b = await pair("b");
    const noKid = (key: { privateKey: CryptoKey }) =>
      new jose.SignJWT({ sub: "alice" }).setProtectedHeader({ alg: "ES256" }).sign(key.privateKey);
    const keys = jose.createLocalJWKSet({ keys: [a.jwk, b.jwk] });
    const options = { algorithms: ["ES256"] };
    expect((await verifyJwt(await noKid(b), keys, options)).payload.sub).toBe("alice");
    const other = await pair("c");
    const error = await refusal(verifyJwt(await noKid(other), keys, options));
    expect((error as jose.errors.JOSEError).code).toBe("ERR_JWS_SIGNATURE_VERIFICATION_FAILED");
  });
});

describe("remoteKeySet: what it refuses to load (JwksUnavailableError, not a bad token)", () => {
  const serve = (response: () => Response) => (async () => response()) as unknown as typeof fetch;

  it.each([
    ["a non-200 answer", () => new Response("nope", { status: 404 })],
    [
      "a redirect (not followed)",
      () => new Response(null, { status: 302, headers: { Location: "https://evil.test/" } }),
    ],
    ["not JSON", () => new Response("<html>")],
    ["JSON that is not a JWK Set", () => Response.json({ nope: true })],
    ["a JWK Set whose keys are not objects", () => Response.json({ keys: ["x"] })],
    [
      "more than 64 keys",
      () => Response.json({ keys: Array.from({ length: 65 }, () => ({ kty: "EC" })) }),
    ],
  ])("%s", async (_why, response) => {
    const a = await pair("a");
    const keys = remoteKeySet(URL, { fetch: serve(response) });
    const error = await refusal(verifyWith(keys, await tokenOf(a, "a")));
    expect(error).toBeInstanceOf(JwksUnavailableError);
    expect(error).not.toBeInstanceOf(jose.errors.JOSEError);
  });

  it("a body over the size limit, announced or streamed", async () => {
    const a = await pair("a");
    const big = JSON.stringify({ keys: [a.jwk], pad: "x".repeat(200_000) });
    const streamed = () =>
      new Response(
        new ReadableStream({
          start(controller) {
            controller.enqueue(new TextEncoder().encode(big));
            controller.close();
          },
        }),
      );
    for (const response of [() => new Response(big), streamed]) {
      const keys = remoteKeySet(URL, { fetch: serve(response) });
      const error = await refusal(verifyWith(keys, await tokenOf(a, "a")));
      expect(error).toBeInstanceOf(JwksUnavailableError);
      expect((error as Error).message).toMatch(/more than 131072 bytes/);
    }
    // The same set under the limit loads.
    const fits = remoteKeySet(URL, { fetch: serve(() => Response.json({ keys: [a.jwk] })) });
    expect((await verifyWith(fits, await tokenOf(a, "a"))).payload.sub).toBe("alice");
  });

  it("a fetch that hangs is abandoned at the time limit", async () => {
    vi.useRealTimers();
    const a = await pair("a");
    const hanging = hangingFetch();
    const keys = remoteKeySet(URL, { fetch: hanging.fetch, timeoutMs: 50 });
    const token = await new jose.SignJWT({ sub: "alice" })
      .setProtectedHeader({ alg: "ES256", kid: "a" })
      .sign(a.privateKey);
    const error = await refusal(verifyJwt(token, keys, { algorithms: ["ES256"] }));
    // The fetch was cut off by the time limit's own signal, and the refusal says so.
    const reason = hanging.signals[0]?.reason as Error | undefined;
    expect(reason?.name).toBe("TimeoutError");
    expect(error).toBeInstanceOf(JwksUnavailableError);
    expect((error as Error).message).toContain(`failed (${reason?.message})`);
  });

  it("a network error", async () => {
    const a = await pair("a");
    const failing = (async () => {
      throw new TypeError("network down");
    }) as unknown as typeof fetch;
    const keys = remoteKeySet(URL, { fetch: failing });
    const error = await refusal(verifyWith(keys, await tokenOf(a, "a")));
    expect(error).toBeInstanceOf(JwksUnavailableError);
    expect((error as Error).message).toMatch(/network down/);
  });
});
