import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { Hono } from "hono";
import { beforeAll, describe, expect, it } from "vitest";
import * as z from "zod";
import routeGuardsDoc from "../../docs/route-guards.md?raw";
import type { Agent } from "../../src/agent/definition";
import type { RouteEntry } from "../../src/agent/routes";
import { memory } from "../../src/memory/index";
import { registryFallback } from "../../src/registry/registry-app";
import { registryRoutes } from "../../src/registry/registry-routes";
import { endpoint } from "../../src/worker/a2a/endpoints";
import { AGENT_ROUTES, agentRoutes } from "../../src/worker/app/agent-routes";
import { checkRoute, mountRoutes, type RouteKit } from "../../src/worker/route-table";
import { userMessage } from "../support/helpers";
import { ALICE, API_KEYS, authedAgent, BOB, EVE, signingKey } from "./auth-support";

/**
 * Walks the agent's route table (every route its app mounts: cards, JWKS, inspector,
 * JSON-RPC, HTTP+JSON, chat, declared endpoints) and throws the same hostile requests at
 * each, chosen by what the route declares: a wrong media type, an oversize body, no or
 * wrong credentials, another tenant, another owner's ids, a forged context id, a burst past
 * the rate limit. Each must get its 4xx and name no Durable Object (the namespaces are
 * watched), and the caller's data must read the same afterwards. The memory routes are
 * walked in the memory project (test/memory/route-table.test.ts), the registry's in the
 * registry project.
 */

type Json = Record<string, unknown>;
const MAX_BODY = 4096;

/** A stand-in Rate Limiting binding: `allowed` requests per key, then refusals. */
function limiter(allowed: number) {
  const counts = new Map<string, number>();
  return {
    limit: async ({ key }: { key: string }) => {
      const n = (counts.get(key) ?? 0) + 1;
      counts.set(key, n);
      return { success: n <= allowed };
    },
  };
}

/** The object namespaces, recording every object a request names. */
function watched(touched: string[]) {
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
  return { EDGELINK_CONTEXT: watch("EDGELINK_CONTEXT"), EDGELINK_INDEX: watch("EDGELINK_INDEX") };
}

const worker = authedAgent(await signingKey(), {
  inspector: true,
  maxBodyBytes: MAX_BODY,
  endpoints: [
    endpoint({
      name: "echo",
      method: "POST",
      path: "/echo",
      source: "body",
      input: z.object({ text: z.string() }),
      handler: ({ text }) => ({ text }),
    }),
    endpoint({
      name: "lookup",
      method: "GET",
      path: "/lookup/:key",
      source: "path",
      input: z.object({ key: z.string() }),
      handler: ({ key }) => ({ key }),
    }),
  ],
});
const TABLE = agentRoutes(worker.agent as Agent<unknown>).flat();

const touched: string[] = [];
const open = { ...env, AGENT_API_KEYS: API_KEYS, EDGELINK_PRINCIPAL_RATE_LIMIT: limiter(1e9) };
const guarded = { ...open, ...watched(touched) };
const burst = { ...guarded, EDGELINK_PRINCIPAL_RATE_LIMIT: limiter(0) };

async function call(
  method: string,
  path: string,
  init: { headers?: Record<string, string>; body?: string; env?: object } = {},
): Promise<{ status: number; body: Json; text: string }> {
  const ctx = createExecutionContext();
  const request = new Request(`http://agent.test${path}`, {
    method,
    headers: { "A2A-Version": "1.0", ...init.headers },
    body: init.body,
  });
  const response = await worker.fetch(request, (init.env ?? guarded) as never, ctx);
  const text = await response.text();
  await waitOnExecutionContext(ctx);
  let body: Json = {};
  try {
    body = JSON.parse(text) as Json;
  } catch {
    // An SSE stream or a page: only the status is checked then.
  }
  return { status: response.status, body, text };
}

const json = (headers: Record<string, string>) => ({
  ...headers,
  "Content-Type": "application/json",
});

