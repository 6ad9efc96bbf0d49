import { describe, expect, it, vi } from "vitest";
import * as z from "zod";
import { ERROR_TABLE } from "../../../src/protocol/errors";
import { endpoint } from "../../../src/worker/a2a/endpoints";
import { defineAgent } from "../../../src/worker/app/define-agent";
import { ALICE, authedAgent, call, signingKey } from "../auth-support";

type Json = Record<string, unknown>;

const weather = endpoint({
  name: "weather",
  method: "GET",
  path: "/weather/:city",
  source: "path",
  input: z.object({ city: z.string().min(3, "at least 3 letters") }),
  handler: ({ city }, ctx) => ({ city, caller: ctx.caller.subject }),
});

const search = endpoint({
  name: "search",
  method: "GET",
  path: "/search",
  source: "query",
  input: z.strictObject({
    q: z.string(),
    tag: z.array(z.string()).optional(),
    limit: z.coerce.number().int().max(50).default(10),
  }),
  handler: (input) => input,
});

const order = endpoint({
  name: "order",
  method: "POST",
  path: "/orders",
  source: "body",
  input: z.object({ item: z.string(), count: z.number().int().positive() }),
  handler: (input) => ({ accepted: input }),
});

const page = endpoint({
  name: "page",
  method: "GET",
  path: "/page",
  contentType: "html",
  handler: () => "<h1>hello</h1>",
});

const countdown = endpoint({
  name: "countdown",
  method: "GET",
  path: "/countdown",
  source: "query",
  input: (raw) => {
    const from = Number((raw as { from?: string }).from);
    if (!Number.isInteger(from) || from < 0 || from > 10) throw new Error("from must be 0-10");
    return from;
  },
  mode: "stream",
  async *handler(from) {
    for (let n = from; n >= 0; n--) yield { n };
  },
});

const broken = endpoint({
  name: "broken",
  method: "GET",
  path: "/broken",
  mode: "stream",
  async *handler() {
    yield { ok: 1 };
    throw new Error("the second step failed: secret detail");
  },
});

const quiet = endpoint({
  name: "quiet",
  method: "GET",
  path: "/quiet",
  mode: "stream",
  async *handler() {
    await new Promise((resolve) => setTimeout(resolve, 120));
    yield "late";
  },
});

async function worker() {
  return authedAgent(await signingKey(), {
    endpoints: [weather, search, order, page, countdown, broken, quiet],
    keepAliveMs: 40,
  });
}

