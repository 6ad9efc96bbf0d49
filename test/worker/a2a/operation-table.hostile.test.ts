import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { LIMITS } from "../../../src/protocol/limits";
import { taskFromV1, V1Task } from "../../../src/protocol/wire/wire-v1";
import { BASE, listUntil, rest, rpc, send, userMessage } from "../../support/helpers";

/**
 * Hostile input, case by case: each row is one request an attacker (or a broken client)
 * sends, and what it must get back. A 4xx with the binding's error shape, the right code,
 * and a message naming the field; never a 5xx. hostile-input.test.ts covers the markers,
 * depth, part/id/metadata limits and HTTP hygiene; fuzz.test.ts sends random ones.
 */

type Json = Record<string, unknown>;
const j = JSON.stringify;

interface RpcRow {
  name: string;
  /** The raw body, or JSON-RPC params for `method`. */
  body?: string | Uint8Array;
  method?: string;
  params?: unknown;
  headers?: Record<string, string>;
  status?: number;
  code: number;
  /** Text the error (message or field violations) must contain: the field it is about. */
  names: string;
}

async function postRpc(row: RpcRow): Promise<{ status: number; body: Json }> {
  const body =
    row.body ??
    j({ jsonrpc: "2.0", id: 9, method: row.method ?? "SendMessage", params: row.params });
  const response = await SELF.fetch(`${BASE}/`, {
    method: "POST",
    headers: { "Content-Type": "application/json", "A2A-Version": "1.0", ...row.headers },
    body,
  });
  return { status: response.status, body: (await response.json()) as Json };
}

const withMessage = (extra: Json) => ({ message: userMessage("hostile", extra) });
const names = (n: number, length = 8) =>
  Array.from({ length: n }, (_, i) => `${i}`.padEnd(length, "x"));
// {"message": ... "text":"<0xff>"}: JSON whose only flaw is one byte that is not UTF-8.
const badUtf8 = (() => {
  const [head, tail] = j({
    jsonrpc: "2.0",
    id: 9,
    method: "SendMessage",
    params: withMessage({ parts: [{ text: "@" }] }),
  }).split("@");
  const enc = new TextEncoder();
  return new Uint8Array([...enc.encode(head), 0xff, ...enc.encode(tail)]);
})();

