import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { Hono } from "hono";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import * as z from "zod";
import type { AgentConfig } from "../../src/agent/agent-config";
import { errorFromHttp, errorFromJsonRpc, RateLimitedError } from "../../src/client/errors";
import type { JsonValue } from "../../src/protocol/json";
import { endpoint } from "../../src/worker/a2a/endpoints";
import { defineAgent } from "../../src/worker/app/define-agent";
import { ipPrefix } from "../../src/worker/rate-limit";
import { userMessage } from "../support/helpers";
import {
  ALICE,
  API_KEYS,
  authedAgent,
  BOB,
  EVE,
  type Key,
  ROOT,
  signingKey,
  token,
} from "./auth-support";

type Json = Record<string, unknown>;
type Extra = Partial<AgentConfig<Record<string, unknown>>>;

/** A stand-in for a Rate Limiting binding: `limit` requests per key, then refusals. */
function fakeLimiter(limit: number) {
  const counts = new Map<string, number>();
  const keys: string[] = [];
  return {
    keys,
    limit: async ({ key }: { key: string }) => {
      keys.push(key);
      const n = (counts.get(key) ?? 0) + 1;
      counts.set(key, n);
      return { success: n <= limit };
    },
  };
}

/**
 * The Durable Object namespaces, counting every object a request names: a refused request
 * must name none.
 */
function watchedStorage() {
  const touched: string[] = [];
  const watch = (name: "EDGELINK_CONTEXT" | "EDGELINK_INDEX") => {
    const ns = env[name];
    return {
      idFromName: (id: string) => {
        touched.push(`${name}:${id}`);
        return ns.idFromName(id);
      },
      idFromString: (id: string) => {
        touched.push(`${name}:${id}`);
        return ns.idFromString(id);
      },
      get: (id: DurableObjectId) => ns.get(id),
    };
  };
  return {
    touched,
    EDGELINK_CONTEXT: watch("EDGELINK_CONTEXT"),
    EDGELINK_INDEX: watch("EDGELINK_INDEX"),
  };
}

let key: Key;
beforeAll(async () => {
  key = await signingKey();
});

/** The guarded test agent, with extra options, served with extra env bindings. */
function served(extra: Extra, bindings: Record<string, unknown> = {}) {
  const worker = authedAgent(key, extra);
  // One env object for every request, as a Worker's isolate has (the start-up check runs
  // once per env).
  const workerEnv = { ...env, AGENT_API_KEYS: API_KEYS, ...bindings };
  return async (
    method: string,
    path: string,
    init: { body?: unknown; headers?: Record<string, string>; base?: string } = {},
  ) => {
    const ctx = createExecutionContext();
    const request = new Request(`${init.base ?? "http://agent.test"}${path}`, {
      method,
      headers: { "Content-Type": "application/json", "A2A-Version": "1.0", ...init.headers },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
    });
    const response = await worker.fetch(request, workerEnv, ctx);
    void waitOnExecutionContext(ctx);
    return response;
  };
}

type Call = ReturnType<typeof served>;

const sendBody = (text = "hello") => ({
  jsonrpc: "2.0",
  id: 9,
  method: "SendMessage",
  params: { message: userMessage(text), configuration: { returnImmediately: true } },
});

const send = (call: Call, headers: Record<string, string>, extra: Json = {}) =>
  call("POST", "/", {
    headers,
    body: { ...sendBody(), params: { ...sendBody().params, ...extra } },
  });

async function statuses(call: Call, headers: Record<string, string>, n: number) {
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push((await send(call, headers)).status);
  return out;
}