/** What the caller's data reads as: its task and its conversation's history. */
let alice: { taskId: string; contextId: string };
async function aliceState(): Promise<string> {
  const task = await call("GET", `/tasks/${alice.taskId}`, { headers: ALICE, env: open });
  const history = await call("GET", `/contexts/${alice.contextId}/history`, {
    headers: ALICE,
    env: open,
  });
  expect(task.status).toBe(200);
  expect(history.status).toBe(200);
  return JSON.stringify([task.body, history.body]);
}

/** A route's path made concrete: ids are Alice's, the tenant hers unless given. */
function concrete(pattern: string, tenant = "acme"): string {
  return pattern.replace(/\/:(\w+)(\{([^}]*)\})?/g, (_, name: string, __, regex?: string) => {
    const verb = regex?.match(/(:\w+)$/)?.[1] ?? "";
    switch (name) {
      case "tenant":
        return `/${tenant}`;
      case "id":
      case "idVerb":
      case "taskId":
        return `/${alice.taskId}${verb}`;
      case "contextId":
        return `/${alice.contextId}${verb}`;
      case "configId":
        return "/cfg-1";
      default:
        return "/x";
    }
  });
}

const ID_PARAMS = /:(id|idVerb|taskId|contextId|configId)\b/;
/** The method a body is sent with (a route taking GET and POST is sent POST). */
const bodyMethod = (e: RouteEntry<never>) => e.methods.find((m) => m !== "GET") ?? "POST";

/** The error text of a refusal in either binding's shape. */
const errorText = (body: Json) => JSON.stringify(body.error ?? body);

/** Runs a hostile request: its status, and that it named no object. */
async function hostile(
  what: string,
  method: string,
  path: string,
  init: { headers?: Record<string, string>; body?: string; env?: object },
) {
  touched.length = 0;
  const answer = await call(method, path, init);
  expect(answer.status, `${what}: ${method} ${path} ${answer.text.slice(0, 300)}`).toBeLessThan(
    500,
  );
  expect(touched, `${what}: ${method} ${path} named an object`).toEqual([]);
  return answer;
}

/**
 * Each route whose requests may name a context id: a request of Bob's naming Alice's
 * conversation, and one naming a context this agent never issued. A route declaring
 * context ids without a case here fails the walk.
 */
const FORGED: Record<string, (contextId: string) => { method: string; path: string; body?: Json }> =
  {
    jsonrpc: (contextId) => ({
      method: "POST",
      path: "/",
      body: {
        jsonrpc: "2.0",
        id: 1,
        method: "SendMessage",
        params: { message: userMessage("forged", { contextId }) },
      },
    }),
    "chat start": (contextId) => ({
      method: "POST",
      path: "/chat",
      body: { message: "forged", sessionId: contextId },
    }),
    "rest SendMessage": (contextId) => ({
      method: "POST",
      path: "/message:send",
      body: { message: userMessage("forged", { contextId }) },
    }),
    "rest SendStreamingMessage": (contextId) => ({
      method: "POST",
      path: "/message:stream",
      body: { message: userMessage("forged", { contextId }) },
    }),
    "rest ListTasks": (contextId) => ({
      method: "GET",
      path: `/tasks?contextId=${encodeURIComponent(contextId)}`,
    }),
    "rest GetContextHistory": (contextId) => ({
      method: "GET",
      path: `/contexts/${encodeURIComponent(contextId)}/history`,
    }),
    "rest CompactContextHistory": (contextId) => ({
      method: "POST",
      path: `/contexts/${encodeURIComponent(contextId)}/history:compact`,
      body: {},
    }),
  };

/** A body that would be served, for routes whose `{}` is refused before the ids are looked at. */
const VALID_BODY: Record<string, Json> = {
  "rest CreateTaskPushNotificationConfig": { url: "https://hooks.example.com/a2a" },
};

/** The field a refusal of a forged context id names, by route. */
const FORGED_FIELD: Record<string, string> = { "chat start": "sessionId" };

