import { Hono, type MiddlewareHandler } from "hono";
import { describe, expect, it } from "vitest";
import type { Principal } from "../../src/agent/access/auth";
import type { RouteEntry, RouteGuards } from "../../src/agent/routes";
import { A2AError } from "../../src/protocol/errors";
import { SpanKind } from "../../src/telemetry";
import { restError, toA2AError } from "../../src/worker/errors";
import type { CallerScope, ContextVerifier } from "../../src/worker/route-scope";
import { mountRoutes, type RouteKit } from "../../src/worker/route-table";
import { traceRequests } from "../../src/worker/tracing";
import { recordSpans } from "../telemetry/support";

/**
 * A route added to a table inherits its guards from its declaration alone: its handler
 * here does no check of its own, yet another tenant, a foreign context id and an
 * undeclared context id never reach it; its span exists only when it declares tracing.
 */

const { exporter } = recordSpans();

const GUARDS: RouteGuards = {
  auth: "caller",
  scoping: "owner",
  contextIds: { in: "path", name: "contextId", use: "read" },
  rateLimit: "none",
  body: "none",
  cors: "none",
  trace: true,
};

/** Alice of tenant acme; her contexts are those starting "alice-". */
const auth: MiddlewareHandler = async (c, next) => {
  const principal: Principal = { subject: "alice", issuer: "", tenant: "acme", scheme: "apiKey" };
  c.set("principal", principal);
  await next();
};
const verify: ContextVerifier = async (_c, scope, value, field, use) => {
  if (value.startsWith(`${scope.owner.length > 0 ? "alice" : "?"}-`)) return value;
  if (use === "filter") return null;
  throw new A2AError("ContextNotFound", `Context ${value} not found (${field})`, {
    contextId: value,
  });
};

function app(routes: RouteEntry<null>[], kit: Partial<RouteKit> = {}) {
  const served: string[] = [];
  const hono = new Hono();
  hono.use("*", traceRequests({}));
  const table = routes.map((r) => ({
    ...r,
    serve: (s: null) => {
      const handler = r.serve(s);
      return (c: Parameters<typeof handler>[0]) => {
        served.push(c.req.path);
        return handler(c);
      };
    },
  }));
  mountRoutes(hono, [table], null, {
    auth,
    rateLimit: () => null,
    maxBodyBytes: 1024,
    tooLarge: () => new A2AError("PayloadTooLarge", "too large"),
    contextIds: verify,
    ...kit,
  });
  hono.onError((error) => restError(toA2AError(error)));
  return { hono, served };
}

const echoScope: RouteEntry<null> = {
  id: "new route",
  methods: ["GET"],
  paths: ["/things/:contextId", "/:tenant/things/:contextId"],
  guards: GUARDS,
  summary: "",
  serve: () => async (c) => {
    const scope = c.get("scope") as CallerScope;
    return Response.json({ tenant: scope.tenant, owner: scope.owner });
  },
};

describe("the route table's scoping and context-id guards", () => {
  it("R1 a new route is scoped and its path's context id verified before its handler runs", async () => {
    const { hono, served } = app([echoScope]);
    const mine = await hono.request("/acme/things/alice-1");
    expect(mine.status).toBe(200);
    expect(await mine.json()).toEqual({ tenant: "acme", owner: expect.stringContaining("alice") });
    const foreignTenant = await hono.request("/evil/things/alice-1");
    expect(foreignTenant.status).toBe(403);
    const badTenant = await hono.request("/a%00b/things/alice-1");
    expect(badTenant.status).toBe(400);
    const foreignContext = await hono.request("/things/bob-1");
    expect(foreignContext.status).toBe(404);
    expect(await foreignContext.text()).toContain("contextId");
    expect(served).toEqual(["/acme/things/alice-1"]);
  });

  it("R1 a handler naming a context id its route does not declare is refused", async () => {
    const undeclared: RouteEntry<null> = {
      ...echoScope,
      guards: { ...GUARDS, contextIds: "none" },
      serve: () => async (c) => {
        await (c.get("scope") as CallerScope).contextId("alice-1", "contextId", "read");
        return new Response("reached");
      },
    };
    const { hono } = app([undeclared]);
    const answer = await hono.request("/things/alice-1");
    expect(answer.status).toBe(500);
    expect(await answer.text()).toContain("declares none");
  });

  it("R1 a route declaring context ids without scoping, or a path without the id, is refused at mount", () => {
    const unscoped = { ...echoScope, guards: { ...GUARDS, scoping: "none" as const } };
    expect(() => app([unscoped])).toThrow(/guards\.scoping/);
    const missing = { ...echoScope, paths: ["/things"] };
    expect(() => app([missing])).toThrow(/:contextId/);
    const vague = { ...echoScope, guards: { ...GUARDS, contextIds: "verified" as never } };
    expect(() => app([vague])).toThrow(/guards\.contextIds/);
  });
});

describe("per-route tracing", () => {
  it("T1 a traced route's server span is named after its route; an untraced route makes none", async () => {
    const untraced: RouteEntry<null> = {
      ...echoScope,
      id: "untraced",
      paths: ["/quiet/:contextId"],
      guards: { ...GUARDS, trace: false },
    };
    const { hono } = app([echoScope, untraced]);
    exporter.reset();
    expect((await hono.request("/acme/things/alice-7")).status).toBe(200);
    expect((await hono.request("/quiet/alice-7")).status).toBe(200);
    // A refusal by a guard is covered by the route's span too.
    expect((await hono.request("/things/bob-7")).status).toBe(404);
    const spans = exporter.getFinishedSpans().filter((s) => s.kind === SpanKind.SERVER);
    expect(spans.map((s) => s.name)).toEqual([
      "GET /:tenant/things/:contextId",
      "GET /things/:contextId",
    ]);
    expect(spans[0]?.attributes["http.route"]).toBe("/:tenant/things/:contextId");
    expect(spans[1]?.attributes["http.response.status_code"]).toBe(404);
  });
});
