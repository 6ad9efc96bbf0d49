import type { Context } from "hono";
import { etag } from "hono/etag";
import type { Agent } from "../../agent/definition";
import { SERVE_ENDPOINT } from "../../agent/endpoints";
import { signingKeys } from "../../conversation/push/push-keys";
import { A2AError } from "../../protocol/errors";
import { parseTaskId } from "../../protocol/wire/requests";
import { JWKS_PATH } from "../../push/headers";
import { publicJwks } from "../../push/signing";
import { serveCard, servedFeatures, serveSignedCard, signsCardAt } from "../a2a/card";
import { cardSigningKeys, mergeJwks } from "../a2a/card-signing";
import { chatHandlers } from "../a2a/chat";
import { handleJsonRpc } from "../a2a/jsonrpc";
import { OPERATIONS, type OperationName } from "../a2a/operation-table";
import { Operations } from "../a2a/operations";
import { checkPathEncoding, handleRest } from "../a2a/rest";
import type { AuthVariables } from "../auth";
import { originOf } from "../context-ids";
import { CARD_PATHS } from "../cors";
import { restError } from "../errors";
import {
  inspectorAsset,
  inspectorGate,
  serveTaskSteps,
  TASK_STEPS_PATH,
} from "../inspector/inspector";
import type { RateLimiter } from "../rate-limit";
import type { ScopeVariables } from "../route-scope";
import {
  type ContextIdGuard,
  fallbackRoute,
  type RouteEntry,
  type RouteGuards,
} from "../route-table";
import { requestTrace } from "../tracing";

/** What an agent's routes are made from when its app is built. */
export interface AgentServices {
  readonly agent: Agent<unknown>;
  readonly limits: RateLimiter<object>;
  /** Where the agent is served (its origin plus the app's mount path). */
  readonly baseUrl: (c: Context, url?: URL) => string;
  /** The app's mounted routes, for the fallback's `Allow`. */
  readonly routes: () => readonly { method: string; path: string }[];
}

type C = Context<{ Bindings: object; Variables: AuthVariables & ScopeVariables }>;
type AgentRoute = RouteEntry<AgentServices>;

/** Public, holding no stored data. */
const PUBLIC: RouteGuards = {
  auth: "none",
  scoping: "none",
  contextIds: "none",
  rateLimit: "none",
  body: "none",
  cors: "public",
  trace: true,
};
/** An authenticated caller's own data, counted against the rate limits. */
export const CALLER_ROUTE: RouteGuards = {
  auth: "caller",
  scoping: "owner",
  contextIds: "none",
  rateLimit: "path",
  body: "none",
  cors: "agent",
  trace: true,
};

const cardCache = etag({ retainedHeaders: ["cache-control", "etag", "last-modified", "vary"] });

/** Where each operation's HTTP+JSON requests name a context id (the fields its errors name). */
const CONTEXT_IDS: Partial<Record<OperationName, ContextIdGuard>> = {
  send: { in: "body", name: "message.contextId", field: "params.message.contextId", use: "write" },
  stream: {
    in: "body",
    name: "message.contextId",
    field: "params.message.contextId",
    use: "write",
  },
  list: { in: "query", name: "contextId", field: "params.contextId", use: "filter" },
  history: { in: "path", name: "contextId", use: "read" },
  compact: { in: "path", name: "contextId", use: "read" },
};