const RPC_ROWS: RpcRow[] = [
  // The envelope.
  {
    name: "id true",
    body: '{"jsonrpc":"2.0","id":true,"method":"ListTasks"}',
    code: -32600,
    names: "id",
  },
  {
    name: "id 1e400 (not echoable: Infinity)",
    body: '{"jsonrpc":"2.0","id":1e400,"method":"ListTasks"}',
    code: -32600,
    names: "id must be",
  },
  {
    name: "not a request, no id: answered, not a notification",
    body: '{"foo":"boo"}',
    code: -32600,
    names: "jsonrpc",
  },
  {
    name: "method a number, no id",
    body: '{"jsonrpc":"2.0","method":5}',
    code: -32600,
    names: "method",
  },
  { name: "params an array", method: "GetTask", params: [1], code: -32602, names: "params" },
  { name: "params a string", method: "GetTask", params: "x", code: -32602, names: "params" },
  { name: "body not UTF-8", body: badUtf8, code: -32700, names: "UTF-8" },
  {
    name: "__proto__ in params",
    body: '{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":{"__proto__":{"tenant":"x"}}}',
    code: -32600,
    names: "params.__proto__",
  },
  {
    name: "__proto__ in metadata",
    params: withMessage({ metadata: JSON.parse('{"__proto__":{"a":1}}') }),
    code: -32600,
    names: "params.message.metadata.__proto__",
  },
  {
    name: "id an integer past 2^53 (echoed as another number)",
    body: '{"jsonrpc":"2.0","id":12345678901234567890,"method":"ListTasks"}',
    code: -32600,
    names: "id must be",
  },
  // Wrong types and values inside a message.
  { name: "message null", params: { message: null }, code: -32602, names: "params.message" },
  { name: "message an array", params: { message: [] }, code: -32602, names: "params.message" },
  {
    name: "parts null",
    params: withMessage({ parts: null }),
    code: -32602,
    names: "params.message.parts",
  },
  {
    name: "text a number",
    params: withMessage({ parts: [{ text: 5 }] }),
    code: -32602,
    names: "params.message.parts.0.text",
  },
  {
    name: "two contents in a part",
    params: withMessage({ parts: [{ text: "a", data: {} }] }),
    code: -32602,
    names: "params.message.parts.0",
  },
  {
    name: "raw not base64",
    params: withMessage({ parts: [{ raw: "@@@" }] }),
    code: -32602,
    names: "params.message.parts.0.raw",
  },
  {
    name: "url not a URL",
    params: withMessage({ parts: [{ url: "not a url" }] }),
    code: -32602,
    names: "params.message.parts.0.url",
  },
  {
    name: "media type not accepted",
    params: withMessage({ parts: [{ text: "x", mediaType: "not a type" }] }),
    code: -32005,
    names: "params.message.parts.0.mediaType",
  },
  {
    name: "messageId a number",
    params: withMessage({ messageId: 7 }),
    code: -32602,
    names: "params.message.messageId",
  },
  {
    name: "messageId with a newline",
    params: withMessage({ messageId: "a\nb" }),
    code: -32602,
    names: "params.message.messageId",
  },
  {
    name: "messageId with a lone surrogate",
    params: withMessage({ messageId: "a\ud800" }),
    code: -32602,
    names: "params.message.messageId",
  },
  {
    name: "role not a Role",
    params: withMessage({ role: "ROLE_KING" }),
    code: -32602,
    names: "params.message.role: must be ROLE_USER or ROLE_AGENT",
  },
  {
    name: "referenceTaskIds over the limit",
    params: withMessage({ referenceTaskIds: names(LIMITS.names + 1) }),
    code: -32602,
    names: "params.message.referenceTaskIds",
  },
  {
    name: "an extension URI over the limit",
    params: withMessage({ extensions: ["x".repeat(LIMITS.nameLength + 1)] }),
    code: -32602,
    names: "params.message.extensions.0",
  },
  {
    name: "acceptedOutputModes over the limit",
    params: { ...withMessage({}), configuration: { acceptedOutputModes: names(LIMITS.names + 1) } },
    code: -32602,
    names: "params.configuration.acceptedOutputModes",
  },
  {
    name: "historyLength a float",
    params: { ...withMessage({}), configuration: { historyLength: 1.5 } },
    code: -32602,
    names: "params.configuration.historyLength",
  },
  {
    name: "configuration null",
    params: { ...withMessage({}), configuration: null },
    code: -32602,
    names: "params.configuration",
  },
  {
    name: "returnImmediately a string",
    params: { ...withMessage({}), configuration: { returnImmediately: "yes" } },
    code: -32602,
    names: "params.configuration.returnImmediately",
  },
  {
    name: "push url not https",
    params: {
      ...withMessage({}),
      configuration: { taskPushNotificationConfig: { url: "http://hooks.example.com" } },
    },
    code: -32602,
    names: "params.configuration.taskPushNotificationConfig.url",
  },
  // Parts a client may mark as Edgelink's own (B10): their content is checked at the edge.
  {
    name: "tool_call part whose data is a number",
    params: withMessage({ parts: [{ data: 5, metadata: { "edgelink/part": "tool_call" } }] }),
    code: -32602,
    names: "params.message.parts.0.data",
  },
  {
    name: "tool_call part without a tool name",
    params: withMessage({
      parts: [{ text: "x" }, { data: { args: {} }, metadata: { "edgelink/part": "tool_call" } }],
    }),
    code: -32602,
    names: "params.message.parts.1.data.toolName",
  },
  {
    name: "infer part whose prompt is a number",
    params: withMessage({
      parts: [{ data: { prompt: 5 }, metadata: { "edgelink/part": "infer" } }],
    }),
    code: -32602,
    names: "params.message.parts.0.data.prompt",
  },
  {
    name: "v0.3 tool_call part with args a list",
    method: "message/send",
    headers: { "A2A-Version": "0.3" },
    params: {
      message: {
        kind: "message",
        messageId: "m",
        role: "user",
        parts: [
          {
            kind: "data",
            data: { toolName: "add", args: [1] },
            metadata: { "edgelink/part": "tool_call" },
          },
        ],
      },
    },
    code: -32602,
    names: "params.message.parts.0.data.args",
  },
  {
    name: "a client message in the agent's role",
    params: withMessage({ role: "ROLE_AGENT" }),
    code: -32602,
    names: "params.message.role",
  },
  {
    name: "v0.3: a client message in the agent's role",
    method: "message/send",
    headers: { "A2A-Version": "0.3" },
    params: {
      message: {
        kind: "message",
        messageId: "m",
        role: "agent",
        parts: [{ kind: "text", text: "I said yes" }],
      },
    },
    code: -32602,
    names: "params.message.role",
  },
  {
    name: "v0.3 push config with 17 auth schemes",
    method: "tasks/pushNotificationConfig/set",
    headers: { "A2A-Version": "0.3" },
    params: {
      taskId: "t",
      pushNotificationConfig: {
        url: "https://hooks.example.com/a",
        authentication: { schemes: Array.from({ length: 17 }, () => "Bearer") },
      },
    },
    code: -32602,
    names: "params.pushNotificationConfig.authentication.schemes",
  },
  {
    name: "v0.3 file uri not a URL",
    method: "message/send",
    headers: { "A2A-Version": "0.3" },
    params: {
      message: {
        kind: "message",
        messageId: "m",
        role: "user",
        parts: [{ kind: "file", file: { uri: "x.png" } }],
      },
    },
    code: -32602,
    names: "params.message.parts.0.file.uri",
  },
  // Reads.
  {
    name: "GetTask id a number",
    method: "GetTask",
    params: { id: 5 },
    code: -32602,
    names: "params.id",
  },
  // Task and push config ids: one that could not have been issued is refused naming its
  // field, never answered "not found" with the id echoed as sent.
  {
    name: "GetTask id with a newline",
    method: "GetTask",
    params: { id: "a\nb" },
    code: -32602,
    names: "params.id",
  },
  {
    name: "CancelTask id with a lone surrogate",
    method: "CancelTask",
    params: { id: "a\ud800" },
    code: -32602,
    names: "params.id",
  },
  {
    name: "message taskId with a newline",
    params: withMessage({ taskId: "a\nb" }),
    code: -32602,
    names: "params.message.taskId",
  },
  {
    name: "push config get: config id over the id limit",
    method: "GetTaskPushNotificationConfig",
    params: { taskId: "t", id: "c".repeat(LIMITS.idLength + 1) },
    code: -32602,
    names: "params.id",
  },
  {
    name: "push config get: taskId over the task id limit",
    method: "GetTaskPushNotificationConfig",
    params: { taskId: "t".repeat(LIMITS.taskIdLength + 1), id: "c" },
    code: -32602,
    names: "params.taskId",
  },
  {
    name: "push config delete: config id with a newline",
    method: "DeleteTaskPushNotificationConfig",
    params: { taskId: "t", id: "a\nb" },
    code: -32602,
    names: "params.id",
  },
  {
    name: "push config list: taskId with a NUL",
    method: "ListTaskPushNotificationConfigs",
    params: { taskId: "a\u0000b" },
    code: -32602,
    names: "params.taskId",
  },
  {
    name: "push config list: pageToken over the id limit",
    method: "ListTaskPushNotificationConfigs",
    params: { taskId: "t", pageToken: "p".repeat(LIMITS.idLength + 1) },
    code: -32602,
    names: "params.pageToken",
  },
  {
    name: "push config create: taskId with a newline",
    method: "CreateTaskPushNotificationConfig",
    params: { taskId: "a\nb", url: "https://hooks.example.com/a" },
    code: -32602,
    names: "params.taskId",
  },
  {
    name: "v0.3 push config get: config id over the id limit",
    method: "tasks/pushNotificationConfig/get",
    headers: { "A2A-Version": "0.3" },
    params: { id: "t", pushNotificationConfigId: "c".repeat(LIMITS.idLength + 1) },
    code: -32602,
    names: "params.pushNotificationConfigId",
  },
  {
    name: "dead deliveries: id with a newline",
    method: "ListDeadPushDeliveries",
    params: { id: "a\nb" },
    code: -32602,
    names: "params.id",
  },
  {
    name: "GetTask historyLength 1e300",
    method: "GetTask",
    params: { id: "t", historyLength: 1e300 },
    code: -32602,
    names: "params.historyLength",
  },
  {
    name: "GetTask historyLength -1",
    method: "GetTask",
    params: { id: "t", historyLength: -1 },
    code: -32602,
    names: "params.historyLength",
  },
  {
    name: "GetTask historyLength a string",
    method: "GetTask",
    params: { id: "t", historyLength: "2" },
    code: -32602,
    names: "params.historyLength",
  },
  {
    name: "ListTasks pageSize 0",
    method: "ListTasks",
    params: { pageSize: 0 },
    code: -32602,
    names: "params.pageSize",
  },
  {
    name: "ListTasks pageSize 101",
    method: "ListTasks",
    params: { pageSize: 101 },
    code: -32602,
    names: "params.pageSize",
  },
  {
    name: "ListTasks pageToken forged",
    method: "ListTasks",
    params: { pageToken: "AAAA" },
    code: -32602,
    names: "params.pageToken",
  },
  {
    name: "ListTasks status unknown",
    method: "ListTasks",
    params: { status: "DONE" },
    code: -32602,
    names: "params.status: must be a TaskState name",
  },
  {
    name: "ListTasks statusTimestampAfter not a time",
    method: "ListTasks",
    params: { statusTimestampAfter: "yesterday" },
    code: -32602,
    names: "params.statusTimestampAfter",
  },
  {
    name: "ListTasks includeArtifacts a string",
    method: "ListTasks",
    params: { includeArtifacts: "true" },
    code: -32602,
    names: "params.includeArtifacts",
  },
  {
    name: "tenant with a NUL",
    method: "ListTasks",
    params: { tenant: "a\u0000b" },
    code: -32602,
    names: "params.tenant",
  },
  {
    name: "tenant a number (push method: no schema reads it)",
    method: "GetTaskPushNotificationConfig",
    params: { tenant: 5, taskId: "t", id: "c" },
    code: -32602,
    names: "params.tenant",
  },
  {
    name: "history page token not ours (h0x10)",
    method: "GetContextHistory",
    params: { contextId: "c", pageToken: btoa("h0x10") },
    code: -32602,
    names: "params.pageToken",
  },
  {
    name: "history page token negative",
    method: "GetContextHistory",
    params: { contextId: "c", pageToken: btoa("h-5") },
    code: -32602,
    names: "params.pageToken",
  },
  // Headers.
  {
    name: "Last-Event-ID in hex",
    method: "SubscribeToTask",
    params: { id: "t" },
    headers: { "Last-Event-ID": "0x10" },
    code: -32600,
    names: "Last-Event-ID",
  },
  {
    name: "Last-Event-ID in exponent form",
    method: "SubscribeToTask",
    params: { id: "t" },
    headers: { "Last-Event-ID": "1e3" },
    code: -32600,
    names: "Last-Event-ID",
  },
  {
    name: "A2A-Version with junk",
    method: "ListTasks",
    params: {},
    headers: { "A2A-Version": "1.0.x" },
    code: -32009,
    names: "1.0.x",
  },
  {
    name: "Content-Type missing",
    method: "ListTasks",
    params: {},
    headers: { "Content-Type": "" },
    status: 415,
    code: -32005,
    names: "Content-Type",
  },
];

