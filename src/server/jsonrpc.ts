import type { Agent } from "../agent/definition";
import { cardToV1, cardToV03, type ServedFeatures } from "../models/agent-card";
import { A2AError, type ErrorKind } from "../models/errors";
import type { JsonObject } from "../models/json";
import { protoJsonNames } from "../models/protojson";
import { renderTask, renderTaskList } from "../models/render";
import {
  type ProtocolVersion,
  parseCompact,
  parseHistory,
  parseList,
  parseSend,
  parseTaskId,
} from "../models/requests";
import { SSE_HEADERS } from "../models/stream";
import { readJson } from "./body";
import { errorHeaders, jsonRpcError, type RpcId, toA2AError } from "./errors";
import { requireExtensions } from "./negotiation";
import type { Operations } from "./operations";
import { type PushOperation, runPushOperation } from "./push-api";
import { requestedTenant } from "./tenant";
import { nameOperation } from "./tracing";
import { requestedVersion } from "./version";

type Operation =
  | "send"
  | "stream"
  | "get"
  | "list"
  | "cancel"
  | "subscribe"
  | PushOperation
  | "extendedCard"
  | "history"
  | "compact"
  | "deadLetters"
  | "redeliver";

/** Edgelink's own methods, the same under every protocol version. */
const EDGELINK_METHODS: Record<string, Operation> = {
  GetContextHistory: "history",
  CompactContextHistory: "compact",
  ListDeadPushDeliveries: "deadLetters",
  RedeliverPushDeliveries: "redeliver",
};

/** Method names per protocol version (§5.3 for v1; the v0.3 names for older clients). */
const METHODS: Record<ProtocolVersion, Record<string, Operation>> = {
  "1.0": {
    SendMessage: "send",
    SendStreamingMessage: "stream",
    GetTask: "get",
    ListTasks: "list",
    CancelTask: "cancel",
    SubscribeToTask: "subscribe",
    CreateTaskPushNotificationConfig: "pushCreate",
    GetTaskPushNotificationConfig: "pushGet",
    ListTaskPushNotificationConfigs: "pushList",
    DeleteTaskPushNotificationConfig: "pushDelete",
    GetExtendedAgentCard: "extendedCard",
  },
  "0.3": {
    "message/send": "send",
    "message/stream": "stream",
    "tasks/get": "get",
    "tasks/list": "list",
    "tasks/cancel": "cancel",
    "tasks/resubscribe": "subscribe",
    "tasks/pushNotificationConfig/set": "pushCreate",
    "tasks/pushNotificationConfig/get": "pushGet",
    "tasks/pushNotificationConfig/list": "pushList",
    "tasks/pushNotificationConfig/delete": "pushDelete",
    "agent/getAuthenticatedExtendedCard": "extendedCard",
  },
};

const JSON_HEADERS = { "Content-Type": "application/json" };

/** Errors about the HTTP request itself keep their HTTP status under JSON-RPC too. */
const HTTP_LEVEL: ReadonlySet<ErrorKind> = new Set<ErrorKind>([
  "PayloadTooLarge",
  "UnsupportedMediaType",
  "Unauthenticated",
  "PermissionDenied",
  "RateLimited",
]);

/**
 * An id is echoed as parsed, so one a double cannot hold is refused rather than answered
 * under another id: `1e400` (Infinity, echoed as null), or an integer past 2^53
 * (12345678901234567890 comes back as 12345678901234567000).
 */
function isRpcId(v: unknown): v is RpcId {
  if (typeof v === "number")
    return Number.isInteger(v) ? Number.isSafeInteger(v) : Number.isFinite(v);
  return typeof v === "string" || v === null;
}

/**
 * Which version's method table a request uses. An explicit `A2A-Version` decides; with
 * none, a v1 method name is served as v1 and anything else as v0.3 (§3.6.2 says an
 * absent header means 0.3; accepting v1 names too makes plain curl work).
 */
function resolveMethod(
  method: string,
  asked: ProtocolVersion | null,
): { operation: Operation; version: ProtocolVersion } {
  const candidates: ProtocolVersion[] = asked ? [asked] : ["1.0", "0.3"];
  // Own properties only: `constructor` or `__proto__` must not find Object.prototype's.
  const own = (table: Record<string, Operation>) =>
    Object.hasOwn(table, method) ? table[method] : undefined;
  for (const version of candidates) {
    const operation = own(METHODS[version]) ?? own(EDGELINK_METHODS);
    if (operation) return { operation, version };
  }
  const other = asked === "1.0" ? "0.3" : asked === "0.3" ? "1.0" : null;
  const hint =
    other && own(METHODS[other])
      ? ` (${method} is an A2A ${other} method; this request declared A2A-Version ${asked})`
      : "";
  throw new A2AError("MethodNotFound", `Method not found: ${method}${hint}`, { method });
}

/**
 * Serves one JSON-RPC POST. Never throws: every failure is a JSON-RPC error response.
 * A notification (a request without `id`) is served and answered 204 with no body, as
 * JSON-RPC 2.0 §4.1 says the server must not reply to one.
 */
export async function handleJsonRpc<Env>(
  request: Request,
  agent: Agent<Env>,
  opsFor: (tenant: string) => Operations<Env> | Promise<Operations<Env>>,
  features: () => ServedFeatures,
  url: URL = new URL(request.url),
): Promise<Response> {
  const { response, notification } = await serveJsonRpc(request, agent, opsFor, features, url);
  if (!notification) return response;
  await response.body?.cancel();
  return new Response(null, { status: 204 });
}

