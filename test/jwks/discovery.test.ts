import { afterEach, describe, expect, it, vi } from "vitest";
import { discoverJwksUri, JwksUnavailableError } from "../../src/jwks";
import { hangingFetch } from "../support/hanging-fetch";

/**
 * OIDC discovery of an issuer's JWKS URL: bounded in time and size, no redirect followed,
 * the document's `issuer` equal to the configured one, and a failure cooled down.
 */

let n = 0;
/** A fresh issuer per test: discovery results are kept per isolate. */
const issuer = () => `https://issuer-${++n}.test/`;

function serving(respond: (url: string) => Response) {
  const calls: { url: string; init?: RequestInit }[] = [];
  const fetchFn = (async (input: RequestInfo | URL, init?: RequestInit) => {
    calls.push({ url: String(input), init });
    return respond(String(input));
  }) as typeof fetch;
  return { calls, fetch: fetchFn };
}

async function refusal(promise: Promise<unknown>): Promise<Error> {
  return promise.then(
    () => expect.fail("expected a refusal"),
    (e: unknown) => e as Error,
  );
}

afterEach(() => {
  vi.useRealTimers();
});

describe("discoverJwksUri", () => {
  it("finds jwks_uri at {issuer}/.well-known/openid-configuration, without redirects, once", async () => {
    const iss = issuer();
    const server = serving(() => Response.json({ issuer: iss, jwks_uri: `${iss}keys` }));
    expect(await discoverJwksUri(iss, { fetch: server.fetch })).toBe(`${iss}keys`);
    expect(await discoverJwksUri(iss, { fetch: server.fetch })).toBe(`${iss}keys`);
    expect(server.calls).toHaveLength(1);
    expect(server.calls[0]?.url).toBe(`${iss}.well-known/openid-configuration`);
    expect(server.calls[0]?.init).toMatchObject({ method: "GET", redirect: "manual" });
  });

  it("refuses a document naming another issuer (or none)", async () => {
    for (const named of ["https://evil.test/", undefined, `${issuer()}x`]) {
      const iss = issuer();
      const server = serving(() => Response.json({ issuer: named, jwks_uri: `${iss}keys` }));
      const error = await refusal(discoverJwksUri(iss, { fetch: server.fetch }));
      expect(error).toBeInstanceOf(JwksUnavailableError);
      expect(error.message).toMatch(/not the configured/);
    }
  });

  it("refuses a redirect, a non-https jwks_uri, a non-object, non-JSON and an oversized document", async () => {
    const cases: [string, (iss: string) => Response, RegExp][] = [
      [
        "redirect",
        () => new Response(null, { status: 302, headers: { Location: "https://evil.test/" } }),
        /302.*redirects are not followed/,
      ],
      [
        "http jwks_uri",
        (iss) => Response.json({ issuer: iss, jwks_uri: "http://a.test/k" }),
        /https jwks_uri/,
      ],
      ["no jwks_uri", (iss) => Response.json({ issuer: iss }), /https jwks_uri/],
      ["a list", () => Response.json([1]), /not a discovery document/],
      ["not JSON", () => new Response("<html>"), /did not answer JSON/],
      [
        "oversized",
        (iss) => Response.json({ issuer: iss, jwks_uri: `${iss}k`, pad: "x".repeat(70_000) }),
        /more than 65536 bytes/,
      ],
    ];
    for (const [what, respond, message] of cases) {
      const iss = issuer();
      const server = serving(() => respond(iss));
      const error = await refusal(discoverJwksUri(iss, { fetch: server.fetch }));
      expect(error, what).toBeInstanceOf(JwksUnavailableError);
      expect(error.message, what).toMatch(message);
    }
  });

  it("a document that never comes is abandoned at the time limit", async () => {
    const iss = issuer();
    const hanging = hangingFetch();
    const error = await refusal(discoverJwksUri(iss, { fetch: hanging.fetch, timeoutMs: 50 }));
    // The fetch was cut off by the time limit's own signal, and the refusal says so.
    const reason = hanging.signals[0]?.reason as Error | undefined;
    expect(reason?.name).toBe("TimeoutError");
    expect(error).toBeInstanceOf(JwksUnavailableError);
    expect(error.message).toContain(`failed (${reason?.message})`);
  });

  it("a failure cools down 30 s: no fetch per request while the issuer is down", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    const t0 = Date.UTC(2026, 10, 27, 12);
    vi.setSystemTime(t0);
    const iss = issuer();
    let up = false;
    const server = serving(() =>
      up
        ? Response.json({ issuer: iss, jwks_uri: `${iss}keys` })
        : new Response("down", { status: 503 }),
    );
    for (let i = 0; i < 5; i++) {
      expect(await refusal(discoverJwksUri(iss, { fetch: server.fetch }))).toBeInstanceOf(
        JwksUnavailableError,
      );
    }
    expect(server.calls).toHaveLength(1);
    up = true;
    vi.setSystemTime(t0 + 29_999);
    await refusal(discoverJwksUri(iss, { fetch: server.fetch }));
    expect(server.calls).toHaveLength(1);
    vi.setSystemTime(t0 + 30_000);
    expect(await discoverJwksUri(iss, { fetch: server.fetch })).toBe(`${iss}keys`);
    expect(server.calls).toHaveLength(2);
  });
});
