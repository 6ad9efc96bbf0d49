import { SignJWT } from "jose";
import { describe, expect, it } from "vitest";
import type { TaskEvent } from "../../src/protocol/events";
import { eventToV1 } from "../../src/protocol/wire/wire-v1";
import { buildDelivery, type Delivery } from "../../src/push/delivery";
import {
  generateSigningKey,
  loadSigningKey,
  publicJwks,
  type SigningKey,
} from "../../src/push/signing";
import {
  PushVerificationError,
  type PushVerificationReason,
  type VerifyPushOptions,
  verifyPushNotification,
} from "../../src/push/verify";
import { AGENT, everyEvent, fullConfig, HOOK, NOW, statusEvent, TASK_ID } from "./fixtures";

const ES = await loadSigningKey(await generateSigningKey("ES256"));
const ED = await loadSigningKey(await generateSigningKey("EdDSA"));
const OTHER = await loadSigningKey(await generateSigningKey("ES256"));

async function delivery(
  over: { key?: SigningKey; event?: TaskEvent; body?: string; url?: string; now?: number } = {},
): Promise<Delivery> {
  return buildDelivery({
    config: fullConfig(over.url ? { url: over.url } : {}),
    event: over.event ?? statusEvent(),
    eventId: "evt-1",
    body: over.body,
    signingKey: over.key ?? ES,
    issuer: AGENT,
    now: over.now ?? NOW,
  });
}

/** The Request a receiver gets for a delivery, optionally with edits. */
function received(
  d: Delivery,
  edit: { body?: string; headers?: Record<string, string | null> } = {},
) {
  const headers = new Headers(d.init.headers);
  for (const [name, value] of Object.entries(edit.headers ?? {})) {
    if (value === null) headers.delete(name);
    else headers.set(name, value);
  }
  return new Request(d.url, { method: "POST", headers, body: edit.body ?? d.init.body });
}

const options = (over: Partial<VerifyPushOptions> = {}): VerifyPushOptions => ({
  keys: publicJwks([ES, ED]),
  audience: HOOK,
  issuer: AGENT,
  now: NOW + 1000,
  ...over,
});

async function refusal(request: Request, opts: VerifyPushOptions): Promise<PushVerificationError> {
  const error = await verifyPushNotification(request, opts).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(PushVerificationError);
  return error as PushVerificationError;
}

async function expectRefused(
  request: Request,
  opts: VerifyPushOptions,
  reason: PushVerificationReason,
  status: number,
) {
  const error = await refusal(request, opts);
  expect(error.reason).toBe(reason);
  expect(error.status).toBe(status);
  return error;
}

describe("verifyPushNotification: round trips (issue 5 receiver helper)", () => {
  it.each([
    ["ES256", ES],
    ["EdDSA", ED],
  ] as const)(
    "%s: verifies and returns the typed event, id, task and claims",
    async (_alg, key) => {
      const d = await delivery({ key });
      const verified = await verifyPushNotification(received(d), options());
      expect(verified.eventId).toBe("evt-1");
      expect(verified.taskId).toBe(TASK_ID);
      expect(verified.event).toMatchObject({ kind: "status-update", taskId: TASK_ID, final: true });
      expect(verified.payload).toEqual(JSON.parse(d.init.body));
      expect(verified.claims).toMatchObject({
        iss: AGENT,
        aud: HOOK,
        jti: "evt-1",
        taskId: TASK_ID,
      });
    },
  );

  it.each(Object.entries(everyEvent()))("carries a %s event losslessly", async (_label, event) => {
    const verified = await verifyPushNotification(received(await delivery({ event })), options());
    expect(verified.event.kind).toBe(event.kind);
    expect(eventToV1(verified.event)).toEqual(eventToV1(event));
    if (event.kind === "status-update" && verified.event.kind === "status-update") {
      expect(verified.event.final).toBe(event.final);
    }
  });

  it("accepts keys as a JWK list, and the audience without its trailing slash", async () => {
    const d = await delivery({ url: "https://hooks.example.com/" });
    const verified = await verifyPushNotification(
      received(d),
      options({ keys: [ES.publicJwk], audience: "https://hooks.example.com" }),
    );
    expect(verified.eventId).toBe("evt-1");
  });

  it("a private JWK passed as a verification key still works (its private part is ignored)", async () => {
    const jwk = JSON.parse(await generateSigningKey("EdDSA"));
    const key = await loadSigningKey(jwk);
    const d = await delivery({ key });
    await expect(
      verifyPushNotification(received(d), options({ keys: [jwk] })),
    ).resolves.toBeTruthy();
  });

  it("checks the token when asked", async () => {
    const d = await delivery();
    await expect(
      verifyPushNotification(received(d), options({ token: "tok-123" })),
    ).resolves.toBeTruthy();
    await expectRefused(received(d), options({ token: "tok-999" }), "bad-token", 401);
    await expectRefused(
      received(d, { headers: { "X-A2A-Notification-Token": null } }),
      options({ token: "tok-123" }),
      "bad-token",
      401,
    );
  });

  it("tolerates 30 s of clock skew past exp, not more", async () => {
    const d = await delivery();
    const exp = NOW + 300_000;
    await expect(
      verifyPushNotification(received(d), options({ now: exp + 29_000 })),
    ).resolves.toBeTruthy();
    await expectRefused(received(d), options({ now: exp + 31_000 }), "expired", 401);
  });
});