async function serveJsonRpc<Env>(
  request: Request,
  agent: Agent<Env>,
  opsFor: (tenant: string) => Operations<Env> | Promise<Operations<Env>>,
  features: () => ServedFeatures,
  url: URL,
): Promise<{ response: Response; notification: boolean }> {
  let id: RpcId = null;
  let notification = false;
  const answer = (response: Response) => ({ response, notification });
  try {
    const body = await readJson(request);
    if (Array.isArray(body)) {
      throw new A2AError("InvalidRequest", "Batch requests are not supported by A2A");
    }
    if (body === null || typeof body !== "object") {
      throw new A2AError("InvalidRequest", "The request must be a JSON-RPC 2.0 object");
    }
    const rpc = body as JsonObject;
    if (isRpcId(rpc.id)) id = rpc.id;
    else if (rpc.id !== undefined) {
      throw new A2AError(
        "InvalidRequest",
        "id must be a string, null, or a number that survives a round trip (integers up to 2^53)",
      );
    }
    if (rpc.jsonrpc !== "2.0") throw new A2AError("InvalidRequest", 'jsonrpc must be "2.0"');
    if (typeof rpc.method !== "string" || rpc.method === "") {
      throw new A2AError("InvalidRequest", "method must be a non-empty string");
    }
    // Only a valid Request object without an id is a notification: anything else is an
    // Invalid Request, answered with id null (JSON-RPC 2.0 §5, `{"foo": "boo"}`).
    notification = !Object.hasOwn(rpc, "id");
    if (rpc.params !== undefined && (rpc.params === null || typeof rpc.params !== "object")) {
      throw new A2AError("InvalidParams", "params must be an object", {}, [
        { field: "params", description: "must be an object" },
      ]);
    }
    // The version is checked once the id is known, so its error echoes the id.
    const asked = requestedVersion(request, url);
    const { operation, version } = resolveMethod(rpc.method, asked);
    requireExtensions(request, agent as Agent<unknown>);
    const params = protoJsonNames((rpc.params ?? {}) as JsonObject);
    // May be refused by the tenant's rate limit, before any storage is touched.
    const ops = await opsFor(requestedTenant(params.tenant, "params.tenant"));
    nameOperation(ops.trace, operation, { method: rpc.method, version });
    const format = { version, binding: "jsonrpc" as const, rpcId: id };
    const respond = (result: unknown) =>
      Response.json({ jsonrpc: "2.0", id, result }, { headers: JSON_HEADERS });
    switch (operation) {
      case "send": {
        const p = parseSend(params, version);
        const result = await ops.sendMessage(p, version);
        return answer(
          new Response(`{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${result}}`, {
            headers: JSON_HEADERS,
          }),
        );
      }
      case "stream": {
        const stream = await ops.streamMessage(parseSend(params, version), format);
        return answer(new Response(stream, { headers: SSE_HEADERS }));
      }
      case "get": {
        const p = parseTaskId(params);
        return answer(respond(renderTask(await ops.getTask(p), version, p)));
      }
      case "list": {
        const p = parseList(params);
        return answer(respond(renderTaskList(await ops.listTasks(p), version, p)));
      }
      case "cancel":
        return answer(respond(renderTask(await ops.cancelTask(parseTaskId(params)), version)));
      case "subscribe": {
        const stream = await ops.subscribe(parseTaskId(params), format, lastEventId(request));
        return answer(new Response(stream, { headers: SSE_HEADERS }));
      }
      case "pushCreate":
      case "pushGet":
      case "pushList":
      case "pushDelete":
        return answer(respond(await runPushOperation(ops, operation, params, version)));
      case "extendedCard": {
        const card = ops.extendedCard();
        const served = features();
        return answer(
          respond(version === "1.0" ? cardToV1(card, served) : cardToV03(card, served)),
        );
      }
      case "history":
        return answer(respond(await ops.history(parseHistory(params))));
      case "deadLetters":
        return answer(respond({ deliveries: await ops.deadDeliveries(parseTaskId(params).id) }));
      case "redeliver":
        return answer(respond({ redelivered: await ops.redeliver(parseTaskId(params).id) }));
      case "compact": {
        const { contextId, request } = parseCompact(params);
        return answer(respond(await ops.compact(contextId, request)));
      }
    }
  } catch (error) {
    const a2a = toA2AError(error);
    const status = HTTP_LEVEL.has(a2a.kind) ? a2a.httpStatus : 200;
    const headers = { ...JSON_HEADERS, ...errorHeaders(a2a) };
    return answer(Response.json(jsonRpcError(id, a2a), { status, headers }));
  }
}

/** The SSE `Last-Event-ID` a reconnecting client sends, if it is one of our ids. */
export function lastEventId(request: Request): number | undefined {
  const raw = request.headers.get("Last-Event-ID")?.trim();
  if (raw === undefined || raw === "") return undefined;
  // Decimal digits only: Number() would also read "0x10", "1e3" and "1.0".
  const n = /^\d+$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isSafeInteger(n)) {
    throw new A2AError("InvalidRequest", "Last-Event-ID must be an event id this server sent");
  }
  return n;
}
