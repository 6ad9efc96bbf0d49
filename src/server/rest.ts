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
import { nameOperation } from "./tracing";
import { requestedVersion } from "./version";

export type Route =
  | { op: "send" | "stream" | "list" | "extendedCard" }
  | { op: "get" | "cancel" | "subscribe" | "pushConfigs"; id: string }
  | { op: "pushConfig"; id: string; configId: string }
  | { op: "history" | "compact"; contextId: string }
  | { op: "deadLetters" | "redeliver"; id: string };

/** One HTTP+JSON route: Hono path pattern, methods, and the operation it names. */
export interface RestRoute {
  methods: string[];
  path: string;
  route: (params: Record<string, string>) => Route;
}

/**
 * Hono cannot put a literal after a parameter in one segment (`/tasks/{id}:cancel`), so
 * those segments are a regular expression over the whole segment and `idBefore` strips
 * the literal off the matched value. Ids never contain `:` or `/`.
 */
const ID = "[^/:]+";
function idBefore(value: string | undefined, verb: string): string {
  return (value ?? "").slice(0, -verb.length);
}

/** The HTTP+JSON binding (§11); app.ts serves each also under a `/{tenant}` prefix. */
export const REST_ROUTES: RestRoute[] = [
  { methods: ["POST"], path: "/message:send", route: () => ({ op: "send" }) },
  { methods: ["POST"], path: "/message:stream", route: () => ({ op: "stream" }) },
  { methods: ["GET"], path: "/tasks", route: () => ({ op: "list" }) },
  { methods: ["GET"], path: "/extendedAgentCard", route: () => ({ op: "extendedCard" }) },
  {
    methods: ["POST"],
    path: `/tasks/:idVerb{${ID}:cancel}`,
    route: (p) => ({ op: "cancel", id: idBefore(p.idVerb, ":cancel") }),
  },
  {
    methods: ["GET", "POST"],
    path: `/tasks/:idVerb{${ID}:subscribe}`,
    route: (p) => ({ op: "subscribe", id: idBefore(p.idVerb, ":subscribe") }),
  },
  {
    methods: ["GET", "POST"],
    path: `/tasks/:id{${ID}}/pushNotificationConfigs`,
    route: (p) => ({ op: "pushConfigs", id: p.id ?? "" }),
  },
  {
    methods: ["GET", "DELETE"],
    path: `/tasks/:id{${ID}}/pushNotificationConfigs/:configId{${ID}}`,
    route: (p) => ({ op: "pushConfig", id: p.id ?? "", configId: p.configId ?? "" }),
  },
  { methods: ["GET"], path: `/tasks/:id{${ID}}`, route: (p) => ({ op: "get", id: p.id ?? "" }) },
  // Edgelink's dead-letter API for webhook deliveries.
  {
    methods: ["GET"],
    path: `/tasks/:id{${ID}}/deadLetters`,
    route: (p) => ({ op: "deadLetters", id: p.id ?? "" }),
  },
  {
    methods: ["POST"],
    path: `/tasks/:id{${ID}}/deadLetters:redeliver`,
    route: (p) => ({ op: "redeliver", id: p.id ?? "" }),
  },
  // Edgelink's conversation history API.
  {
    methods: ["GET"],
    path: `/contexts/:contextId{${ID}}/history`,
    route: (p) => ({ op: "history", contextId: p.contextId ?? "" }),
  },
  {
    methods: ["POST"],
    path: `/contexts/:contextId{${ID}}/history:compact`,
    route: (p) => ({ op: "compact", contextId: p.contextId ?? "" }),
  },
];

/**
 * A 400 naming the segment when a path's percent-encoding is broken (Hono would match
 * the route with the segment left undecoded).
 */
export function checkPathEncoding(pathname: string): void {
  for (const segment of pathname.split("/")) {
    try {
      decodeURIComponent(segment);
    } catch {
      throw new A2AError(
        "InvalidRequest",
        `Path segment ${JSON.stringify(segment)} is not valid percent-encoded UTF-8`,
        {},
        [{ field: "path", description: `bad percent-encoding in ${JSON.stringify(segment)}` }],
      );
    }
  }
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

async function optionalBody(request: Request): Promise<JsonObject> {
  const length = request.headers.get("Content-Length");
  if (request.method === "GET" || length === "0" || !request.body) return {};
  const body = await readJson(request);
  if (body === null || typeof body !== "object" || Array.isArray(body)) {
    throw new A2AError("InvalidParams", "The request body must be a JSON object");
  }
  return protoJsonNames(body as JsonObject);
}

/** A JSON body with proto field names mapped to JSON names. */
async function jsonBody(request: Request): Promise<unknown> {
  return protoJsonNames((await readJson(request)) as JsonValue);
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
    nameOperation(ops.trace, route.op, { version });
    const json = (value: unknown) =>
      Response.json(value, { headers: { "Content-Type": "application/json" } });
    switch (route.op) {
      case "send": {
        const params = parseSend(await jsonBody(request), version);
        return new Response(await ops.sendMessage(params, version), {
          headers: { "Content-Type": "application/json" },
        });
      }
      case "stream": {
        const body = await jsonBody(request);
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
        const body = await optionalBody(request);
        const params = parseTaskId({ ...body, id: route.id });
        return json(renderTask(await ops.cancelTask(params), version));
      }
      case "subscribe": {
        await optionalBody(request);
        const stream = await ops.subscribe(
          parseTaskId({ id: route.id }),
          format,
          lastEventId(request),
        );
        return new Response(stream, { headers: SSE_HEADERS });
      }
      case "pushConfigs": {
        if (request.method === "POST") {
          const body = await optionalBody(request);
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
        const body = await optionalBody(request);
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
