import type { Agent } from "../agent/definition";
import { cardToV1, cardToV03, type ServedFeatures } from "../models/agent-card";
import { A2AError } from "../models/errors";
import type { JsonObject, JsonValue } from "../models/json";
import { protoJsonName, protoJsonNames } from "../models/protojson";
import { renderTask, renderTaskList } from "../models/render";
import {
  type ProtocolVersion,
  parseHistory,
  parseList,
  parseSend,
  parseTaskId,
} from "../models/requests";
import { SSE_HEADERS } from "../models/stream";
import { readJson } from "./body";
import { restError, toA2AError } from "./errors";
import { lastEventId } from "./jsonrpc";
import { requireExtensions } from "./negotiation";
import type { Operations } from "./operations";
import { runPushOperation } from "./push-api";
import { requestedVersion } from "./version";

type Route =
  | { op: "send" | "stream" | "list" | "extendedCard" }
  | { op: "get" | "cancel" | "subscribe" | "pushConfigs"; id: string }
  | { op: "pushConfig"; id: string; configId: string }
  | { op: "history" | "compact"; contextId: string }
  | { op: "deadLetters" | "redeliver"; id: string };

// Every route may carry a `/{tenant}` prefix (§11.3, a2a.proto additional_bindings).
const ROUTES: { pattern: RegExp; methods: string[]; route: (m: string[]) => Route }[] = [
  { pattern: /^\/message:send$/, methods: ["POST"], route: () => ({ op: "send" }) },
  { pattern: /^\/message:stream$/, methods: ["POST"], route: () => ({ op: "stream" }) },
  { pattern: /^\/tasks$/, methods: ["GET"], route: () => ({ op: "list" }) },
  { pattern: /^\/extendedAgentCard$/, methods: ["GET"], route: () => ({ op: "extendedCard" }) },
  {
    pattern: /^\/tasks\/([^/:]+):cancel$/,
    methods: ["POST"],
    route: (m) => ({ op: "cancel", id: m[0] ?? "" }),
  },
  {
    pattern: /^\/tasks\/([^/:]+):subscribe$/,
    methods: ["GET", "POST"],
    route: (m) => ({ op: "subscribe", id: m[0] ?? "" }),
  },
  {
    pattern: /^\/tasks\/([^/:]+)\/pushNotificationConfigs$/,
    methods: ["GET", "POST"],
    route: (m) => ({ op: "pushConfigs", id: m[0] ?? "" }),
  },
  {
    pattern: /^\/tasks\/([^/:]+)\/pushNotificationConfigs\/([^/:]+)$/,
    methods: ["GET", "DELETE"],
    route: (m) => ({ op: "pushConfig", id: m[0] ?? "", configId: m[1] ?? "" }),
  },
  {
    pattern: /^\/tasks\/([^/:]+)$/,
    methods: ["GET"],
    route: (m) => ({ op: "get", id: m[0] ?? "" }),
  },
  // Edgelink's dead-letter API for webhook deliveries.
  {
    pattern: /^\/tasks\/([^/:]+)\/deadLetters$/,
    methods: ["GET"],
    route: (m) => ({ op: "deadLetters", id: m[0] ?? "" }),
  },
  {
    pattern: /^\/tasks\/([^/:]+)\/deadLetters:redeliver$/,
    methods: ["POST"],
    route: (m) => ({ op: "redeliver", id: m[0] ?? "" }),
  },
  // Edgelink's conversation history API.
  {
    pattern: /^\/contexts\/([^/:]+)\/history$/,
    methods: ["GET"],
    route: (m) => ({ op: "history", contextId: m[0] ?? "" }),
  },
  {
    pattern: /^\/contexts\/([^/:]+)\/history:compact$/,
    methods: ["POST"],
    route: (m) => ({ op: "compact", contextId: m[0] ?? "" }),
  },
];

/** A path segment decoded, or a 400 naming it when its percent-encoding is broken. */
function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new A2AError(
      "InvalidRequest",
      `Path segment ${JSON.stringify(segment)} is not valid percent-encoded UTF-8`,
      {},
      [{ field: "path", description: `bad percent-encoding in ${JSON.stringify(segment)}` }],
    );
  }
}

/** Splits `/{tenant}/rest...` into tenant and route, trying the unprefixed form first. */
export function matchRest(
  pathname: string,
  method: string,
): { tenant: string; route: Route } | { allowed: string[] } | null {
  const segments = pathname.split("/");
  const candidates: { tenant: string; path: string }[] = [{ tenant: "", path: pathname }];
  if (segments.length > 2 && segments[1]) {
    candidates.push({
      tenant: segments[1],
      path: `/${segments.slice(2).join("/")}`,
    });
  }
  for (const { tenant, path } of candidates) {
    for (const r of ROUTES) {
      const match = r.pattern.exec(path);
      if (!match) continue;
      if (!r.methods.includes(method)) return { allowed: r.methods };
      const groups = match.slice(1).map(decodeSegment);
      return { tenant: tenant && decodeSegment(tenant), route: r.route(groups) };
    }
  }
  return null;
}