describe("verifyPushNotification: refusals (issue 5: tampered body, wrong audience, …)", () => {
  it("missing signature header", async () => {
    const d = await delivery();
    await expectRefused(
      received(d, { headers: { "X-A2A-Signature": null } }),
      options(),
      "missing-signature",
      401,
    );
  });

  it("an unsigned delivery (no signing key) is refused", async () => {
    const d = await buildDelivery({
      config: fullConfig(),
      event: statusEvent(),
      eventId: "e",
      issuer: AGENT,
    });
    expect(d.init.headers["X-A2A-Signature"]).toBeUndefined();
    await expectRefused(received(d), options(), "missing-signature", 401);
  });

  it("tampered body → body hash mismatch", async () => {
    const d = await delivery();
    const tampered = d.init.body.replace("TASK_STATE_COMPLETED", "TASK_STATE_FAILED");
    expect(tampered).not.toBe(d.init.body);
    await expectRefused(received(d, { body: tampered }), options(), "body-hash-mismatch", 401);
  });

  it("one extra byte of whitespace is a mismatch too (the exact bytes are hashed)", async () => {
    const d = await delivery();
    await expectRefused(
      received(d, { body: `${d.init.body} ` }),
      options(),
      "body-hash-mismatch",
      401,
    );
  });

  it("wrong audience (a delivery for another webhook replayed here)", async () => {
    const d = await delivery({ url: "https://other.example.com/hook" });
    await expectRefused(received(d), options(), "wrong-audience", 401);
  });

  it("wrong issuer", async () => {
    const d = await delivery();
    await expectRefused(
      received(d),
      options({ issuer: "https://evil.example.com" }),
      "wrong-issuer",
      401,
    );
  });

  it("expired (via now)", async () => {
    const d = await delivery();
    await expectRefused(received(d), options({ now: NOW + 3_600_000 }), "expired", 401);
  });

  it("signature by an unknown key", async () => {
    const d = await delivery({ key: OTHER });
    await expectRefused(received(d), options(), "unknown-key", 401);
  });

  it("signature by another key under a published kid → bad signature", async () => {
    const forger: SigningKey = { ...OTHER, kid: ES.kid };
    const d = await delivery({ key: forger });
    await expectRefused(received(d), options(), "bad-signature", 401);
  });

  it("a garbage signature → bad signature", async () => {
    const d = await delivery();
    await expectRefused(
      received(d, { headers: { "X-A2A-Signature": "not.a.jwt" } }),
      options(),
      "bad-signature",
      401,
    );
  });

  it("an unsecured (alg none) token → bad signature", async () => {
    const d = await delivery();
    const none = `${btoa('{"alg":"none","typ":"a2a-push+jwt"}').replace(/=+$/, "")}.${btoa(
      JSON.stringify({ iss: AGENT, aud: HOOK, jti: "evt-1", taskId: TASK_ID }),
    ).replace(/=+$/, "")}.`;
    await expectRefused(
      received(d, { headers: { "X-A2A-Signature": none } }),
      options(),
      "bad-signature",
      401,
    );
  });

  it("a JWT of another type by the same key (no typ) → bad claims", async () => {
    const d = await delivery();
    const jwt = await new SignJWT({ taskId: TASK_ID, bodySha256: "x" })
      .setProtectedHeader({ alg: "ES256", kid: ES.kid })
      .setIssuer(AGENT)
      .setAudience(HOOK)
      .setIssuedAt(NOW / 1000)
      .setExpirationTime(NOW / 1000 + 300)
      .setJti("evt-1")
      .sign(ES.privateKey);
    await expectRefused(
      received(d, { headers: { "X-A2A-Signature": jwt } }),
      options(),
      "bad-claims",
      401,
    );
  });

  it("a signature without the taskId claim → bad claims", async () => {
    const d = await delivery();
    const jwt = await new SignJWT({ bodySha256: "x" })
      .setProtectedHeader({ alg: "ES256", kid: ES.kid, typ: "a2a-push+jwt" })
      .setIssuer(AGENT)
      .setAudience(HOOK)
      .setIssuedAt(NOW / 1000)
      .setExpirationTime(NOW / 1000 + 300)
      .setJti("evt-1")
      .sign(ES.privateKey);
    await expectRefused(
      received(d, { headers: { "X-A2A-Signature": jwt } }),
      options(),
      "bad-claims",
      401,
    );
  });

  it("a signed body that is not JSON → bad JSON", async () => {
    const d = await delivery({ body: "this is not json" });
    await expectRefused(received(d), options(), "bad-json", 400);
  });

  it("a signed JSON body that is not a StreamResponse → bad payload", async () => {
    for (const body of ['{"foo":1}', "[]", '{"task":{"id":"task-1"},"message":{}}']) {
      const d = await delivery({ body });
      const error = await expectRefused(received(d), options(), "bad-payload", 400);
      expect(error.message).toMatch(/StreamResponse/);
    }
  });

  it("a payload about another task than the signed one → task mismatch", async () => {
    const other: TaskEvent = { ...statusEvent(), taskId: "task-2" } as TaskEvent;
    const body = JSON.stringify(eventToV1(other));
    const d = await delivery({ body }); // signed for TASK_ID (from the event)
    await expectRefused(received(d), options(), "task-mismatch", 400);
  });

  it("an event id header that differs from the signed jti", async () => {
    const d = await delivery();
    await expectRefused(
      received(d, { headers: { "X-A2A-Event-Id": "evt-2" } }),
      options(),
      "event-id-mismatch",
      400,
    );
  });
});