beforeAll(async () => {
  const sent = await call("POST", "/", {
    headers: json(ALICE),
    env: open,
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "SendMessage",
      params: { message: userMessage("hello") },
    }),
  });
  const task = (sent.body.result as { task: Json }).task;
  alice = { taskId: String(task.id), contextId: String(task.contextId) };
  // The start-up check probes the objects once per env: done before anything is watched.
  for (const each of [guarded, burst])
    await call("GET", "/.well-known/agent-card.json", { env: each });
});

describe("the route table", () => {
  it("declares every guard of every route the agent's app mounts", () => {
    const ids = TABLE.map((e) => e.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const entry of TABLE) expect(() => checkRoute(entry as never)).not.toThrow();
    // The routes this test walks: every kind the app serves.
    expect(ids).toEqual(
      expect.arrayContaining([
        "agent card",
        "jwks",
        "inspector page",
        "inspector task steps",
        "jsonrpc",
        "chat start",
        "chat resume",
        "rest SendMessage",
        "rest GetTask",
        "rest CreateTaskPushNotificationConfig",
        "endpoint echo",
        "endpoint lookup",
      ]),
    );
    // The agent's routes, its two endpoints, and the fallback.
    expect(TABLE.length).toBe(AGENT_ROUTES.length + 3);
  });

  it("refuses, at mount, a route whose declaration misses a guard", () => {
    const { rateLimit: _, ...partial } = (AGENT_ROUTES[0] as RouteEntry<never>).guards;
    const undeclared = {
      ...(AGENT_ROUTES.at(-1) as RouteEntry<never>),
      id: "undeclared",
      guards: partial,
    };
    expect(() => checkRoute(undeclared as never)).toThrow(/undeclared.*guards\.rateLimit/);
    const kit: RouteKit = {
      auth: async (_c, next) => next(),
      rateLimit: () => null,
      maxBodyBytes: 1,
      tooLarge: () => new Error("x") as never,
      contextIds: null,
    };
    expect(() => mountRoutes(new Hono(), [[undeclared as never]], {}, kit)).toThrow(
      /guards\.rateLimit must be declared/,
    );
    // And the type check refuses it before it runs.
    const typed: RouteEntry<unknown> = {
      id: "typed",
      methods: ["GET"],
      paths: ["/typed"],
      // @ts-expect-error: a route without every guard declared is not a route entry.
      guards: partial,
      summary: "",
      serve: () => () => new Response(),
    };
    expect(() => checkRoute(typed as never)).toThrow(/rateLimit/);
    // A public route after an authenticated one would sit behind authentication.
    const publicLast = [[...AGENT_ROUTES.slice(-1), AGENT_ROUTES[0]]] as never;
    expect(() => mountRoutes(new Hono(), publicLast, {}, kit)).toThrow(/public routes must come/);
  });

  it("every route that takes POST reads its body as JSON, so no cross-site form reaches it (the fallback writes nothing)", () => {
    const formable = TABLE.filter(
      (e) => e.id !== "fallback" && e.methods.includes("POST") && e.guards.body === "none",
    );
    expect(formable.map((e) => e.id)).toEqual([]);
  });

  it("every route answers the hostile set with its 4xx, touching nothing", async () => {
    const before = await aliceState();
    const walked: string[] = [];
    for (const entry of TABLE) {
      const g = entry.guards;
      const first = entry.paths[0] as string;
      const path = concrete(first);
      const method = g.body === "none" ? (entry.methods[0] as string) : bodyMethod(entry);
      walked.push(entry.id);

      if (g.auth === "none") {
        // Public: answered without a credential (the inspector is on here).
        const answer = await call(method, path);
        expect(answer.status, `${entry.id} public`).toBe(200);
        continue;
      }

      // Credentials: none, a wrong API key, a malformed bearer token.
      for (const [what, headers] of [
        ["no credentials", {}],
        ["a wrong API key", { "X-API-Key": "wrong-key-0123456789" }],
        ["a bad bearer token", { Authorization: "Bearer not.a.token" }],
      ] as const) {
        const answer = await hostile(`${entry.id} ${what}`, method, path, {
          headers: json(headers),
          body: g.body === "none" ? undefined : "{}",
        });
        expect(answer.status, `${entry.id} ${what}`).toBe(401);
      }

      if (g.body !== "none") {
        const wrongType = await hostile(`${entry.id} text/plain`, method, path, {
          headers: { ...ALICE, "Content-Type": "text/plain" },
          body: "{}",
        });
        expect(wrongType.status, `${entry.id} text/plain`).toBe(415);
        const form = await hostile(`${entry.id} form`, method, path, {
          headers: { ...ALICE, "Content-Type": "application/x-www-form-urlencoded" },
          body: "claim=x",
        });
        expect(form.status, `${entry.id} form`).toBe(415);
        // A cross-site form with no fields sends no body, but its media type all the same.
        const emptyForm = await hostile(`${entry.id} empty form`, method, path, {
          headers: { ...ALICE, "Content-Type": "application/x-www-form-urlencoded" },
        });
        expect(emptyForm.status, `${entry.id} empty form`).toBe(415);
        const oversize = await hostile(`${entry.id} oversize`, method, path, {
          headers: json(ALICE),
          body: JSON.stringify({ pad: "x".repeat(MAX_BODY) }),
        });
        expect(oversize.status, `${entry.id} oversize`).toBe(413);
      }

      if (g.rateLimit !== "none") {
        for (let i = 0; i < 3; i++) {
          const limited = await hostile(`${entry.id} burst`, method, path, {
            headers: json(ALICE),
            body: g.body === "none" ? undefined : "{}",
            env: burst,
          });
          expect(limited.status, `${entry.id} burst`).toBe(429);
        }
      }

      // Another tenant, named in the path.
      const tenanted = entry.paths.find((p) => p.startsWith("/:tenant"));
      if (tenanted && g.scoping !== "none") {
        const answer = await hostile(
          `${entry.id} another tenant`,
          method,
          concrete(tenanted, "evil"),
          {
            headers: json(ALICE),
            body: g.body === "none" ? undefined : "{}",
          },
        );
        expect(answer.status, `${entry.id} another tenant`).toBe(403);
      }

      // Another owner's ids, and another tenant's caller with them: not found.
      if (ID_PARAMS.test(first) && g.scoping === "owner") {
        for (const [who, headers] of [
          ["another owner", BOB],
          ["another tenant", EVE],
        ] as const) {
          const answer = await hostile(`${entry.id} ${who}`, method, path, {
            headers: json(headers),
            body: g.body === "none" ? undefined : JSON.stringify(VALID_BODY[entry.id] ?? {}),
          });
          expect(answer.status, `${entry.id} ${who}: ${answer.text}`).toBe(404);
          expect(answer.text).not.toContain("hello");
        }
      }

      if (g.contextIds !== "none") {
        const forge = FORGED[entry.id];
        expect(forge, `${entry.id} declares context ids: add its forged case`).toBeDefined();
        if (!forge) continue;
        const field = FORGED_FIELD[entry.id] ?? "contextId";
        for (const [who, headers, contextId] of [
          ["another caller's context", BOB, alice.contextId],
          ["a context never issued", ALICE, "forged-context-id"],
        ] as const) {
          const req = forge(contextId);
          const answer = await hostile(`${entry.id} ${who}`, req.method, req.path, {
            headers: json(headers),
            body: req.body === undefined ? undefined : JSON.stringify(req.body),
          });
          if (g.contextIds.use === "filter") {
            // A filter naming it matches nothing: an empty page, never another's tasks.
            expect(answer.status, `${entry.id} ${who}`).toBe(200);
            expect(answer.body.tasks, `${entry.id} ${who}`).toEqual([]);
          } else if (entry.id === "jsonrpc") {
            expect(answer.status).toBe(200);
            expect((answer.body.error as Json).code, `${entry.id} ${who}`).toBe(-32602);
            expect(errorText(answer.body)).toContain(`params.message.${field}`);
          } else {
            expect(answer.status, `${entry.id} ${who}: ${answer.text}`).toBeGreaterThanOrEqual(400);
            expect(answer.status).toBeLessThan(500);
            expect(errorText(answer.body)).toContain(field);
          }
        }
      }
    }
    expect(walked).toEqual(TABLE.map((e) => e.id));
    expect(await aliceState()).toBe(before);
  });

  it("over JSON-RPC, another owner's and another tenant's task ids are not found", async () => {
    for (const headers of [BOB, EVE]) {
      const answer = await hostile("jsonrpc GetTask", "POST", "/", {
        headers: json(headers),
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 2,
          method: "GetTask",
          params: { id: alice.taskId },
        }),
      });
      expect((answer.body.error as Json).code).toBe(-32001);
      expect(answer.text).not.toContain("hello");
    }
  });
});

