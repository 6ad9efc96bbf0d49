import { env } from "cloudflare:test";
import { Hono } from "hono";
import { cors } from "hono/cors";
import { describe, expect, it } from "vitest";
import demo from "../../../examples/demo-agent";
import { parseSse, readEvents, userMessage } from "../../support/helpers";
import { ALICE, API_KEYS, authedAgent, signingKey } from "../auth-support";

type Json = Record<string, unknown>;
const ORIGIN = "http://agent.test";

/**
 * The demo agent's own Hono app (its Durable Objects are the ones wrangler.toml binds)
 * mounted in a user's app the way the README says: middleware first, then
 * `app.route("/agent", edgelink.app)`, then the user's own routes.
 */
function userApp() {
  const app = new Hono<{ Bindings: typeof env }>();
  const seen: string[] = [];
  app.use(async (c, next) => {
    seen.push(`${c.req.method} ${c.req.path}`);
    if (c.req.header("X-Block") === "yes") return c.json({ blocked: true }, 401);
    await next();
  });
  app.use(cors({ origin: "https://app.example.com" }));
  app.route("/agent", demo.app);
  app.get("/health", (c) => c.text("ok"));
  app.get("/agent/about", (c) => c.text("mine"));
  const call = (path: string, init: RequestInit = {}) => app.request(`${ORIGIN}${path}`, init, env);
  return { app, seen, call };
}

const post = (body: unknown, headers: Record<string, string> = {}): RequestInit => ({
  method: "POST",
  headers: { "Content-Type": "application/json", "A2A-Version": "1.0", ...headers },
  body: JSON.stringify(body),
});