describe("rate limit refusals", () => {
  it("answers JSON-RPC with 429, Retry-After and -32603 RATE_LIMIT_EXCEEDED", async () => {
    const call = served(
      { rateLimit: { perPrincipal: "TEST_CALLER_LIMIT" } },
      { TEST_CALLER_LIMIT: fakeLimiter(2) },
    );
    expect(await statuses(call, ALICE, 2)).toEqual([200, 200]);
    const refused = await send(call, ALICE);
    expect(refused.status).toBe(429);
    expect(refused.headers.get("Retry-After")).toBe("60");
    const body = (await refused.json()) as { error: { code: number; data: Json[] } };
    expect(body.error.code).toBe(-32603);
    expect(body.error.data[0]).toMatchObject({
      reason: "RATE_LIMIT_EXCEEDED",
      metadata: { limit: "principal", retryAfterSeconds: "60" },
    });
  });

  it("answers HTTP+JSON with the google.rpc.Status shape and the binding's period", async () => {
    const call = served(
      { rateLimit: { perPrincipal: { binding: "TEST_CALLER_LIMIT", periodSeconds: 10 } } },
      { TEST_CALLER_LIMIT: fakeLimiter(1) },
    );
    expect((await call("GET", "/tasks", { headers: ALICE })).status).toBe(200);
    const refused = await call("GET", "/tasks", { headers: ALICE });
    expect(refused.status).toBe(429);
    expect(refused.headers.get("Retry-After")).toBe("10");
    const body = (await refused.json()) as { error: Json & { details: Json[] } };
    expect(body.error).toMatchObject({ code: 429, status: "RESOURCE_EXHAUSTED" });
    expect(body.error.details[0]).toMatchObject({ reason: "RATE_LIMIT_EXCEEDED" });
  });

  it("refuses streams, subscriptions, the chat endpoint and declared endpoints before they start", async () => {
    const echo = endpoint({
      name: "echo",
      method: "POST",
      path: "/echo",
      source: "body",
      input: z.object({ say: z.string() }),
      handler: (input) => input,
    });
    const call = served(
      { rateLimit: { perPrincipal: "TEST_CALLER_LIMIT" }, endpoints: [echo] },
      { TEST_CALLER_LIMIT: fakeLimiter(0) },
    );
    const attempts: [string, string, unknown][] = [
      ["POST", "/", { ...sendBody(), method: "SendStreamingMessage" }],
      ["POST", "/", { jsonrpc: "2.0", id: 1, method: "SubscribeToTask", params: { id: "t1" } }],
      ["POST", "/message:stream", { message: userMessage("hi") }],
      ["GET", "/tasks/t1:subscribe", undefined],
      ["POST", "/chat", { message: "hi" }],
      ["GET", "/chat/t1", undefined],
      ["POST", "/acme/chat", { message: "hi" }],
      ["POST", "/echo", { say: "hi" }],
    ];
    for (const [method, path, body] of attempts) {
      const response = await call(method, path, { headers: ALICE, body });
      expect(`${method} ${path} ${response.status}`).toBe(`${method} ${path} 429`);
      expect(response.headers.get("Content-Type")).toContain("application/json");
      expect(response.headers.get("Retry-After")).toBe("60");
    }
  });

  it("reaches edgelink/client as RateLimitedError in both bindings", async () => {
    const call = served(
      { rateLimit: { perPrincipal: "TEST_CALLER_LIMIT" } },
      { TEST_CALLER_LIMIT: fakeLimiter(0) },
    );
    const rpc = await send(call, ALICE);
    const { error } = (await rpc.json()) as { error: JsonValue };
    const rpcError = errorFromJsonRpc(error, rpc.status);
    expect(rpcError).toBeInstanceOf(RateLimitedError);
    expect(rpcError.errorInfo?.metadata.retryAfterSeconds).toBe("60");
    const rest = await call("GET", "/tasks", { headers: ALICE });
    expect(errorFromHttp(rest.status, await rest.text())).toBeInstanceOf(RateLimitedError);
  });

  it("answers JSON-RPC in its shape when the agent is mounted under a path", async () => {
    const worker = authedAgent(key, { rateLimit: { perPrincipal: "TEST_CALLER_LIMIT" } });
    const app = new Hono();
    app.route("/agent", worker.app);
    const bindings = { ...env, AGENT_API_KEYS: API_KEYS, TEST_CALLER_LIMIT: fakeLimiter(0) };
    const init = (body: unknown) => ({
      method: "POST",
      headers: { "Content-Type": "application/json", "A2A-Version": "1.0", ...ALICE },
      body: JSON.stringify(body),
    });
    const rpc = await app.request("http://agent.test/agent", init(sendBody()), bindings);
    expect(rpc.status).toBe(429);
    expect(((await rpc.json()) as Json).jsonrpc).toBe("2.0");
    const rest = await app.request(
      "http://agent.test/agent/message:send",
      init({ message: userMessage("hi") }),
      bindings,
    );
    expect(rest.status).toBe(429);
    expect(((await rest.json()) as { error: Json }).error.status).toBe("RESOURCE_EXHAUSTED");
  });

  it("never limits the agent card or the JWKS", async () => {
    const call = served(
      { rateLimit: { perPrincipal: "TEST_CALLER_LIMIT" } },
      { TEST_CALLER_LIMIT: fakeLimiter(0) },
    );
    for (const path of [
      "/.well-known/agent-card.json",
      "/.well-known/agent.json",
      "/.well-known/jwks.json",
    ]) {
      expect((await call("GET", path)).status).toBe(200);
    }
  });

  it("stores nothing for a refused request: no Durable Object is named", async () => {
    const storage = watchedStorage();
    const call = served(
      { rateLimit: { perPrincipal: "TEST_CALLER_LIMIT" } },
      {
        TEST_CALLER_LIMIT: fakeLimiter(1),
        EDGELINK_CONTEXT: storage.EDGELINK_CONTEXT,
        EDGELINK_INDEX: storage.EDGELINK_INDEX,
      },
    );
    expect((await send(call, ALICE)).status).toBe(200);
    expect(storage.touched.length).toBeGreaterThan(0);
    storage.touched.length = 0;
    expect((await send(call, ALICE)).status).toBe(429);
    expect((await call("GET", "/tasks", { headers: ALICE })).status).toBe(429);
    expect((await call("POST", "/chat", { headers: ALICE, body: { message: "hi" } })).status).toBe(
      429,
    );
    expect(storage.touched).toEqual([]);
  });

  it("refuses before the body is read: an oversized body gets the 429, not the 413", async () => {
    const call = served(
      { rateLimit: { perPrincipal: "TEST_CALLER_LIMIT" }, maxBodyBytes: 100 },
      { TEST_CALLER_LIMIT: fakeLimiter(0) },
    );
    const big = { ...sendBody("x".repeat(500)) };
    expect((await call("POST", "/", { headers: ALICE, body: big })).status).toBe(429);
    expect((await call("POST", "/message:send", { headers: ALICE, body: big })).status).toBe(429);
  });
});