describe("JSON-RPC: one hostile request per row", () => {
  it.each(RPC_ROWS)("$name", async (row) => {
    const { status, body } = await postRpc(row);
    expect(status).toBe(row.status ?? 200);
    expect(body.jsonrpc).toBe("2.0");
    const error = body.error as { code: number; message: string; data?: unknown };
    expect(error, j(body).slice(0, 300)).toBeDefined();
    expect(error.code).toBe(row.code);
    expect(error.message + j(error.data)).toContain(row.names);
  });
});

interface RestRow {
  name: string;
  method: string;
  path: string;
  body?: string;
  headers?: Record<string, string>;
  status: number;
  names: string;
}

const REST_ROWS: RestRow[] = [
  {
    name: "body an array",
    method: "POST",
    path: "/message:send",
    body: "[]",
    status: 400,
    names: "expected object",
  },
  {
    name: "body null",
    method: "POST",
    path: "/message:send",
    body: "null",
    status: 400,
    names: "message",
  },
  {
    name: "body empty",
    method: "POST",
    path: "/message:send",
    body: "",
    status: 400,
    names: "Invalid JSON",
  },
  {
    name: "__proto__ in a part's metadata",
    method: "POST",
    path: "/message:send",
    body: j(withMessage({ parts: [{ text: "x", metadata: JSON.parse('{"__proto__":{}}') }] })),
    status: 400,
    names: "message.parts.0.metadata.__proto__",
  },
  {
    name: "tool_call part without a tool name",
    method: "POST",
    path: "/message:send",
    body: j(withMessage({ parts: [{ data: {}, metadata: { "edgelink/part": "tool_call" } }] })),
    status: 400,
    names: "message.parts.0.data.toolName",
  },
  {
    name: "chat: infer part with a numeric prompt",
    method: "POST",
    path: "/chat",
    body: j({
      message: userMessage("x", {
        parts: [{ data: { prompt: 1 }, metadata: { "edgelink/part": "infer" } }],
      }),
    }),
    status: 400,
    names: "message.parts.0.data.prompt",
  },
  {
    name: "file url not a URL",
    method: "POST",
    path: "/message:send",
    body: j(withMessage({ parts: [{ url: "/relative/path.png" }] })),
    status: 400,
    names: "message.parts.0.url",
  },
  { name: "tenant with a NUL", method: "GET", path: "/a%00b/tasks", status: 400, names: "tenant" },
  {
    name: "tenant over the id limit",
    method: "GET",
    path: `/${"t".repeat(LIMITS.idLength + 1)}/tasks`,
    status: 400,
    names: "tenant",
  },
  {
    name: "tenant with a newline, on send",
    method: "POST",
    path: "/a%0Ab/message:send",
    body: j(withMessage({})),
    status: 400,
    names: "tenant",
  },
  {
    name: "historyLength a float",
    method: "GET",
    path: "/tasks/t?historyLength=1.5",
    status: 400,
    names: "historyLength",
  },
  {
    name: "historyLength past 2^53",
    method: "GET",
    path: "/tasks/t?historyLength=99999999999999999999999",
    status: 400,
    names: "historyLength",
  },
  {
    name: "pageSize in exponent form",
    method: "GET",
    path: "/tasks?pageSize=1e2",
    status: 400,
    names: "pageSize",
  },
  {
    name: "pageSize too large",
    method: "GET",
    path: "/tasks?page_size=1000",
    status: 400,
    names: "pageSize",
  },
  {
    name: "status a number out of range",
    method: "GET",
    path: "/tasks?status=99",
    status: 400,
    names: "status",
  },
  {
    name: "status not a TaskState",
    method: "GET",
    path: "/tasks?status=DONE",
    status: 400,
    names: "status: must be a TaskState name",
  },
  {
    name: "includeArtifacts 1",
    method: "GET",
    path: "/tasks?includeArtifacts=1",
    status: 400,
    names: "includeArtifacts",
  },
  {
    name: "cancel body an array",
    method: "POST",
    path: "/tasks/t:cancel",
    body: "[1]",
    status: 400,
    names: "JSON object",
  },
  {
    name: "push config body without url",
    method: "POST",
    path: "/tasks/t/pushNotificationConfigs",
    body: "{}",
    status: 400,
    names: "url",
  },
  {
    name: "push configs pageSize a word",
    method: "GET",
    path: "/tasks/t/pushNotificationConfigs?pageSize=x",
    status: 400,
    names: "pageSize",
  },
  {
    // The route's guard verifies the context id before the handler reads the query.
    name: "history of a context not issued, pageSize 0",
    method: "GET",
    path: "/contexts/c/history?pageSize=0",
    status: 400,
    names: "contextId",
  },
  {
    name: "subscribe Last-Event-ID not a number",
    method: "GET",
    path: "/tasks/t:subscribe",
    headers: { "Last-Event-ID": "abc" },
    status: 400,
    names: "Last-Event-ID",
  },
  {
    name: "task id with a newline",
    method: "GET",
    path: "/tasks/a%0Ab",
    status: 400,
    names: '"field":"id"',
  },
  {
    name: "cancel: task id with a NUL",
    method: "POST",
    path: "/tasks/a%00b:cancel",
    status: 400,
    names: '"field":"id"',
  },
  {
    name: "push config id over the id limit",
    method: "GET",
    path: `/tasks/t/pushNotificationConfigs/${"c".repeat(LIMITS.idLength + 1)}`,
    status: 400,
    names: '"field":"id"',
  },
  {
    name: "push configs of a task id with a newline",
    method: "GET",
    path: "/tasks/a%0Ab/pushNotificationConfigs",
    status: 400,
    names: '"field":"taskId"',
  },
  {
    name: "dead deliveries: task id with a newline",
    method: "GET",
    path: "/tasks/a%0Ab/deadLetters",
    status: 400,
    names: '"field":"id"',
  },
  {
    name: "redeliver: task id over the task id limit",
    method: "POST",
    path: `/tasks/${"t".repeat(LIMITS.taskIdLength + 1)}/deadLetters:redeliver`,
    status: 400,
    names: '"field":"id"',
  },
  {
    name: "chat: resume a task id with a newline",
    method: "GET",
    path: "/chat/a%0Ab",
    status: 400,
    names: '"field":"id"',
  },
  { name: "unknown method", method: "PROPFIND", path: "/tasks", status: 405, names: "PROPFIND" },
  { name: "GET on the JSON-RPC endpoint", method: "GET", path: "/", status: 405, names: "GET" },
  {
    name: "chat: message null",
    method: "POST",
    path: "/chat",
    body: j({ message: null }),
    status: 400,
    names: "message",
  },
  {
    name: "chat: sessionId a number",
    method: "POST",
    path: "/chat",
    body: j({ message: "x", sessionId: 5 }),
    status: 400,
    names: "sessionId",
  },
  {
    name: "chat: sessionId with a newline names sessionId",
    method: "POST",
    path: "/chat",
    body: j({ message: "x", sessionId: "a\nb" }),
    status: 400,
    names: '"field":"sessionId"',
  },
  {
    name: "chat: sessionId over the id limit names sessionId",
    method: "POST",
    path: "/chat",
    body: j({ message: "x", sessionId: "s".repeat(LIMITS.idLength + 1) }),
    status: 400,
    names: '"field":"sessionId"',
  },
  {
    name: "chat: a decision for a task id with a newline names taskId",
    method: "POST",
    path: "/chat",
    body: j({ taskId: "a\nb", decisions: [{ callId: "c", decision: "approve" }] }),
    status: 400,
    names: '"field":"taskId"',
  },
  {
    name: "chat: body an array",
    method: "POST",
    path: "/chat",
    body: "[]",
    status: 400,
    names: "body",
  },
  {
    name: "chat: resume with Last-Event-ID -1",
    method: "GET",
    path: "/chat/t",
    headers: { "Last-Event-ID": "-1" },
    status: 400,
    names: "Last-Event-ID",
  },
  {
    name: "chat: tenant with a NUL",
    method: "POST",
    path: "/a%00b/chat",
    body: j({ message: "x" }),
    status: 400,
    names: "tenant",
  },
];