/** Query string to ListTasks params: numbers and booleans typed, so zod names bad ones. */
function listQuery(url: URL): JsonObject {
  const out: JsonObject = {};
  for (const [name, value] of url.searchParams) {
    const key = name === "A2A-Version" ? name : protoJsonName(name);
    if (key === "A2A-Version") continue;
    if (key === "pageSize" || key === "historyLength") {
      out[key] = /^-?\d+$/.test(value) ? Number(value) : value;
    } else if (key === "includeArtifacts") {
      out[key] = value === "true" ? true : value === "false" ? false : value;
    } else {
      out[key] = value;
    }
  }
  return out;
}

async function optionalBody(request: Request, limit: number): Promise<JsonObject> {
  const length = request.headers.get("Content-Length");
  if (request.method === "GET" || length === "0" || !request.body) return {};
  const body = await readJson(request, limit);
  if (body === null || typeof body !== "object" || Array.isArray(body)) {
    throw new A2AError("InvalidParams", "The request body must be a JSON object");
  }
  return protoJsonNames(body as JsonObject);
}

/** A JSON body with proto field names mapped to JSON names. */
async function jsonBody(request: Request, limit: number): Promise<unknown> {
  return protoJsonNames((await readJson(request, limit)) as JsonValue);
}

/**
 * Serves the HTTP+JSON binding (§11). Without an `A2A-Version` the REST binding speaks
 * v1 (v0.3's REST paths differed; v0.3 clients use JSON-RPC). Never throws.
 */
export async function handleRest<Env>(
  request: Request,
  route: Route,
  agent: Agent<Env>,
  ops: Operations<Env>,
  features: ServedFeatures,
): Promise<Response> {
  try {
    const url = new URL(request.url);
    const version: ProtocolVersion = requestedVersion(request, url) ?? "1.0";
    requireExtensions(request, agent as Agent<unknown>);
    const format = { version, binding: "rest" as const };
    const json = (value: unknown) =>
      Response.json(value, { headers: { "Content-Type": "application/json" } });
    switch (route.op) {
      case "send": {
        const params = parseSend(await jsonBody(request, agent.maxBodyBytes), version);
        return new Response(await ops.sendMessage(params, version), {
          headers: { "Content-Type": "application/json" },
        });
      }
      case "stream": {
        const body = await jsonBody(request, agent.maxBodyBytes);
        return new Response(await ops.streamMessage(parseSend(body, version), format), {
          headers: SSE_HEADERS,
        });
      }
      case "get": {
        const historyLength =
          url.searchParams.get("historyLength") ?? url.searchParams.get("history_length");
        const params = parseTaskId({
          id: route.id,
          historyLength:
            historyLength === null
              ? undefined
              : /^-?\d+$/.test(historyLength)
                ? Number(historyLength)
                : historyLength,
        });
        return json(renderTask(await ops.getTask(params), version, params));
      }
      case "list": {
        const params = parseList(listQuery(url));
        return json(renderTaskList(await ops.listTasks(params), version, params));
      }
      case "cancel": {
        const body = await optionalBody(request, agent.maxBodyBytes);
        const params = parseTaskId({ ...body, id: route.id });
        return json(renderTask(await ops.cancelTask(params), version));
      }
      case "subscribe": {
        await optionalBody(request, agent.maxBodyBytes);
        const stream = await ops.subscribe(
          parseTaskId({ id: route.id }),
          format,
          lastEventId(request),
        );
        return new Response(stream, { headers: SSE_HEADERS });
      }
      case "pushConfigs": {
        if (request.method === "POST") {
          const body = await optionalBody(request, agent.maxBodyBytes);
          return json(
            await runPushOperation(ops, "pushCreate", { ...body, taskId: route.id }, version),
          );
        }
        const query = listQuery(url);
        return json(
          await runPushOperation(ops, "pushList", { ...query, taskId: route.id }, version),
        );
      }
      case "pushConfig": {
        const op = request.method === "DELETE" ? "pushDelete" : "pushGet";
        const params: JsonObject =
          version === "1.0"
            ? { taskId: route.id, id: route.configId }
            : { id: route.id, pushNotificationConfigId: route.configId };
        return json(await runPushOperation(ops, op, params, version));
      }
      case "deadLetters":
        return json({ deliveries: await ops.deadDeliveries(route.id) });
      case "redeliver":
        return json({ redelivered: await ops.redeliver(route.id) });
      case "history": {
        const query = listQuery(url);
        return json(await ops.history(parseHistory({ ...query, contextId: route.contextId })));
      }
      case "compact": {
        const body = await optionalBody(request, agent.maxBodyBytes);
        return json(await ops.compact(route.contextId, body));
      }
      case "extendedCard": {
        const card = ops.extendedCard();
        return json(version === "1.0" ? cardToV1(card, features) : cardToV03(card, features));
      }
    }
  } catch (error) {
    return restError(toA2AError(error));
  }
}
