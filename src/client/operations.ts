/**
 * The client's operations and how each is spelled on the wire: its JSON-RPC method per
 * protocol version and its HTTP+JSON route. `transport.ts` sends them.
 */
import type { JsonObject, JsonValue } from "../protocol/json";

/** The two A2A bindings this client speaks. */
export type Binding = "JSONRPC" | "HTTP+JSON";
/** The protocol versions this client speaks. */
export type Version = "1.0" | "0.3";

/** Every call the client makes, independent of binding and version. */
export type Operation =
  | "send"
  | "stream"
  | "get"
  | "list"
  | "cancel"
  | "subscribe"
  | "pushCreate"
  | "pushGet"
  | "pushList"
  | "pushDelete"
  | "extendedCard"
  | "history"
  | "compact"
  | "deadLetters"
  | "redeliver";

const EDGELINK_METHODS = {
  history: "GetContextHistory",
  compact: "CompactContextHistory",
  deadLetters: "ListDeadPushDeliveries",
  redeliver: "RedeliverPushDeliveries",
} as const;

/** The JSON-RPC method name of each operation, per protocol version. */
export const METHODS: Record<Version, Record<Operation, string>> = {
  "1.0": {
    send: "SendMessage",
    stream: "SendStreamingMessage",
    get: "GetTask",
    list: "ListTasks",
    cancel: "CancelTask",
    subscribe: "SubscribeToTask",
    pushCreate: "CreateTaskPushNotificationConfig",
    pushGet: "GetTaskPushNotificationConfig",
    pushList: "ListTaskPushNotificationConfigs",
    pushDelete: "DeleteTaskPushNotificationConfig",
    extendedCard: "GetExtendedAgentCard",
    ...EDGELINK_METHODS,
  },
  "0.3": {
    send: "message/send",
    stream: "message/stream",
    get: "tasks/get",
    list: "tasks/list",
    cancel: "tasks/cancel",
    subscribe: "tasks/resubscribe",
    pushCreate: "tasks/pushNotificationConfig/set",
    pushGet: "tasks/pushNotificationConfig/get",
    pushList: "tasks/pushNotificationConfig/list",
    pushDelete: "tasks/pushNotificationConfig/delete",
    extendedCard: "agent/getAuthenticatedExtendedCard",
    ...EDGELINK_METHODS,
  },
};

/** A call to one of Edgelink's HTTP routes (served beside either binding). */
export interface RestCall {
  method: "GET" | "POST" | "PUT" | "DELETE";
  path: string;
  query?: JsonObject;
  body?: JsonObject;
  /** Headers of this call only (the memory operator's key). */
  headers?: Record<string, string>;
}

const seg = (v: JsonValue | undefined): string => encodeURIComponent(String(v ?? ""));

function without(params: JsonObject, ...keys: string[]): JsonObject {
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(params)) if (!keys.includes(k)) out[k] = v;
  return out;
}

/** The HTTP+JSON request of an operation (§11.3; Edgelink's own routes for its calls). */
export function restCall(op: Operation, p: JsonObject): RestCall {
  switch (op) {
    case "send":
      return { method: "POST", path: "/message:send", body: p };
    case "stream":
      return { method: "POST", path: "/message:stream", body: p };
    case "get":
      return { method: "GET", path: `/tasks/${seg(p.id)}`, query: without(p, "id") };
    case "list":
      return { method: "GET", path: "/tasks", query: p };
    case "cancel":
      return { method: "POST", path: `/tasks/${seg(p.id)}:cancel`, body: without(p, "id") };
    case "subscribe":
      return { method: "POST", path: `/tasks/${seg(p.id)}:subscribe` };
    case "pushCreate":
      return { method: "POST", path: `/tasks/${seg(p.taskId)}/pushNotificationConfigs`, body: p };
    case "pushGet":
      return {
        method: "GET",
        path: `/tasks/${seg(p.taskId)}/pushNotificationConfigs/${seg(p.id)}`,
      };
    case "pushList":
      return {
        method: "GET",
        path: `/tasks/${seg(p.taskId)}/pushNotificationConfigs`,
        query: without(p, "taskId"),
      };
    case "pushDelete":
      return {
        method: "DELETE",
        path: `/tasks/${seg(p.taskId)}/pushNotificationConfigs/${seg(p.id)}`,
      };
    case "extendedCard":
      return { method: "GET", path: "/extendedAgentCard" };
    case "history":
      return {
        method: "GET",
        path: `/contexts/${seg(p.contextId)}/history`,
        query: without(p, "contextId"),
      };
    case "compact":
      return {
        method: "POST",
        path: `/contexts/${seg(p.contextId)}/history:compact`,
        body: without(p, "contextId"),
      };
    case "deadLetters":
      return { method: "GET", path: `/tasks/${seg(p.id)}/deadLetters` };
    case "redeliver":
      return { method: "POST", path: `/tasks/${seg(p.id)}/deadLetters:redeliver` };
  }
}