describe("per-principal limits", () => {
  it("one caller exhausted, another still served", async () => {
    const call = served(
      { rateLimit: { perPrincipal: "TEST_CALLER_LIMIT" } },
      { TEST_CALLER_LIMIT: fakeLimiter(2) },
    );
    expect(await statuses(call, ALICE, 3)).toEqual([200, 200, 429]);
    expect(await statuses(call, BOB, 2)).toEqual([200, 200]);
    expect((await send(call, ALICE)).status).toBe(429);
  });

  it("counts a caller by scheme, issuer and subject: a token for sub alice is not API key alice", async () => {
    const limiter = fakeLimiter(1);
    const call = served(
      { rateLimit: { perPrincipal: "TEST_CALLER_LIMIT" } },
      { TEST_CALLER_LIMIT: limiter },
    );
    const bearer = { Authorization: `Bearer ${await token(key, { sub: "alice" })}` };
    expect(await statuses(call, ALICE, 2)).toEqual([200, 429]);
    expect(await statuses(call, bearer, 2)).toEqual([200, 429]);
    const distinct = new Set(limiter.keys);
    expect(distinct.size).toBe(2);
    // Hashed: neither the subject nor the issuer travels to the limiter.
    for (const k of distinct) expect(k).toMatch(/^edgelink:principal:[A-Za-z0-9+/]{43}=$/);
  });

  it("counts anonymous callers by IP address, an IPv6 address by its /64", async () => {
    const worker = defineAgent<Record<string, unknown>>({
      card: { name: "Open", description: "No auth" },
      rateLimit: { perPrincipal: "TEST_CALLER_LIMIT" },
    });
    const bindings = { ...env, TEST_CALLER_LIMIT: fakeLimiter(1) };
    const from = async (ip: string) => {
      const request = new Request("http://agent.test/", {
        method: "POST",
        headers: {
          "Content-Type": "application/json",
          "A2A-Version": "1.0",
          "CF-Connecting-IP": ip,
        },
        body: JSON.stringify(sendBody()),
      });
      const ctx = createExecutionContext();
      const response = await worker.fetch(request, bindings, ctx);
      void waitOnExecutionContext(ctx);
      return response.status;
    };
    expect(await from("203.0.113.7")).toBe(200);
    expect(await from("203.0.113.7")).toBe(429);
    expect(await from("203.0.113.8")).toBe(200);
    expect(await from("2001:db8:1:2::1")).toBe(200);
    expect(await from("2001:db8:1:2:ffff::9")).toBe(429);
    expect(await from("2001:db8:1:3::1")).toBe(200);
  });

  it("reduces IPv6 addresses to their /64", () => {
    expect(ipPrefix("2001:0db8:0001:0002:0000:0000:0000:0001")).toBe("2001:db8:1:2::/64");
    expect(ipPrefix("2001:db8::1")).toBe("2001:db8:0:0::/64");
    expect(ipPrefix("::1")).toBe("0:0:0:0::/64");
    expect(ipPrefix("1::2:3:4:5:6:7")).toBe("1:0:2:3::/64");
    expect(ipPrefix("198.51.100.1")).toBe("198.51.100.1");
    expect(ipPrefix("::ffff:198.51.100.1")).toBe("::ffff:198.51.100.1");
  });
});

