import {
  type AgentCard,
  cardToV1,
  cardToV03,
  type ServedFeatures,
} from "../../protocol/card/agent-card";
import type { JsonObject } from "../../protocol/json";
import { renderTask, renderTaskList } from "../../protocol/wire/render";
import {
  type ProtocolVersion,
  parseCompact,
  parseHistory,
  parseList,
  parseSend,
  parseTaskId,
} from "../../protocol/wire/requests";
import type { StreamFormat } from "../../protocol/wire/stream";
import type { Operations } from "./operations";
import {
  getPushConfig,
  parsePushCreate,
  parsePushList,
  parsePushRef,
  renderPushConfig,
  renderPushList,
} from "./push-api";
import { idBefore, lastEventId, listQuery, ROUTE_ID, taskQuery } from "./request-parts";

/**
 * Every A2A method (and Edgelink's own) in one table: its names in each binding, how its
 * params are read from a JSON-RPC request or from an HTTP+JSON route, its call into
 * `Operations`, and how its answer is rendered for the request's version. The bindings
 * (jsonrpc.ts, rest.ts) only find the entry and frame its answer.
 */

/** What a binding hands an operation besides its params. */
export interface Call {
  readonly ops: Operations<unknown>;
  readonly version: ProtocolVersion;
  readonly request: Request;
  /** How this binding frames a stream's events. */
  readonly format: StreamFormat;
  /** The card's served features; computed only by the operation that shows them. */
  readonly features: () => ServedFeatures;
}

/** An HTTP+JSON request as its route matched it. */
export interface RestInput {
  readonly url: URL;
  /** The route's path parameters, decoded. */
  readonly path: Readonly<Record<string, string | undefined>>;
  /**
   * The body as the route declares it: for `json`, any JSON value (proto field names
   * mapped); for `object`, a JSON object, `{}` when the request has none; else undefined.
   */
  readonly body: unknown;
}

/** An HTTP+JSON route (§11.3); the binding serves each also under `/{tenant}`. */
export interface RestRoute {
  readonly methods: readonly ("GET" | "POST" | "DELETE")[];
  /** A Hono path pattern. */
  readonly path: string;
  /** The body the binding reads before `fromRest`: required JSON, or an optional object. */
  readonly body?: "json" | "object";
}

/** An operation's answer, for the binding to frame. */
export type Answer =
  /** A JSON value: JSON-RPC's `result`, HTTP+JSON's body. */
  | { readonly json: unknown }
  /** The same, already JSON text. */
  | { readonly text: string }
  /** Server-Sent Events. */
  | { readonly stream: ReadableStream };

/**
 * One operation. Methods, not function properties: the table holds operations of
 * different params and results as `Operation<unknown, unknown>`, and a binding passes
 * what an entry's `fromRpc`/`fromRest` made only to that same entry's `run` and `render`.
 */
export interface Operation<P = unknown, R = unknown> {
  /** The JSON-RPC method names: A2A v1.0 (§5.3) and v0.3. Edgelink's own are the same in both. */
  readonly rpc: Readonly<Record<ProtocolVersion, string>>;
  readonly rest: readonly RestRoute[];
  fromRpc(params: JsonObject, call: Call): P;
  fromRest(input: RestInput, call: Call): P;
  run(params: P, call: Call): Promise<R>;
  render(result: R, params: P, call: Call): Answer;
}

const define = <P, R>(operation: Operation<P, R>): Operation => operation;

/** A route's body when it declared `object`. */
const fields = (input: RestInput) => input.body as JsonObject;
const id = (input: RestInput) => input.path.id ?? "";
const json = (value: unknown): Answer => ({ json: value });
const stream = (value: ReadableStream): Answer => ({ stream: value });
const card = (c: AgentCard, call: Call): Answer =>
  json(call.version === "1.0" ? cardToV1(c, call.features()) : cardToV03(c, call.features()));

const TASK = `/tasks/:id{${ROUTE_ID}}`;
const PUSH_CONFIGS = `${TASK}/pushNotificationConfigs`;
const PUSH_CONFIG = `${PUSH_CONFIGS}/:configId{${ROUTE_ID}}`;

/**
 * The operations, by the name the client's transport uses too. Their order is the order
 * the HTTP+JSON routes are registered in, which is the order `Allow` lists a path's
 * methods in (so push configs' list comes before create).
 */