/** The HTTP+JSON binding's routes (§11.3), each also under `/{tenant}`. */
const REST: readonly AgentRoute[] = (Object.keys(OPERATIONS) as OperationName[]).flatMap((name) =>
  OPERATIONS[name].rest.map(
    (route): AgentRoute => ({
      id: `rest ${OPERATIONS[name].rpc["1.0"]}`,
      methods: route.methods,
      // Unprefixed first (mounted in rounds: every route's first path, then the second),
      // so `/tasks/tasks` is task "tasks", not the task list of tenant "tasks".
      paths: [route.path, `/:tenant${route.path}`],
      guards: {
        ...CALLER_ROUTE,
        scoping: name === "extendedCard" ? "tenant" : "owner",
        contextIds: CONTEXT_IDS[name] ?? "none",
        body: route.body === "json" ? "json" : route.body === "object" ? "optional-json" : "none",
      },
      summary: `A2A ${OPERATIONS[name].rpc["1.0"]} over HTTP+JSON`,
      serve:
        ({ agent, baseUrl }) =>
        (c: C) => {
          checkPathEncoding(new URL(c.req.url).pathname);
          const origin = new URL(c.req.url).origin;
          const trace = requestTrace(c.req.raw);
          const ops = new Operations(
            agent,
            c.env,
            c.get("scope"),
            origin,
            trace,
            c.get("principal"),
          );
          // The card's features only for the operation that shows them.
          const features = () => servedFeatures(agent, baseUrl(c));
          return handleRest(
            c.req.raw,
            { ...route, operation: OPERATIONS[name] },
            c.req.param(),
            agent,
            ops,
            features,
          );
        },
    }),
  ),
);

/**
 * Every route an agent's app serves besides long-term memory's and the agent's own
 * endpoints (see `agentRoutes`), in the order they are mounted.
 */
export const AGENT_ROUTES: readonly AgentRoute[] = [
  {
    id: "agent card",
    methods: ["GET"],
    paths: [CARD_PATHS[0]],
    guards: PUBLIC,
    summary: "The A2A v1.0 agent card (signed when card signing keys are configured)",
    serve:
      ({ agent, baseUrl }) =>
      (c) => {
        const keys = cardSigningKeys(c.env);
        const base = baseUrl(c);
        // Signed only for the card's own origin, never for whatever Host a caller names.
        const signed = keys && signsCardAt(agent as Agent<unknown>, c.env, base);
        return cardCache(c, async () => {
          c.res = await (signed
            ? serveSignedCard(agent, base, keys)
            : serveCard(agent, base, "1.0"));
        }).then(() => c.res);
      },
  },
  {
    id: "agent card v0.3",
    methods: ["GET"],
    paths: [CARD_PATHS[1]],
    guards: PUBLIC,
    summary: "The agent card in the A2A v0.3 shape",
    serve:
      ({ agent, baseUrl }) =>
      (c) =>
        cardCache(c, async () => {
          c.res = serveCard(agent, baseUrl(c), "0.3");
        }).then(() => c.res),
  },
  {
    id: "jwks",
    methods: ["GET"],
    paths: [JWKS_PATH],
    guards: { ...PUBLIC, cors: "agent" },
    summary: "The public keys of webhook and card signatures (not found without either)",
    serve:
      ({ agent }) =>
      async (c) => {
        const cardKeys = cardSigningKeys(c.env);
        if (!agent.push && !cardKeys) {
          return restError(new A2AError("MethodNotFound", `No endpoint at ${JWKS_PATH}`));
        }
        const pushKeys = agent.push ? publicJwks(await signingKeys(c.env)).keys : [];
        const card = cardKeys ? (await cardKeys).map((k) => k.publicJwk) : [];
        return Response.json(mergeJwks(card, pushKeys), {
          headers: { "Cache-Control": "public, max-age=300" },
        });
      },
  },
  // The inspector's page and scripts hold no data (their requests carry the user's token).
  ...(["page", "script", "memory"] as const).map(
    (asset): AgentRoute => ({
      id: `inspector ${asset}`,
      methods: ["GET"],
      paths: [
        asset === "page"
          ? "/inspector"
          : asset === "script"
            ? "/inspector/app.js"
            : "/inspector/memory.js",
      ],
      guards: { ...PUBLIC, cors: "agent" },
      summary: `The inspector's ${asset === "page" ? "page" : asset === "script" ? "script" : "memory panel"} (not found while the inspector is off)`,
      serve: ({ agent }) => inspectorAsset(agent, asset),
    }),
  ),
  {
    id: "inspector task steps",
    methods: ["GET"],
    paths: [TASK_STEPS_PATH],
    guards: CALLER_ROUTE,
    summary: "A task's steps for the inspector, found as GetTask finds the task",
    gate: ({ agent }) => inspectorGate(agent),
    serve:
      ({ agent }) =>
      (c: C) => {
        const url = new URL(c.req.url);
        checkPathEncoding(url.pathname);
        const ops = new Operations(agent, c.env, c.get("scope"), url.origin);
        return serveTaskSteps(ops, parseTaskId({ id: c.req.param("id") }).id);
      },
  },
  {
    id: "jsonrpc",
    methods: ["POST"],
    paths: ["/"],
    guards: {
      ...CALLER_ROUTE,
      // Its tenant is `params.tenant` when the body names one (the scope's `within`).
      contextIds: { in: "body", name: "params.message.contextId", use: "write" },
      rateLimit: "body",
      body: "json",
    },
    summary: "A2A over JSON-RPC 2.0, every method of v1.0 and v0.3",
    serve:
      ({ agent, limits, baseUrl }) =>
      (c: C) => {
        // No URL parsed for a message: its origin is the URL's head (the URL a request
        // carries is already normalized); the card's features only for the method that shows them.
        const url = c.req.url;
        const caller = c.get("scope");
        return handleJsonRpc(
          c.req.raw,
          agent,
          (tenant) => {
            const scope = caller.within(tenant);
            const ops = () => {
              const trace = requestTrace(c.req.raw);
              const principal = c.get("principal");
              return new Operations<unknown>(agent, c.env, scope, originOf(url), trace, principal);
            };
            // Without rate limits, no wait: the operations are made at once.
            if (!agent.rateLimit) return ops();
            return limits.bodyTenant(c as never, scope.tenant).then(ops);
          },
          () => servedFeatures(agent, baseUrl(c, new URL(url))),
          url,
        );
      },
  },
  {
    id: "chat start",
    methods: ["POST"],
    paths: ["/chat", "/:tenant/chat"],
    guards: {
      ...CALLER_ROUTE,
      contextIds: { in: "body", name: "sessionId", use: "write" },
      body: "json",
    },
    summary: "The chat endpoint: starts a task and streams it",
    serve: ({ agent }) => chatHandlers(agent).start,
  },
  {
    id: "chat resume",
    methods: ["GET"],
    paths: ["/chat/:taskId", "/:tenant/chat/:taskId"],
    guards: CALLER_ROUTE,
    summary: "The chat endpoint: resumes a task's stream after Last-Event-ID",
    serve: ({ agent }) => chatHandlers(agent).resume,
  },
  ...REST,
];