describe("per-tenant limits", () => {
  it("counts every caller of a tenant together; another tenant is still served", async () => {
    const call = served(
      { rateLimit: { perTenant: "TEST_TENANT_LIMIT" } },
      { TEST_TENANT_LIMIT: fakeLimiter(3) },
    );
    // Alice and Bob are both in tenant acme; Eve is in evil.
    expect(await statuses(call, ALICE, 2)).toEqual([200, 200]);
    expect(await statuses(call, BOB, 2)).toEqual([200, 429]);
    const refused = await send(call, ALICE);
    expect(refused.status).toBe(429);
    const body = (await refused.json()) as { error: { data: Json[] } };
    expect(body.error.data[0]).toMatchObject({ metadata: { limit: "tenant" } });
    expect(await statuses(call, EVE, 2)).toEqual([200, 200]);
  });

  it("counts the multi-tenant admin in the tenant it names (path or params.tenant)", async () => {
    const call = served(
      { rateLimit: { perTenant: "TEST_TENANT_LIMIT" } },
      { TEST_TENANT_LIMIT: fakeLimiter(1) },
    );
    expect((await call("GET", "/acme/tasks", { headers: ROOT })).status).toBe(200);
    expect((await call("GET", "/acme/tasks", { headers: ROOT })).status).toBe(429);
    // Tenant evil's budget is untouched by the admin's requests in acme.
    expect((await send(call, ROOT, { tenant: "evil" })).status).toBe(200);
    const refused = await send(call, ROOT, { tenant: "evil" });
    expect(refused.status).toBe(429);
    expect(refused.headers.get("Retry-After")).toBe("60");
    expect((await send(call, ROOT, { tenant: "ops" })).status).toBe(200);
  });

  it("checks both: the caller's limit first, then its tenant's", async () => {
    const caller = fakeLimiter(1);
    const tenant = fakeLimiter(10);
    const call = served(
      { rateLimit: { perPrincipal: "TEST_CALLER_LIMIT", perTenant: "TEST_TENANT_LIMIT" } },
      { TEST_CALLER_LIMIT: caller, TEST_TENANT_LIMIT: tenant },
    );
    expect(await statuses(call, ALICE, 2)).toEqual([200, 429]);
    // The refused request was not counted against the tenant.
    expect(tenant.keys.length).toBe(1);
  });
});