describe("HTTP+JSON and chat: one hostile request per row", () => {
  it.each(REST_ROWS)("$name", async (row) => {
    const response = await SELF.fetch(`${BASE}${row.path}`, {
      method: row.method,
      headers: { "Content-Type": "application/json", ...row.headers },
      body: row.body,
    });
    const text = await response.text();
    expect(response.status, text.slice(0, 300)).toBe(row.status);
    const error = (JSON.parse(text) as Json).error as { code: number; message: string };
    expect(error.code).toBe(row.status);
    expect(text).toContain(row.names);
  });
});

describe("refused requests lose nothing and leave nothing behind", () => {
  it("refused sends create no task; the one accepted send is the tenant's only task", async () => {
    const tenant = `refusals-${crypto.randomUUID().slice(0, 8)}`;
    const refused: unknown[] = [
      withMessage({ metadata: JSON.parse('{"__proto__":{"role":"system"}}') }),
      withMessage({ parts: [{ url: "nope" }] }),
      withMessage({ referenceTaskIds: names(LIMITS.names + 1) }),
      withMessage({ parts: [{ text: "x", mediaType: "image/png" }] }),
      {
        ...withMessage({}),
        configuration: { taskPushNotificationConfig: { url: "https://127.0.0.1/" } },
      },
    ];
    for (const body of refused) {
      expect((await rest("POST", `/${tenant}/message:send`, body)).status).toBe(400);
    }
    await rest("POST", `/${tenant}/message:send`, withMessage({ parts: [{ text: "kept" }] }));
    const list = await listUntil({ tenant }, (r) => r.totalSize >= 1);
    expect(list.totalSize).toBe(1);
  });

  it("a body that is not UTF-8 is refused before anything is stored (the text is not rewritten)", async () => {
    const task = await send("a conversation");
    const [head, tail] = j({
      jsonrpc: "2.0",
      id: 1,
      method: "SendMessage",
      params: { message: userMessage("@", { taskId: task.id }) },
    }).split("@");
    const enc = new TextEncoder();
    const response = await SELF.fetch(`${BASE}/`, {
      method: "POST",
      headers: { "Content-Type": "application/json", "A2A-Version": "1.0" },
      body: new Uint8Array([...enc.encode(head), 0xc3, 0x28, ...enc.encode(tail)]),
    });
    expect(((await response.json()) as Json).error).toMatchObject({ code: -32700 });
    const got = await rpc("GetTask", { id: task.id });
    const history = (got.body.result as { history: unknown[] }).history;
    expect(history).toHaveLength(1);
  });

  it("a compaction with a misspelt limit is refused, naming it, and deletes nothing", async () => {
    const first = await send("one");
    const contextId = first.contextId as string;
    for (const text of ["two", "three", "four"]) {
      await send(text, { contextId });
    }
    const before = await rpc("GetContextHistory", { contextId });
    const total = (before.body.result as { totalSize: number }).totalSize;
    const bad = await rpc("CompactContextHistory", { contextId, maxMesages: 2 });
    const error = bad.body.error as { code: number; message: string };
    expect(error.code).toBe(-32602);
    expect(error.message).toContain("params.maxMesages");
    const restBad = await rest("POST", `/contexts/${contextId}/history:compact`, { kepp: 2 });
    expect(restBad.status).toBe(400);
    expect(j(restBad.body)).toContain("kepp");
    const after = await rpc("GetContextHistory", { contextId });
    expect((after.body.result as { totalSize: number }).totalSize).toBe(total);
  });
});