/** The route guards page's table, as the route tables declare it. */
function guardsTable(): string {
  const withMemory = authedAgentWithMemory();
  const endpoints = TABLE.filter((e) => e.id.startsWith("endpoint "));
  const fallback = TABLE.find((e) => e.id === "fallback") as RouteEntry<never>;
  const rows: [string, RouteEntry<never>][] = [
    ...AGENT_ROUTES.map((e) => ["agent", e] as [string, RouteEntry<never>]),
    ...agentRoutes(withMemory)
      .flat()
      .filter((e) => e.id.startsWith("memory "))
      .map((e) => ["agent, `memory({ api })`", e] as [string, RouteEntry<never>]),
    ...endpoints.map(
      (e) =>
        [
          "agent, `endpoint()`",
          {
            ...e,
            id: `endpoint (source ${e.guards.body === "json" ? '"body"' : "other"})`,
            methods: e.guards.body === "json" ? ["POST"] : ["GET"],
            paths: ["its path"],
          },
        ] as [string, RouteEntry<never>],
    ),
    ["agent", fallback],
    ...[...registryRoutes({}, {} as never), registryFallback()].map(
      (e) => ["`defineRegistry`", e as RouteEntry<never>] as [string, RouteEntry<never>],
    ),
  ];
  const cell = (text: string) => text.replace(/\|/g, "\\|");
  const lines = [
    "| app | route | methods and paths | auth | scoping | context ids | rate limit | body | CORS | traced |",
    "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ...rows.map(([app, e]) => {
      const g = e.guards;
      const paths = e.paths.map((p) => `\`${cell(p)}\``).join(" ");
      const ids =
        g.contextIds === "none"
          ? "none"
          : `${g.contextIds.use}: ${g.contextIds.in} \`${g.contextIds.name}\``;
      return `| ${app} | ${e.id} | ${e.methods.join(", ")} ${paths} | ${g.auth} | ${g.scoping} | ${ids} | ${g.rateLimit} | ${g.body} | ${g.cors} | ${g.trace ? "yes" : "no"} |`;
    }),
  ];
  return lines.join("\n");
}

function authedAgentWithMemory(): Agent<unknown> {
  const base = worker.agent as Agent<unknown>;
  return { ...base, memory: memory({ api: true }) } as Agent<unknown>;
}

describe("the route guards page", () => {
  it("lists every route's guards as the table declares them", () => {
    const start = routeGuardsDoc.indexOf("<!-- route-guards -->");
    const end = routeGuardsDoc.indexOf("<!-- /route-guards -->");
    expect(start, "docs/route-guards.md has its table markers").toBeGreaterThan(0);
    const documented = routeGuardsDoc.slice(start + "<!-- route-guards -->".length, end).trim();
    // Compared cell by cell, whatever the table's padding (Biome or an editor may align it).
    const normalize = (table: string) =>
      table
        .split("\n")
        .map((line) =>
          line
            .split("|")
            .map((c) => c.trim().replace(/^-+$/, "-"))
            .join("|"),
        )
        .join("\n");
    const expected = guardsTable();
    if (normalize(documented) !== normalize(expected)) console.log(expected);
    expect(normalize(documented)).toBe(normalize(expected));
  });
});