describe("rate limit configuration", () => {
  afterEach(() => vi.restoreAllMocks());

  it("uses the conventionally named bindings when rateLimit is unset", async () => {
    const call = served({}, { EDGELINK_PRINCIPAL_RATE_LIMIT: fakeLimiter(1) });
    expect(await statuses(call, ALICE, 2)).toEqual([200, 429]);
    const tenantCall = served({}, { EDGELINK_TENANT_RATE_LIMIT: fakeLimiter(1) });
    expect(await statuses(tenantCall, BOB, 2)).toEqual([200, 429]);
  });

  it("rateLimit: false ignores even the conventional bindings", async () => {
    const call = served({ rateLimit: false }, { EDGELINK_PRINCIPAL_RATE_LIMIT: fakeLimiter(0) });
    expect(await statuses(call, ALICE, 2)).toEqual([200, 200]);
  });

  it("warns once when an agent on a public host has no rate limit binding", async () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const call = served({});
    await call("GET", "/tasks", { headers: ALICE, base: "https://agent.example.com" });
    await call("GET", "/tasks", { headers: ALICE, base: "https://agent.example.com" });
    const ours = warn.mock.calls.filter((args) => String(args[0]).includes("not rate-limited"));
    expect(ours.length).toBe(1);
    expect(String(ours[0]?.[0])).toContain("EDGELINK_PRINCIPAL_RATE_LIMIT");

    warn.mockClear();
    const local = served({});
    await local("GET", "/tasks", { headers: ALICE, base: "http://localhost:8787" });
    const off = served({ rateLimit: false });
    await off("GET", "/tasks", { headers: ALICE, base: "https://agent.example.com" });
    expect(warn.mock.calls.filter((a) => String(a[0]).includes("not rate-limited"))).toEqual([]);
  });

  it("a named binding the Worker lacks stops it from loading, naming the binding and option", () => {
    const define = () =>
      defineAgent({
        card: { name: "A", description: "a" },
        rateLimit: { perTenant: "NO_SUCH_LIMIT" },
      });
    expect(define).toThrow(
      /rateLimit.perTenant: NO_SUCH_LIMIT is not a rate limit binding of this Worker/,
    );
    // Something of that name that is not a limiter is the same error.
    expect(() =>
      defineAgent({
        card: { name: "A", description: "a" },
        rateLimit: { perPrincipal: "EDGELINK_ID_KEY" },
      }),
    ).toThrow(/rateLimit.perPrincipal: EDGELINK_ID_KEY is not a rate limit binding/);
  });

  it("a binding missing from a request's env fails every limited request with an error naming it", async () => {
    vi.spyOn(console, "error").mockImplementation(() => {});
    const call = served(
      { rateLimit: { perTenant: "TEST_TENANT_LIMIT" } },
      { TEST_TENANT_LIMIT: undefined },
    );
    for (let i = 0; i < 2; i++) {
      const response = await send(call, ALICE);
      expect(response.status).toBe(500);
      const text = await response.text();
      expect(text).toContain("TEST_TENANT_LIMIT");
      expect(text).toContain("rateLimit.perTenant");
    }
    expect((await call("GET", "/tasks", { headers: ALICE })).status).toBe(500);
  });

  it("a binding that is not a limiter, or whose limit throws, is a configuration error", async () => {
    const logged = vi.spyOn(console, "error").mockImplementation(() => {});
    const notALimiter = served(
      { rateLimit: { perPrincipal: "TEST_CALLER_LIMIT" } },
      { TEST_CALLER_LIMIT: "a string" },
    );
    const wrong = await send(notALimiter, ALICE);
    expect(wrong.status).toBe(500);
    expect(await wrong.text()).toContain(
      "rateLimit.perPrincipal: TEST_CALLER_LIMIT is not a rate limit binding",
    );

    const throwing = {
      limit: async () => {
        throw new Error("bad rate limit options");
      },
    };
    const broken = served(
      { rateLimit: { perPrincipal: "TEST_CALLER_LIMIT" } },
      { TEST_CALLER_LIMIT: throwing },
    );
    const failed = await broken("GET", "/tasks", { headers: ALICE });
    expect(failed.status).toBe(500);
    expect(await failed.text()).toContain(
      "rateLimit.perPrincipal: the rate limit binding TEST_CALLER_LIMIT failed",
    );
    const mute = { limit: async () => ({ allowed: true }) };
    const odd = served(
      { rateLimit: { perPrincipal: "TEST_CALLER_LIMIT" } },
      { TEST_CALLER_LIMIT: mute },
    );
    const unanswered = await odd("GET", "/tasks", { headers: ALICE });
    expect(unanswered.status).toBe(500);
    expect(await unanswered.text()).toContain("TEST_CALLER_LIMIT failed");
    expect(logged).toHaveBeenCalledTimes(3);
  });

  it("refuses bad options when the agent is defined, naming the option", () => {
    const define = (rateLimit: unknown) => () =>
      defineAgent({ card: { name: "A", description: "a" }, rateLimit: rateLimit as false });
    expect(define({ perCaller: "X" })).toThrow(/unknown option rateLimit\.perCaller/);
    expect(define({ perPrincipal: "" })).toThrow(/rateLimit.perPrincipal must name/);
    expect(define({ perTenant: "has space" })).toThrow(/rateLimit.perTenant must name/);
    expect(define({ perPrincipal: { binding: "X", periodSeconds: 30 } })).toThrow(
      /rateLimit.perPrincipal.periodSeconds must be 10 or 60/,
    );
    expect(define("on")).toThrow(/rateLimit must be an object or false/);
  });
});