describe("composing with a user's Hono app (issue 13)", () => {
  it("A2: under /agent the card advertises /agent URLs, and they answer", async () => {
    const { call } = userApp();
    const card = (await (await call("/agent/.well-known/agent-card.json")).json()) as Json;
    expect(card.supportedInterfaces).toEqual([
      { url: `${ORIGIN}/agent`, protocolBinding: "JSONRPC", protocolVersion: "1.0" },
      { url: `${ORIGIN}/agent`, protocolBinding: "HTTP+JSON", protocolVersion: "1.0" },
    ]);
    const legacy = (await (await call("/agent/.well-known/agent.json")).json()) as Json;
    expect(legacy.url).toBe(`${ORIGIN}/agent`);

    const rpc = await call(
      "/agent",
      post({
        jsonrpc: "2.0",
        id: 7,
        method: "SendMessage",
        params: { message: userMessage("streams are fun") },
      }),
    );
    const result = ((await rpc.json()) as Json).result as Json;
    expect(((result.task as Json).status as Json).state).toBe("TASK_STATE_COMPLETED");

    const sent = await call("/agent/message:send", post({ message: userMessage("rest too") }));
    const task = ((await sent.json()) as Json).task as Json;
    const got = await call(`/agent/tasks/${task.id}`, { headers: { "A2A-Version": "1.0" } });
    expect(((await got.json()) as Json).id).toBe(task.id);
  });

  it("user middleware runs before Edgelink's routes, and can answer instead of them", async () => {
    const { call, seen } = userApp();
    const blocked = await call(
      "/agent/message:send",
      post({ message: userMessage("x") }, { "X-Block": "yes" }),
    );
    expect(blocked.status).toBe(401);
    expect(await blocked.json()).toEqual({ blocked: true });
    expect(seen).toEqual(["POST /agent/message:send"]);

    const preflight = await call("/agent/message:send", {
      method: "OPTIONS",
      headers: { Origin: "https://app.example.com", "Access-Control-Request-Method": "POST" },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("Access-Control-Allow-Origin")).toBe("https://app.example.com");
    const sent = await call(
      "/agent/message:send",
      post({ message: userMessage("with cors") }, { Origin: "https://app.example.com" }),
    );
    expect(sent.status).toBe(200);
    expect(sent.headers.get("Access-Control-Allow-Origin")).toBe("https://app.example.com");
  });

  it("the user's routes beside it, registered after it, are not shadowed", async () => {
    const { call } = userApp();
    expect(await (await call("/health")).text()).toBe("ok");
    expect(await (await call("/agent/about")).text()).toBe("mine");
  });

  it("A2: a user's middleware changing one answer's headers changes no other answer's (each response owns its headers)", async () => {
    const { call } = userApp();
    // A Response copies the Headers it is built with: the answers' shared ones stay as made.
    const shared = new Headers({ "Content-Type": "application/json" });
    new Response("{}", { headers: shared }).headers.set("X-Mine", "1");
    expect([...shared.keys()]).toEqual(["content-type"]);
    const fromApp = { Origin: "https://app.example.com" };
    const sent = await call("/agent/message:send", {
      ...post({ message: userMessage("headers") }, fromApp),
    });
    const task = ((await sent.json()) as Json).task as Json;
    const rpcGet = (headers: Record<string, string>) =>
      call(
        "/agent",
        post({ jsonrpc: "2.0", id: 1, method: "GetTask", params: { id: task.id } }, headers),
      );
    const restGet = (headers: Record<string, string>) =>
      call(`/agent/tasks/${task.id}`, { headers: { "A2A-Version": "1.0", ...headers } });
    const rpcSent = await call(
      "/agent",
      post(
        { jsonrpc: "2.0", id: 2, method: "SendMessage", params: { message: userMessage("hi") } },
        fromApp,
      ),
    );
    // The user's CORS layer adds its header to an answer for its origin, after Edgelink's.
    expect(sent.headers.get("Access-Control-Allow-Origin")).toBe("https://app.example.com");
    expect(rpcSent.headers.get("Access-Control-Allow-Origin")).toBe("https://app.example.com");
    for (const answer of [await rpcGet({}), await restGet({})]) {
      expect(answer.status).not.toBe(500);
      expect(answer.headers.get("Content-Type")).toBe("application/json");
      expect(answer.headers.get("Access-Control-Allow-Origin")).toBeNull();
    }
    expect((await restGet(fromApp)).headers.get("Access-Control-Allow-Origin")).toBe(
      "https://app.example.com",
    );
  });

  it("tenants work under the base path: /agent/{tenant}/... is isolated", async () => {
    const { call } = userApp();
    const sent = await call("/agent/acme/message:send", post({ message: userMessage("tenant") }));
    const task = ((await sent.json()) as Json).task as Json;
    const v1 = { headers: { "A2A-Version": "1.0" } };
    expect((await call(`/agent/acme/tasks/${task.id}`, v1)).status).toBe(200);
    expect((await call(`/agent/globex/tasks/${task.id}`, v1)).status).toBe(404);
    expect((await call(`/agent/tasks/${task.id}`, v1)).status).toBe(404);
    // The tenant index lags by up to limits.indexFlushMs: list until the task shows.
    const listed = async () =>
      ((await (await call("/agent/acme/tasks?pageSize=100", v1)).json()) as Json).tasks as Json[];
    const deadline = Date.now() + 5000;
    let tasks = await listed();
    while (!tasks.some((t) => t.id === task.id) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
      tasks = await listed();
    }
    expect(tasks.map((t) => t.id)).toContain(task.id);
  });

  it("B9 `:subscribe` and `:cancel` after a task id route under the base path", async () => {
    const { call } = userApp();
    const sent = await call(
      "/agent/message:send",
      post({ message: userMessage("count 30"), configuration: { returnImmediately: true } }),
    );
    const task = ((await sent.json()) as Json).task as Json;
    const stream = await call(`/agent/tasks/${task.id}:subscribe`, {
      headers: { "A2A-Version": "1.0" },
    });
    const { events, reader } = await readEvents(stream, 1);
    expect(events[0]?.data.task).toMatchObject({ id: task.id });
    const canceled = await call(`/agent/tasks/${task.id}:cancel`, post({}));
    expect(((await canceled.json()) as Json).status).toMatchObject({
      state: "TASK_STATE_CANCELED",
    });
    let rest = "";
    const decoder = new TextDecoder();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      rest += decoder.decode(value, { stream: true });
    }
    expect(parseSse(rest).at(-1)?.data.statusUpdate).toMatchObject({
      status: { state: "TASK_STATE_CANCELED" },
    });

    const wrong = await call(`/agent/tasks/${task.id}:cancel`, { method: "GET" });
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get("Allow")).toBe("POST");
  });

  it("a body over the limit is 413 under the base path too, in each binding's shape", async () => {
    const { call } = userApp();
    const big = "x".repeat(1024 * 1024 + 10);
    const rest = await call("/agent/message:send", { method: "POST", body: big });
    expect(rest.status).toBe(413);
    expect(((await rest.json()) as Json).error).toMatchObject({ code: 413 });
    const rpc = await call("/agent", { method: "POST", body: big });
    expect(rpc.status).toBe(413);
    expect(((await rpc.json()) as Json).error).toMatchObject({ code: -32600 });
  });
  it("under /agent, an auth refusal of JSON-RPC is a JSON-RPC error, of HTTP+JSON a google.rpc.Status", async () => {
    const guarded = authedAgent(await signingKey());
    const app = new Hono<{ Bindings: typeof env }>();
    app.route("/agent", guarded.app);
    const keys = { ...env, AGENT_API_KEYS: API_KEYS };
    const call = (path: string, init: RequestInit) => app.request(`${ORIGIN}${path}`, init, keys);
    const rpc = await call(
      "/agent",
      post({ jsonrpc: "2.0", id: 3, method: "ListTasks", params: {} }),
    );
    expect(rpc.status).toBe(401);
    expect(await rpc.json()).toMatchObject({ jsonrpc: "2.0", error: { code: -32010 } });
    const rest = await call("/agent/tasks", { headers: { "A2A-Version": "1.0" } });
    expect(rest.status).toBe(401);
    expect(await rest.json()).toMatchObject({ error: { code: 401, status: "UNAUTHENTICATED" } });
    const allowed = await call(
      "/agent",
      post({ jsonrpc: "2.0", id: 4, method: "ListTasks", params: {} }, ALICE),
    );
    // Alice's tasks from other files may be listed (shared storage): only the shape is ours.
    expect(((await allowed.json()) as Json).result).toMatchObject({ tasks: expect.any(Array) });
  });
});