describe("verifyPushNotification with a remote JWKS (jwksUrl + custom fetch)", () => {
  const JWKS_URL = `${AGENT}/.well-known/jwks.json`;

  it("fetches the JWKS with the given fetch and caches it per URL", async () => {
    const calls: string[] = [];
    const fakeFetch = (async (input: RequestInfo | URL) => {
      calls.push(String(input));
      return Response.json(publicJwks([ES, ED]));
    }) as typeof fetch;
    const opts = options({ keys: undefined, jwksUrl: JWKS_URL, fetch: fakeFetch });
    for (const key of [ES, ED, ES]) {
      const verified = await verifyPushNotification(received(await delivery({ key })), opts);
      expect(verified.eventId).toBe("evt-1");
    }
    expect(calls).toEqual([JWKS_URL]);
  });

  it("an unknown kid is refused after a refetch finds nothing", async () => {
    const fakeFetch = (async () => Response.json(publicJwks([ES]))) as unknown as typeof fetch;
    const opts = options({ keys: undefined, jwksUrl: `${JWKS_URL}?unknown`, fetch: fakeFetch });
    await expectRefused(received(await delivery({ key: OTHER })), opts, "unknown-key", 401);
  });

  it("a JWKS endpoint that fails → jwks-unavailable (503, so the sender retries)", async () => {
    const failing = (async () => new Response("down", { status: 500 })) as unknown as typeof fetch;
    const throwing = (async () => {
      throw new TypeError("network down");
    }) as unknown as typeof fetch;
    const notJwks = (async () => Response.json({ nope: true })) as unknown as typeof fetch;
    let n = 0;
    for (const fetchFn of [failing, throwing, notJwks]) {
      n += 1;
      const opts = options({ keys: undefined, jwksUrl: `${JWKS_URL}?fail${n}`, fetch: fetchFn });
      await expectRefused(received(await delivery()), opts, "jwks-unavailable", 503);
    }
  });

  it("needs keys or jwksUrl", async () => {
    await expect(
      verifyPushNotification(received(await delivery()), { audience: HOOK }),
    ).rejects.toThrow(TypeError);
  });
});