/**
 * The real binding, as miniflare serves `[[ratelimits]]` (vitest.config.ts declares
 * TEST_CALLER_LIMIT: 3 per 10 s, TEST_TENANT_LIMIT: 4 per 10 s). Its windows are aligned
 * to the clock, so each test starts at least 3 s before one ends.
 */
describe("with miniflare's Rate Limiting binding", () => {
  async function freshWindow(periodMs: number) {
    const left = periodMs - (Date.now() % periodMs);
    if (left < 3000) await new Promise((r) => setTimeout(r, left + 50));
  }

  it("declares the bindings the tests use", () => {
    expect(typeof (env as unknown as Json).TEST_CALLER_LIMIT).toBe("object");
    expect(
      typeof (env as unknown as Record<string, { limit: unknown }>).TEST_CALLER_LIMIT?.limit,
    ).toBe("function");
  });

  it("refuses the fourth request of a caller with a 429, and serves another caller", async () => {
    const call = served({
      rateLimit: {
        perPrincipal: { binding: "TEST_CALLER_LIMIT", periodSeconds: 10 },
        perTenant: false,
      },
    });
    // Subjects of their own: the binding's counts live for the whole test run.
    const sub = `rl-${crypto.randomUUID()}`;
    const first = { Authorization: `Bearer ${await token(key, { sub, tenant: sub })}` };
    const second = {
      Authorization: `Bearer ${await token(key, { sub: `${sub}-2`, tenant: sub })}`,
    };
    await freshWindow(10_000);
    expect(await statuses(call, first, 4)).toEqual([200, 200, 200, 429]);
    const refused = await send(call, first);
    expect(refused.status).toBe(429);
    expect(refused.headers.get("Retry-After")).toBe("10");
    expect(await statuses(call, second, 1)).toEqual([200]);
  });

  it("refuses a tenant's fifth request, whoever sends it", async () => {
    const call = served({
      rateLimit: {
        perPrincipal: false,
        perTenant: { binding: "TEST_TENANT_LIMIT", periodSeconds: 10 },
      },
    });
    const tenant = `rl-${crypto.randomUUID()}`;
    const as = async (sub: string, t = tenant) => ({
      Authorization: `Bearer ${await token(key, { sub, tenant: t })}`,
    });
    await freshWindow(10_000);
    expect(await statuses(call, await as("a"), 2)).toEqual([200, 200]);
    expect(await statuses(call, await as("b"), 3)).toEqual([200, 200, 429]);
    expect(await statuses(call, await as("a", `${tenant}-other`), 1)).toEqual([200]);
  });
});