/** The agent's own endpoints, after the A2A routes so that those always win. */
function endpointRoutes(agent: Agent<unknown>): AgentRoute[] {
  return agent.endpoints.map((spec) => ({
    id: `endpoint ${spec.name}`,
    methods: [spec.method],
    paths: [spec.path],
    guards: { ...CALLER_ROUTE, body: spec.source === "body" ? "json" : "none" },
    summary: `The agent's endpoint ${spec.name}`,
    // Their serving code comes with `endpoint()`: a Worker without any bundles none of it.
    serve: ({ agent }) => spec[SERVE_ENDPOINT](agent.keepAliveMs),
  }));
}

/**
 * Every route an agent's app mounts, in batches mounted in order (each batch in rounds:
 * every route's first path, then every second one): the agent's routes, long-term
 * memory's when it serves them, the agent's own endpoints. `createApp` mounts exactly
 * these, so a test walking them walks the app.
 */
export function agentRoutes(agent: Agent<unknown>): readonly (readonly AgentRoute[])[] {
  return [AGENT_ROUTES, agent.memory?.routes ?? [], endpointRoutes(agent), [FALLBACK]];
}

/** Any other method of a served path (405 with Allow), or any other path (404). */
const FALLBACK: AgentRoute = fallbackRoute<AgentServices>({
  id: "fallback",
  routesOf: ({ routes }) => routes(),
  trace: true,
  cors: "agent",
  notFound: (c) => restError(new A2AError("MethodNotFound", `No endpoint at ${c.req.path}`)),
  methodNotAllowed: (c, methods) => {
    const response = restError(
      new A2AError("MethodNotAllowed", `${c.req.method} is not allowed on ${c.req.path}`),
    );
    response.headers.set("Allow", methods.join(", "));
    return response;
  },
});
