import { decodeJwt } from "jose";
import { describe, expect, it, vi } from "vitest";
import { eventToV1 } from "../../src/protocol/wire/wire-v1";
import { eventToV03 } from "../../src/protocol/wire/wire-v03";
import {
  buildDelivery,
  classifyResponse,
  type Delivery,
  deliver,
  type FetchLike,
} from "../../src/push/delivery";
import { bodySha256, generateSigningKey, loadSigningKey } from "../../src/push/signing";
import { AGENT, fullConfig, HOOK, NOW, statusEvent, TASK_ID } from "./fixtures";

const KEY = await loadSigningKey(await generateSigningKey("ES256"));

describe("buildDelivery (issue 5, spec §4.3.3)", () => {
  it("POSTs the v1 StreamResponse with exactly the documented headers", async () => {
    const event = statusEvent();
    const d = await buildDelivery({
      config: fullConfig(),
      event,
      eventId: "evt-42",
      signingKey: KEY,
      issuer: AGENT,
      now: NOW,
    });
    expect(d.url).toBe(HOOK);
    expect(d.init.method).toBe("POST");
    expect(d.init.redirect).toBe("manual");
    expect(d.init.body).toBe(JSON.stringify(eventToV1(event)));
    expect(JSON.parse(d.init.body)).toEqual({
      statusUpdate: {
        taskId: TASK_ID,
        contextId: "ctx-1",
        status: { state: "TASK_STATE_COMPLETED", timestamp: new Date(NOW).toISOString() },
      },
    });
    const signature = d.init.headers["X-A2A-Signature"] ?? "";
    expect(d.init.headers).toEqual({
      "Content-Type": "application/a2a+json",
      Authorization: "Bearer s3cret",
      "X-A2A-Notification-Token": "tok-123",
      "X-A2A-Event-Id": "evt-42",
      "Idempotency-Key": '"evt-42"',
      "X-A2A-Signature": signature,
    });
    expect(decodeJwt(signature)).toEqual({
      iss: AGENT,
      aud: HOOK,
      iat: NOW / 1000,
      exp: NOW / 1000 + 300,
      jti: "evt-42",
      taskId: TASK_ID,
      bodySha256: await bodySha256(d.init.body),
    });
  });

  it("leaves out Authorization and the token when the config has none", async () => {
    const d = await buildDelivery({
      config: fullConfig({ token: undefined, authentication: undefined }),
      event: statusEvent(),
      eventId: "e1",
      signingKey: KEY,
      issuer: AGENT,
    });
    expect(Object.keys(d.init.headers).sort()).toEqual([
      "Content-Type",
      "Idempotency-Key",
      "X-A2A-Event-Id",
      "X-A2A-Signature",
    ]);
  });

  it("sends the scheme alone when authentication has no credentials", async () => {
    const d = await buildDelivery({
      config: fullConfig({ authentication: { scheme: "Negotiate" } }),
      event: statusEvent(),
      eventId: "e1",
      issuer: AGENT,
    });
    expect(d.init.headers.Authorization).toBe("Negotiate");
    expect(d.init.headers["X-A2A-Signature"]).toBeUndefined();
  });

  it("uses the captured body as is, and signs exactly it", async () => {
    const body =
      '{"statusUpdate":{"taskId":"task-1","contextId":"ctx-1","status":{"state":"TASK_STATE_WORKING"}}}';
    const d = await buildDelivery({
      config: fullConfig(),
      event: statusEvent(),
      eventId: "e1",
      body,
      signingKey: KEY,
      issuer: AGENT,
    });
    expect(d.init.body).toBe(body);
    expect(decodeJwt(d.init.headers["X-A2A-Signature"] ?? "").bodySha256).toBe(
      await bodySha256(body),
    );
  });

  it("a v0.3 registration gets the v0.3 event as application/json", async () => {
    const event = statusEvent();
    const d = await buildDelivery({
      config: fullConfig({ protocolVersion: "0.3" }),
      event,
      eventId: "e1",
      issuer: AGENT,
    });
    expect(d.init.headers["Content-Type"]).toBe("application/json");
    expect(JSON.parse(d.init.body)).toEqual(eventToV03(event));
    expect(JSON.parse(d.init.body).kind).toBe("status-update");
  });

  it("the same event id gives the same idempotency headers on every attempt; the signature is fresh", async () => {
    const input = {
      config: fullConfig(),
      event: statusEvent(),
      eventId: "e9",
      signingKey: KEY,
      issuer: AGENT,
    };
    const first = await buildDelivery({ ...input, now: NOW });
    const retry = await buildDelivery({ ...input, now: NOW + 3_600_000 });
    expect(retry.init.headers["X-A2A-Event-Id"]).toBe(first.init.headers["X-A2A-Event-Id"]);
    expect(retry.init.headers["Idempotency-Key"]).toBe(first.init.headers["Idempotency-Key"]);
    expect(retry.init.body).toBe(first.init.body);
    expect(decodeJwt(retry.init.headers["X-A2A-Signature"] ?? "").iat).toBe(NOW / 1000 + 3600);
  });

  it("quotes and escapes the Idempotency-Key as a structured-field string", async () => {
    const d = await buildDelivery({
      config: fullConfig(),
      event: statusEvent(),
      eventId: 'a"b\\c',
      issuer: AGENT,
    });
    expect(d.init.headers["Idempotency-Key"]).toBe('"a\\"b\\\\c"');
  });

  it.each(["", "has space", "new\nline", "ünï"])(
    "refuses the event id %j (it is a header)",
    async (eventId) => {
      await expect(
        buildDelivery({ config: fullConfig(), event: statusEvent(), eventId, issuer: AGENT }),
      ).rejects.toThrow(/eventId/);
    },
  );

  it("the init is a valid fetch RequestInit", async () => {
    const d = await buildDelivery({
      config: fullConfig(),
      event: statusEvent(),
      eventId: "e",
      issuer: AGENT,
      signingKey: KEY,
    });
    const request = new Request(d.url, d.init);
    expect(request.method).toBe("POST");
    expect(request.headers.get("authorization")).toBe("Bearer s3cret");
    expect(await request.text()).toBe(d.init.body);
  });
});