describe("methods and page tokens", () => {
  it("HEAD of the card answers its headers and no body; OPTIONS (CORS off) is 405 with Allow", async () => {
    const get = await SELF.fetch(`${BASE}/.well-known/agent-card.json`);
    await get.body?.cancel();
    const head = await SELF.fetch(`${BASE}/.well-known/agent-card.json`, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe("");
    expect(head.headers.get("ETag")).toBe(get.headers.get("ETag"));
    const options = await SELF.fetch(`${BASE}/tasks`, { method: "OPTIONS" });
    expect(options.status).toBe(405);
    expect(options.headers.get("Allow")).toContain("GET");
    expect(((await options.json()) as Json).error).toMatchObject({ code: 405 });
  });

  it("a page token of one tenant, replayed in another, shows none of the first tenant's tasks", async () => {
    const a = `tokens-a-${crypto.randomUUID().slice(0, 8)}`;
    const b = `tokens-b-${crypto.randomUUID().slice(0, 8)}`;
    for (const text of ["a1", "a2", "a3"]) {
      await rest("POST", `/${a}/message:send`, withMessage({ parts: [{ text }] }));
    }
    await rest("POST", `/${b}/message:send`, withMessage({ parts: [{ text: "b1" }] }));
    const first = await listUntil({ tenant: a, pageSize: 1 }, (r) => r.totalSize >= 3);
    expect(first.nextPageToken).not.toBe("");
    await listUntil({ tenant: b }, (r) => r.totalSize >= 1);
    const replayed = await rpc("ListTasks", {
      tenant: b,
      pageSize: 5,
      pageToken: first.nextPageToken,
    });
    const ids = new Set(
      ((replayed.body.result ?? { tasks: [] }) as { tasks: Json[] }).tasks.map((t) => t.contextId),
    );
    const ofA = await rpc("ListTasks", { tenant: a, pageSize: 5 });
    for (const task of (ofA.body.result as { tasks: Json[] }).tasks) {
      expect(ids.has(task.contextId)).toBe(false);
    }
  });
});

describe("what is accepted is kept exactly", () => {
  it("a peer's task with a relative file URL still reads: only a client's request is held to absolute URLs", () => {
    const task = taskFromV1(
      V1Task.parse({
        id: "t",
        contextId: "c",
        status: { state: "TASK_STATE_COMPLETED" },
        artifacts: [{ artifactId: "a", parts: [{ url: "/files/report.pdf" }] }],
      }),
    );
    expect(task.artifacts[0]?.parts[0]).toMatchObject({ content: { url: "/files/report.pdf" } });
  });

  it("text, data and metadata with NUL, lone surrogates, emoji and odd keys read back unchanged", async () => {
    const odd = "a\u0000b\ud800c\udfffd\u{1F600}e\u202Ef\r\n";
    const metadata = { [odd]: odd, constructor: { prototype: 1 }, "": [odd] };
    const task = await send(odd, {
      metadata,
      parts: [{ text: odd }, { data: { [odd]: [odd, null, 1e308, -0] } }],
    });
    const got = await rpc("GetTask", { id: task.id });
    const first = (got.body.result as { history: Json[] }).history[0] as {
      parts: Json[];
      metadata: Json;
    };
    expect(first.parts).toEqual([{ text: odd }, { data: { [odd]: [odd, null, 1e308, 0] } }]);
    const { "edgelink/timestamp": _, ...kept } = first.metadata;
    expect(kept).toEqual(metadata);
  });
});

describe("bodies over the limit without a Content-Length (chunked)", () => {
  const chunked = () => {
    const chunk = new TextEncoder().encode(`${"x".repeat(64 * 1024 - 1)} `);
    let sent = 0;
    const limit = 1024 * 1024;
    return new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent > limit) return controller.close();
        sent += chunk.byteLength;
        controller.enqueue(chunk);
      },
    });
  };

  it.each([
    ["JSON-RPC", "/", -32600],
    ["HTTP+JSON", "/message:send", 413],
    ["chat", "/chat", 413],
  ] as const)("%s: 413 once the stream passes the limit", async (_, path, code) => {
    const response = await SELF.fetch(`${BASE}${path}`, {
      method: "POST",
      headers: { "Content-Type": "application/json", "A2A-Version": "1.0" },
      body: chunked(),
      duplex: "half",
    } as RequestInit);
    expect(response.status).toBe(413);
    const error = ((await response.json()) as Json).error as { code: number; message: string };
    expect(error.code).toBe(code);
    expect(error.message).toContain("limit");
  });
});