describe("declarative endpoints (B15)", () => {
  it("B15: a params endpoint answers JSON with the parsed input and the caller", async () => {
    const w = await worker();
    const response = await call(w, "GET", "/weather/Paris", { headers: ALICE });
    expect(response.status).toBe(200);
    expect(response.headers.get("Content-Type")).toMatch(/application\/json/);
    expect(await response.json()).toEqual({ city: "Paris", caller: "alice" });
  });

  it("B15: endpoints sit behind the agent's authentication", async () => {
    const w = await worker();
    const response = await call(w, "GET", "/weather/Paris");
    expect(response.status).toBe(401);
  });

  it("B15: a bad input is a 400 naming the field, per source", async () => {
    const w = await worker();
    const short = await call(w, "GET", "/weather/Xy", { headers: ALICE });
    expect(short.status).toBe(400);
    const error = ((await short.json()) as Json).error as Json;
    expect(error.status).toBe("INVALID_ARGUMENT");
    expect(error.message).toContain("path.city: at least 3 letters");

    const unknown = await call(w, "GET", "/search?q=a&evil=1", { headers: ALICE });
    expect(unknown.status).toBe(400);
    expect((((await unknown.json()) as Json).error as Json).message).toContain("query.evil");

    const body = await call(w, "POST", "/orders", {
      headers: ALICE,
      body: { item: "tea", count: 0 },
    });
    expect(body.status).toBe(400);
    expect((((await body.json()) as Json).error as Json).message).toContain("body.count");
  });

  it("B15: query values: once a string, repeated an array, coerced by the schema", async () => {
    const w = await worker();
    const response = await call(w, "GET", "/search?q=tea&tag=a&tag=b&limit=5", { headers: ALICE });
    expect(await response.json()).toEqual({ q: "tea", tag: ["a", "b"], limit: 5 });
    const many = Array.from({ length: 300 }, (_, i) => `p${i}=1`).join("&");
    const tooMany = await call(w, "GET", `/search?q=a&${many}`, { headers: ALICE });
    expect(tooMany.status).toBe(400);
    expect(await tooMany.text()).toContain("query parameters");
  });

  it("B15: a body endpoint reads JSON within the body limit, refusing other content", async () => {
    const w = await worker();
    const ok = await call(w, "POST", "/orders", {
      headers: ALICE,
      body: { item: "tea", count: 2 },
    });
    expect(await ok.json()).toEqual({ accepted: { item: "tea", count: 2 } });
    const huge = await call(w, "POST", "/orders", {
      headers: ALICE,
      body: { item: "x".repeat(w.agent.maxBodyBytes), count: 1 },
    });
    expect(huge.status).toBe(413);
    const text = await call(w, "POST", "/orders", {
      headers: { ...ALICE, "Content-Type": "text/plain" },
      body: { item: "tea", count: 2 },
    });
    expect(text.status).toBe(415);
  });

  it("B15: an html endpoint answers text/html", async () => {
    const w = await worker();
    const response = await call(w, "GET", "/page", { headers: ALICE });
    expect(response.headers.get("Content-Type")).toBe("text/html; charset=utf-8");
    expect(await response.text()).toBe("<h1>hello</h1>");
  });

  it("B15: a stream endpoint sends each yielded value as an SSE frame; its parser's error is a 400", async () => {
    const w = await worker();
    const response = await call(w, "GET", "/countdown?from=2", { headers: ALICE });
    expect(response.headers.get("Content-Type")).toMatch(/text\/event-stream/);
    expect(await response.text()).toBe('data: {"n":2}\n\ndata: {"n":1}\n\ndata: {"n":0}\n\n');
    const bad = await call(w, "GET", "/countdown?from=99", { headers: ALICE });
    expect(bad.status).toBe(400);
    expect((((await bad.json()) as Json).error as Json).message).toBe(
      "Invalid query: from must be 0-10",
    );
  });

  it("B15: a failure mid-stream ends it with an error event in the A2A error shape", async () => {
    const w = await worker();
    const logged = vi.spyOn(console, "error").mockImplementation(() => {});
    const text = await (await call(w, "GET", "/broken", { headers: ALICE })).text();
    const calls = [...logged.mock.calls];
    logged.mockRestore();
    const [first, second] = text.split("\n\n");
    expect(first).toBe('data: {"ok":1}');
    expect(second?.startsWith("event: error\ndata: ")).toBe(true);
    const error = JSON.parse((second ?? "").slice("event: error\ndata: ".length)).error as Json;
    expect(error.status).toBe(ERROR_TABLE.Internal.status);
    expect(error.message).toMatch(/^Internal error \(reference ref_\w+\)$/);
    // The operator's log has the detail, under the reference the client got.
    const reference = /ref_\w+/.exec(String(error.message))?.[0];
    expect(calls.map(([line]) => JSON.parse(String(line)))).toContainEqual(
      expect.objectContaining({
        level: "error",
        message: `edgelink: unexpected error ${reference}`,
        reference,
        error: expect.objectContaining({ message: "the second step failed: secret detail" }),
      }),
    );
  });

  it("B15: a quiet stream gets keep-alive comments; a client that leaves ends the handler", async () => {
    const w = await worker();
    const text = await (await call(w, "GET", "/quiet", { headers: ALICE })).text();
    expect(text).toContain(": keep-alive\n\n");
    expect(text.endsWith('data: "late"\n\n')).toBe(true);

    let finished = false;
    const endless = endpoint({
      name: "endless",
      method: "GET",
      path: "/endless",
      mode: "stream",
      async *handler() {
        try {
          for (let i = 0; ; i++) yield i;
        } finally {
          finished = true;
        }
      },
    });
    const e = authedAgent(await signingKey(), { endpoints: [endless] });
    const response = await call(e, "GET", "/endless", { headers: ALICE });
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    await reader.read();
    await reader.cancel();
    expect(finished).toBe(true);
  });

  it("B15: A2A routes still win, and the definition refuses what would shadow them", async () => {
    const w = await worker();
    const card = await call(w, "GET", "/.well-known/agent-card.json");
    expect(((await card.json()) as Json).name).toBe("Guarded");
    const declare = (spec: Json) => () =>
      endpoint({ name: "e", method: "GET", handler: () => 1, ...spec } as never);
    expect(declare({ path: "/tasks/mine" })).toThrow(/shadow an A2A route/);
    expect(declare({ path: "/acme/message:send" })).toThrow(/shadow an A2A route/);
    expect(declare({ path: "/" })).toThrow(/shadow an A2A route/);
    expect(declare({ path: "weather" })).toThrow(/path must start with/);
    expect(declare({ path: "/x", method: "TRACE" })).toThrow(/method must be one of/);
    expect(declare({ path: "/x", source: "body" })).toThrow(/has no body/);
    expect(declare({ path: "/x", source: "path" })).toThrow(/needs :params/);
    expect(declare({ path: "/x", input: 42 })).toThrow(/zod schema or a function/);
    expect(declare({ path: "/x", name: "a b" })).toThrow(/name must be/);
    const agent = (endpoints: never[]) => () =>
      defineAgent({ card: { name: "x", description: "x" }, endpoints });
    const a = endpoint({ name: "a", method: "GET", path: "/a", handler: () => 1 });
    const b = endpoint({ name: "b", method: "GET", path: "/a", handler: () => 1 });
    expect(agent([a, { ...a, path: "/b" }] as never[])).toThrow(/name a is declared twice/);
    expect(agent([a, b] as never[])).toThrow(/route GET \/a is declared twice/);
    expect(agent([{ name: "c", method: "GET", path: "/c", handler: () => 1 }] as never[])).toThrow(
      /declare it with endpoint\(\)/,
    );
  });

  it("B15: a handler's own failure is a 500 that names only a reference", async () => {
    const failing = endpoint({
      name: "failing",
      method: "GET",
      path: "/failing",
      handler: () => {
        throw new Error("database password is hunter2");
      },
    });
    const w = authedAgent(await signingKey(), { endpoints: [failing] });
    const logged = vi.spyOn(console, "error").mockImplementation(() => {});
    const response = await call(w, "GET", "/failing", { headers: ALICE });
    const calls = [...logged.mock.calls];
    logged.mockRestore();
    expect(response.status).toBe(500);
    const text = await response.text();
    expect(text).not.toContain("hunter2");
    const reference = /ref_\w+/.exec(text)?.[0];
    expect(calls.map(([line]) => JSON.parse(String(line)))).toContainEqual(
      expect.objectContaining({
        message: `edgelink: unexpected error ${reference}`,
        reference,
        error: expect.objectContaining({ message: "database password is hunter2" }),
      }),
    );
  });
});