describe("classifyResponse (H7: which answers are retried)", () => {
  const none = new Headers();

  it.each([200, 201, 202, 204, 299])("%i → delivered", (status) => {
    expect(classifyResponse(status, none)).toEqual({ outcome: "delivered", status });
  });

  it.each([408, 429, 500, 502, 503, 504])("%i → retry", (status) => {
    expect(classifyResponse(status, none)).toEqual({
      outcome: "retry",
      status,
      reason: `HTTP ${status}`,
    });
  });

  it.each([400, 401, 403, 404, 413, 422])("%i → permanent", (status) => {
    expect(classifyResponse(status, none)).toEqual({
      outcome: "permanent",
      status,
      reason: `HTTP ${status}`,
    });
  });

  it("410 Gone → permanent, saying the webhook is gone", () => {
    expect(classifyResponse(410, none)).toEqual({
      outcome: "permanent",
      status: 410,
      reason: "HTTP 410: the webhook no longer exists",
    });
  });

  it.each([301, 302, 307, 308])("%i → permanent (redirects are not followed)", (status) => {
    const result = classifyResponse(status, new Headers({ Location: "http://10.0.0.1/" }));
    expect(result).toMatchObject({ outcome: "permanent", status });
    expect(result.outcome === "permanent" && result.reason).toMatch(/redirects are not followed/);
  });

  it("H8: a Retry-After in seconds or as a date comes back in ms", () => {
    expect(classifyResponse(503, new Headers({ "Retry-After": "30" }))).toEqual({
      outcome: "retry",
      status: 503,
      retryAfterMs: 30_000,
      reason: "HTTP 503",
    });
    const later = new Date(NOW + 90_000).toUTCString();
    expect(classifyResponse(429, new Headers({ "Retry-After": later }), NOW)).toMatchObject({
      outcome: "retry",
      retryAfterMs: 90_000,
    });
  });

  it("a Retry-After on a permanent failure changes nothing", () => {
    expect(classifyResponse(404, new Headers({ "Retry-After": "30" }))).toEqual({
      outcome: "permanent",
      status: 404,
      reason: "HTTP 404",
    });
  });
});