export const OPERATIONS = {
  send: define({
    rpc: { "1.0": "SendMessage", "0.3": "message/send" },
    rest: [{ methods: ["POST"], path: "/message:send", body: "json" }],
    fromRpc: (params, c) => parseSend(params, c.version),
    fromRest: (input, c) => parseSend(input.body, c.version),
    // The object answers the result already rendered as JSON text: nothing to copy here.
    run: (p, c) => c.ops.sendMessage(p, c.version),
    render: (text) => ({ text }),
  }),
  stream: define({
    rpc: { "1.0": "SendStreamingMessage", "0.3": "message/stream" },
    rest: [{ methods: ["POST"], path: "/message:stream", body: "json" }],
    fromRpc: (params, c) => parseSend(params, c.version),
    fromRest: (input, c) => parseSend(input.body, c.version),
    run: (p, c) => c.ops.streamMessage(p, c.format),
    render: stream,
  }),
  list: define({
    rpc: { "1.0": "ListTasks", "0.3": "tasks/list" },
    rest: [{ methods: ["GET"], path: "/tasks" }],
    fromRpc: parseList,
    fromRest: (input) => parseList(listQuery(input.url)),
    run: (p, c) => c.ops.listTasks(p),
    render: (list, p, c) => json(renderTaskList(list, c.version, p)),
  }),
  extendedCard: define({
    rpc: { "1.0": "GetExtendedAgentCard", "0.3": "agent/getAuthenticatedExtendedCard" },
    rest: [{ methods: ["GET"], path: "/extendedAgentCard" }],
    fromRpc: () => undefined,
    fromRest: () => undefined,
    run: async (_, c) => c.ops.extendedCard(),
    render: (found, _, c) => card(found, c),
  }),
  cancel: define({
    rpc: { "1.0": "CancelTask", "0.3": "tasks/cancel" },
    rest: [{ methods: ["POST"], path: `/tasks/:idVerb{${ROUTE_ID}:cancel}`, body: "object" }],
    fromRpc: parseTaskId,
    fromRest: (input) =>
      parseTaskId({ ...fields(input), id: idBefore(input.path.idVerb, ":cancel") }),
    run: (p, c) => c.ops.cancelTask(p),
    render: (task, _, c) => json(renderTask(task, c.version)),
  }),
  subscribe: define({
    rpc: { "1.0": "SubscribeToTask", "0.3": "tasks/resubscribe" },
    rest: [
      {
        methods: ["GET", "POST"],
        path: `/tasks/:idVerb{${ROUTE_ID}:subscribe}`,
        // Read (and so checked) though nothing in it is used.
        body: "object",
      },
    ],
    fromRpc: (params, c) => ({ task: parseTaskId(params), after: lastEventId(c.request) }),
    fromRest: (input, c) => ({
      task: parseTaskId({ id: idBefore(input.path.idVerb, ":subscribe") }),
      after: lastEventId(c.request),
    }),
    run: (p, c) => c.ops.subscribe(p.task, c.format, p.after),
    render: stream,
  }),
  pushList: define({
    rpc: { "1.0": "ListTaskPushNotificationConfigs", "0.3": "tasks/pushNotificationConfig/list" },
    rest: [{ methods: ["GET"], path: PUSH_CONFIGS }],
    fromRpc: (params, c) => parsePushList(params, c.version),
    fromRest: (input, c) =>
      parsePushList({ ...listQuery(input.url), taskId: id(input) }, c.version),
    run: (p, c) => c.ops.listPushConfigs(p.taskId, p.page),
    render: (page, _, c) => json(renderPushList(page, c.version)),
  }),
  pushCreate: define({
    rpc: { "1.0": "CreateTaskPushNotificationConfig", "0.3": "tasks/pushNotificationConfig/set" },
    rest: [{ methods: ["POST"], path: PUSH_CONFIGS, body: "object" }],
    fromRpc: parsePushCreate,
    fromRest: (input) => parsePushCreate({ ...fields(input), taskId: id(input) }),
    run: (p, c) => c.ops.createPushConfig(p.taskId, p.config, c.version, "params"),
    render: (config, _, c) => json(renderPushConfig(config, c.version)),
  }),
  pushGet: define({
    rpc: { "1.0": "GetTaskPushNotificationConfig", "0.3": "tasks/pushNotificationConfig/get" },
    rest: [{ methods: ["GET"], path: PUSH_CONFIG }],
    fromRpc: (params, c) => parsePushRef(params, c.version, "get"),
    fromRest: (input, c) => parsePushRef(pushConfigPath(input, c.version), c.version, "get"),
    run: (p, c) => getPushConfig(c.ops, p),
    render: (config, _, c) => json(renderPushConfig(config, c.version)),
  }),
  pushDelete: define({
    rpc: {
      "1.0": "DeleteTaskPushNotificationConfig",
      "0.3": "tasks/pushNotificationConfig/delete",
    },
    rest: [{ methods: ["DELETE"], path: PUSH_CONFIG }],
    fromRpc: (params, c) => parsePushRef(params, c.version, "delete"),
    fromRest: (input, c) => parsePushRef(pushConfigPath(input, c.version), c.version, "delete"),
    run: (p, c) => c.ops.deletePushConfig(p.taskId, p.configId ?? ""),
    // v1 answers an empty object (google.protobuf.Empty), v0.3 null.
    render: (_, __, c) => json(c.version === "1.0" ? {} : null),
  }),
  get: define({
    rpc: { "1.0": "GetTask", "0.3": "tasks/get" },
    rest: [{ methods: ["GET"], path: TASK }],
    fromRpc: parseTaskId,
    fromRest: (input) => parseTaskId({ id: id(input), ...taskQuery(input.url) }),
    run: (p, c) => c.ops.getTask(p),
    render: (task, p, c) => json(renderTask(task, c.version, p)),
  }),
  // Edgelink's dead-letter API for webhook deliveries.
  deadLetters: define({
    rpc: { "1.0": "ListDeadPushDeliveries", "0.3": "ListDeadPushDeliveries" },
    rest: [{ methods: ["GET"], path: `${TASK}/deadLetters` }],
    fromRpc: (params) => parseTaskId(params).id,
    fromRest: (input) => parseTaskId({ id: id(input) }).id,
    run: (taskId, c) => c.ops.deadDeliveries(taskId),
    render: (deliveries) => json({ deliveries }),
  }),
  redeliver: define({
    rpc: { "1.0": "RedeliverPushDeliveries", "0.3": "RedeliverPushDeliveries" },
    // An optional body, read (and so checked) though nothing in it is used: a POST
    // that writes takes only JSON, never a cross-site form.
    rest: [{ methods: ["POST"], path: `${TASK}/deadLetters:redeliver`, body: "object" }],
    fromRpc: (params) => parseTaskId(params).id,
    fromRest: (input) => parseTaskId({ id: id(input) }).id,
    run: (taskId, c) => c.ops.redeliver(taskId),
    render: (redelivered) => json({ redelivered }),
  }),
  // Edgelink's conversation history API.
  history: define({
    rpc: { "1.0": "GetContextHistory", "0.3": "GetContextHistory" },
    rest: [{ methods: ["GET"], path: `/contexts/:contextId{${ROUTE_ID}}/history` }],
    fromRpc: parseHistory,
    fromRest: (input) =>
      parseHistory({ ...listQuery(input.url), contextId: input.path.contextId ?? "" }),
    run: (p, c) => c.ops.history(p),
    render: json,
  }),
  compact: define({
    rpc: { "1.0": "CompactContextHistory", "0.3": "CompactContextHistory" },
    rest: [
      {
        methods: ["POST"],
        path: `/contexts/:contextId{${ROUTE_ID}}/history:compact`,
        body: "object",
      },
    ],
    fromRpc: parseCompact,
    // The whole body is the compaction request; the path names the context.
    fromRest: (input) => ({ contextId: input.path.contextId ?? "", request: fields(input) }),
    run: (p, c) => c.ops.compact(p.contextId, p.request),
    render: json,
  }),
} satisfies Record<string, Operation>;

export type OperationName = keyof typeof OPERATIONS;

/** A push config's path as the version names its params. */
function pushConfigPath(input: RestInput, version: ProtocolVersion): JsonObject {
  const configId = input.path.configId ?? "";
  return version === "1.0"
    ? { taskId: id(input), id: configId }
    : { id: id(input), pushNotificationConfigId: configId };
}

/** JSON-RPC method name to operation, per version (own entries only: no `__proto__`). */
export const RPC_METHODS: Readonly<Record<ProtocolVersion, ReadonlyMap<string, Operation>>> = {
  "1.0": new Map(Object.values(OPERATIONS).map((op) => [op.rpc["1.0"], op])),
  "0.3": new Map(Object.values(OPERATIONS).map((op) => [op.rpc["0.3"], op])),
};

/** Every HTTP+JSON route with its operation, in registration order. */
export const REST_ROUTES: readonly (RestRoute & { operation: Operation })[] = Object.values(
  OPERATIONS,
).flatMap((operation) => operation.rest.map((route) => ({ ...route, operation })));