describe("deliver (issue 5: 10 s timeout; never throws)", () => {
  const make = async (): Promise<Delivery> =>
    buildDelivery({
      config: fullConfig(),
      event: statusEvent(),
      eventId: "e1",
      issuer: AGENT,
      signingKey: KEY,
    });

  it("takes the platform fetch as its fetch function (type check)", () => {
    const platform: FetchLike = fetch;
    expect(typeof platform).toBe("function");
  });

  it("POSTs the delivery and reports delivered", async () => {
    const d = await make();
    const seen: { url: string; init: RequestInit }[] = [];
    const fetchFn: FetchLike = async (url, init) => {
      seen.push({ url, init });
      return new Response(null, { status: 204 });
    };
    const result = await deliver(fetchFn, d);
    expect(result).toMatchObject({ outcome: "delivered", status: 204 });
    expect(result.elapsedMs).toBeGreaterThanOrEqual(0);
    expect(seen).toHaveLength(1);
    expect(seen[0]?.url).toBe(HOOK);
    expect(seen[0]?.init).toMatchObject({ method: "POST", body: d.init.body, redirect: "manual" });
    expect(seen[0]?.init.headers).toEqual(d.init.headers);
    expect(seen[0]?.init.signal).toBeInstanceOf(AbortSignal);
  });

  it("a fetch that throws → retry with the error, no throw", async () => {
    const fetchFn: FetchLike = async () => {
      throw new TypeError("connection refused");
    };
    expect(await deliver(fetchFn, await make())).toMatchObject({
      outcome: "retry",
      reason: "network error: TypeError: connection refused",
    });
  });

  it("a fetch that throws synchronously → retry too", async () => {
    const fetchFn: FetchLike = () => {
      throw new Error("boom");
    };
    expect(await deliver(fetchFn, await make())).toMatchObject({ outcome: "retry" });
  });

  it("a fetch that hangs past the timeout → retry, and the request is aborted", async () => {
    let signal: AbortSignal | undefined;
    const fetchFn: FetchLike = (_url, init) => {
      signal = init.signal ?? undefined;
      return new Promise<Response>(() => {}); // never answers, ignores the signal
    };
    // The timer the delivery set (50 ms) ended it, and aborted the request it gave up on.
    const result = await deliver(fetchFn, await make(), { timeoutMs: 50 });
    expect(result).toMatchObject({ outcome: "retry", reason: "timed out after 50 ms" });
    expect(signal?.aborted).toBe(true);
  });

  it("the default timeout is 10 s", async () => {
    const fetchFn: FetchLike = () => new Promise<Response>(() => {});
    vi.useFakeTimers();
    try {
      const pending = deliver(fetchFn, await make());
      await vi.advanceTimersByTimeAsync(9_999);
      let settled = false;
      void pending.then(() => {
        settled = true;
      });
      await vi.advanceTimersByTimeAsync(0);
      expect(settled).toBe(false);
      await vi.advanceTimersByTimeAsync(1);
      expect(await pending).toMatchObject({ reason: "timed out after 10000 ms" });
    } finally {
      vi.useRealTimers();
    }
  });

  it("500 with Retry-After → retry with the delay", async () => {
    const fetchFn: FetchLike = async () =>
      new Response("busy", { status: 500, headers: { "Retry-After": "7" } });
    expect(await deliver(fetchFn, await make())).toMatchObject({
      outcome: "retry",
      status: 500,
      retryAfterMs: 7000,
    });
  });

  it("410 → permanent", async () => {
    const fetchFn: FetchLike = async () => new Response("gone", { status: 410 });
    expect(await deliver(fetchFn, await make())).toMatchObject({
      outcome: "permanent",
      status: 410,
    });
  });

  it("an aborted signal → retry at once", async () => {
    const controller = new AbortController();
    controller.abort();
    const fetchFn: FetchLike = () => new Promise<Response>(() => {});
    expect(await deliver(fetchFn, await make(), { signal: controller.signal })).toMatchObject({
      outcome: "retry",
      reason: "aborted before the receiver answered",
    });
  });

  it("a signal aborted mid-request → retry", async () => {
    const controller = new AbortController();
    const fetchFn: FetchLike = () => {
      setTimeout(() => controller.abort(), 10);
      return new Promise<Response>(() => {});
    };
    expect(await deliver(fetchFn, await make(), { signal: controller.signal })).toMatchObject({
      outcome: "retry",
      reason: "aborted before the receiver answered",
    });
  });
});
