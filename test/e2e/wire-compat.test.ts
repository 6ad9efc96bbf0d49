/**
 * End-to-end wire tests without the v1.0 SDK client: raw HTTP against the demo agent on a
 * real local Worker. Covers what an SDK never sends (malformed JSON, unknown versions),
 * the v0.3 compatibility surface (no A2A-Version header, `kind` shapes, lower-case
 * states, the legacy card path), and the SDK's own v0.3 compat client.
 *
 * Catalogue IDs: /work/shared/spec/features.md.
 */
import { TaskState } from "@a2a-js/sdk";
import {
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
} from "@a2a-js/sdk/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { artifactNamed, asTask, collect, describeEvent, textOf, textRequest } from "./support/sdk";
import { type DemoAgent, startDemoAgent } from "./support/worker";

let agent: DemoAgent;

beforeAll(async () => {
  agent = await startDemoAgent();
});

afterAll(async () => {
  await agent?.stop();
});

// Raw wire JSON, navigated freely in assertions (a wrong path fails the assertion anyway).
// biome-ignore lint/suspicious/noExplicitAny: untyped JSON from the wire
type Json = Record<string, any>;

/** POSTs a JSON-RPC body (an object, or raw text to send as is) to the endpoint `/`. */
async function rpc(
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; contentType: string; json: Json }> {
  const response = await fetch(`${agent.baseUrl}/`, {
    method: "POST",
    headers: { "Content-Type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  return {
    status: response.status,
    contentType: response.headers.get("Content-Type") ?? "",
    json: (await response.json()) as Json,
  };
}

/** A v0.3 `message/send` request as a v0.3 client (no A2A-Version header) sends it. */
function v03Send(id: string | number, text: string, extra: Json = {}): Json {
  return {
    jsonrpc: "2.0",
    id,
    method: "message/send",
    params: {
      message: {
        kind: "message",
        messageId: crypto.randomUUID(),
        role: "user",
        parts: [{ kind: "text", text }],
        ...extra,
      },
    },
  };
}

/** The google.rpc.ErrorInfo among error details, if any. */
function errorInfo(details: unknown): Json | undefined {
  if (!Array.isArray(details)) return undefined;
  return details.find((d: Json) => d?.["@type"] === "type.googleapis.com/google.rpc.ErrorInfo");
}

const v03Text = (parts: Json[] | undefined) =>
  (parts ?? []).map((p) => (p.kind === "text" ? p.text : "")).join("");

/** Parses a whole SSE body into its frames (`id:` and JSON `data:`); comments are skipped. */
function sseFrames(body: string): { id: string | undefined; data: Json }[] {
  return body
    .split(/\n\n/)
    .map((frame) => {
      const lines = frame.split("\n");
      const id = lines
        .find((l) => l.startsWith("id:"))
        ?.slice(3)
        .trim();
      const data = lines
        .filter((l) => l.startsWith("data:"))
        .map((l) => l.slice(5).trim())
        .join("\n");
      return { id, data };
    })
    .filter((f) => f.data !== "")
    .map((f) => ({ id: f.id, data: JSON.parse(f.data) as Json }));
}

const sseData = (body: string): Json[] => sseFrames(body).map((f) => f.data);

describe("agent cards (A2)", () => {
  it("A2 /.well-known/agent-card.json is the v1.0 card, cacheable with an ETag (§8.6)", async () => {
    const response = await fetch(`${agent.baseUrl}/.well-known/agent-card.json`);
    expect(response.status).toBe(200);
    expect(response.headers.get("Content-Type")).toMatch(/^application\/json/);
    expect(response.headers.get("Cache-Control")).toMatch(/max-age=\d+/);
    const card = (await response.json()) as Json;
    expect(card.name).toBe("Edgelink demo agent");
    expect(card.supportedInterfaces).toEqual([
      { url: `${agent.baseUrl}/`, protocolBinding: "JSONRPC", protocolVersion: "1.0" },
      { url: agent.baseUrl, protocolBinding: "HTTP+JSON", protocolVersion: "1.0" },
    ]);
    // v0.3-only fields stay out of the v1 card.
    expect(card.protocolVersion).toBeUndefined();
    expect(card.url).toBeUndefined();

    const etag = response.headers.get("ETag");
    expect(etag).toMatch(/^".+"$/);
    const again = await fetch(`${agent.baseUrl}/.well-known/agent-card.json`, {
      headers: { "If-None-Match": etag ?? "" },
    });
    expect(again.status).toBe(304);
  });

  it("A2 /.well-known/agent.json is the v0.3 card for v0.3 peers", async () => {
    const response = await fetch(`${agent.baseUrl}/.well-known/agent.json`);
    expect(response.status).toBe(200);
    expect(response.headers.get("Content-Type")).toMatch(/^application\/json/);
    const card = (await response.json()) as Json;
    expect(card.protocolVersion).toBe("0.3.0");
    expect(card.name).toBe("Edgelink demo agent");
    expect(card.url).toBe(`${agent.baseUrl}/`);
    expect(card.preferredTransport).toBe("JSONRPC");
    expect(card.capabilities.streaming).toBe(true);
    expect(card.capabilities.pushNotifications).toBe(true);
    expect(card.supportsAuthenticatedExtendedCard).toBe(false);
    expect(card.skills.map((s: Json) => s.id)).toEqual([
      "echo",
      "greet",
      "recap",
      "count",
      "tools",
    ]);
    // v1-only fields stay out of the v0.3 card.
    expect(card.supportedInterfaces).toBeUndefined();
  });
});

describe("v0.3 JSON-RPC (no A2A-Version header)", () => {
  it("message/send with v0.3 shapes returns a v0.3 task, completed, with its echo artifact", async () => {
    const { status, json } = await rpc(v03Send("v03-1", "ping over v0.3"));
    expect(status).toBe(200);
    expect(json.jsonrpc).toBe("2.0");
    expect(json.id).toBe("v03-1");
    expect(json.error).toBeUndefined();
    const task = json.result;
    // v0.3 returns the task bare (v1 would wrap it as {task}).
    expect(task.kind).toBe("task");
    expect(task.status.state).toBe("completed");
    expect(task.artifacts).toHaveLength(1);
    expect(task.artifacts[0].name).toBe("echo");
    expect(task.artifacts[0].parts.every((p: Json) => p.kind === "text")).toBe(true);
    expect(v03Text(task.artifacts[0].parts)).toBe("You said: ping over v0.3");
    expect(task.history[0].kind).toBe("message");
    expect(task.history[0].role).toBe("user");
    expect(v03Text(task.history[0].parts)).toBe("ping over v0.3");
  });

  it("B2 'hi' is input-required in v0.3 spelling; the reply with taskId completes it", async () => {
    // (The demo agent treats "hi" as a greeting, so this is the multi-turn path.)
    const first = await rpc(v03Send(7, "hi"));
    expect(first.json.id).toBe(7);
    const task = first.json.result;
    expect(task.kind).toBe("task");
    expect(task.status.state).toBe("input-required");
    expect(task.status.message.kind).toBe("message");
    expect(task.status.message.role).toBe("agent");
    expect(v03Text(task.status.message.parts)).toBe("Hi! What's your name?");

    const second = await rpc(v03Send(8, "Linus", { taskId: task.id, contextId: task.contextId }));
    expect(second.json.result.id).toBe(task.id);
    expect(second.json.result.status.state).toBe("completed");
    const greeting = second.json.result.artifacts.find((a: Json) => a.name === "greeting");
    expect(v03Text(greeting?.parts)).toBe("Nice to meet you, Linus!");

    const fetched = await rpc({
      jsonrpc: "2.0",
      id: 9,
      method: "tasks/get",
      params: { id: task.id },
    });
    expect(fetched.json.result.kind).toBe("task");
    expect(fetched.json.result.status.state).toBe("completed");
  });

  it("D4 message/stream frames v0.3 events (kind, final) over SSE", async () => {
    const body = { ...v03Send("s1", "stream in v0.3"), method: "message/stream" };
    const response = await fetch(`${agent.baseUrl}/`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "text/event-stream" },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(20_000),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("Content-Type")).toMatch(/^text\/event-stream/);
    const events = sseData(await response.text());
    expect(events.every((e) => e.jsonrpc === "2.0" && e.id === "s1")).toBe(true);
    const results = events.map((e) => e.result);
    expect(results[0].kind).toBe("task");
    expect(results[0].status.state).toBe("submitted");
    const chunks = results.filter((r) => r.kind === "artifact-update");
    expect(chunks.map((c) => v03Text(c.artifact.parts)).join("")).toBe("You said: stream in v0.3");
    const last = results.at(-1);
    expect(last.kind).toBe("status-update");
    expect(last.status.state).toBe("completed");
    expect(last.final).toBe(true);
    const statuses = results.filter((r) => r.kind === "status-update");
    expect(statuses.slice(0, -1).every((s) => s.final === false)).toBe(true);
  });

  it("A2 the SDK's own v0.3 compat client discovers agent.json and completes a task", async () => {
    const options = ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ legacyCompat: { enabled: true } })],
      cardResolver: new DefaultAgentCardResolver({ legacyCompat: { enabled: true } }),
      preferredTransports: ["JSONRPC"],
    });
    const client = await new ClientFactory(options).createFromUrl(
      agent.baseUrl,
      "/.well-known/agent.json",
    );
    expect(client.protocolVersion).toBe("0.3");

    const task = asTask(await client.sendMessage(textRequest("legacy client says hey there")));
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(textOf(artifactNamed(task, "echo")?.parts)).toBe(
      "You said: legacy client says hey there",
    );

    const events = await collect(
      client.sendMessageStream(textRequest("legacy stream"), {
        signal: AbortSignal.timeout(20_000),
      }),
    );
    const labels = events.map(describeEvent);
    expect(labels[0]).toBe("task:TASK_STATE_SUBMITTED");
    expect(labels.at(-1)).toBe("status:TASK_STATE_COMPLETED:");
  });
});

describe("HTTP+JSON over raw fetch", () => {
  it("N7 an SSE reconnect with Last-Event-ID replays exactly the events after it", async () => {
    const response = await fetch(`${agent.baseUrl}/message:stream`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "text/event-stream" },
      body: JSON.stringify({
        message: {
          messageId: crypto.randomUUID(),
          role: "ROLE_USER",
          parts: [{ text: "replay these five words" }],
        },
      }),
      signal: AbortSignal.timeout(20_000),
    });
    expect(response.status).toBe(200);
    const original = sseFrames(await response.text());
    // task, working, one chunk per word of "You said: replay these five words", completed
    expect(original.map((f) => Object.keys(f.data)[0])).toEqual([
      "task",
      "statusUpdate",
      ...Array(6).fill("artifactUpdate"),
      "statusUpdate",
    ]);
    expect(original.every((f) => f.id !== undefined && /^\d+$/.test(f.id))).toBe(true);
    const taskId = original[0]?.data.task.id as string;

    // Reconnect as if the connection dropped after the third frame.
    const resumeAfter = original[2]?.id ?? "";
    const replay = await fetch(`${agent.baseUrl}/tasks/${encodeURIComponent(taskId)}:subscribe`, {
      method: "POST",
      headers: { Accept: "text/event-stream", "Last-Event-ID": resumeAfter },
      signal: AbortSignal.timeout(20_000),
    });
    expect(replay.status).toBe(200);
    const replayed = sseFrames(await replay.text());
    expect(replayed).toEqual(original.slice(3));
  });

  it("B7 B9 CancelTask over HTTP+JSON takes a reason in its body and keeps it", async () => {
    const sent = await fetch(`${agent.baseUrl}/message:send`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({
        message: {
          messageId: crypto.randomUUID(),
          role: "ROLE_USER",
          parts: [{ text: "count 30" }],
        },
        configuration: { returnImmediately: true },
      }),
    });
    const task = ((await sent.json()) as Json).task;
    expect(task.status.state).toBe("TASK_STATE_WORKING");

    const canceled = await fetch(`${agent.baseUrl}/tasks/${encodeURIComponent(task.id)}:cancel`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ metadata: { reason: "raw reason" } }),
    });
    expect(canceled.status).toBe(200);
    const body = (await canceled.json()) as Json;
    expect(body.status.state).toBe("TASK_STATE_CANCELED");
    expect(body.metadata.cancelReason).toBe("raw reason");
  });
});

describe("protocol errors on the wire", () => {
  it("A2A-Version 9.9 is refused with JSON-RPC error -32009 (VersionNotSupported)", async () => {
    const { status, json } = await rpc(
      { jsonrpc: "2.0", id: 42, method: "GetTask", params: { id: "whatever" } },
      { "A2A-Version": "9.9" },
    );
    expect(status).toBe(200);
    expect(json.jsonrpc).toBe("2.0");
    expect(json.result).toBeUndefined();
    expect(json.error.code).toBe(-32009);
    expect(json.error.message).toMatch(/9\.9/);
    expect(errorInfo(json.error.data)?.reason).toBe("VERSION_NOT_SUPPORTED");
  });

  it("A2A-Version 9.9: the error response echoes the request id (JSON-RPC 2.0 §5)", async () => {
    const { json } = await rpc(
      { jsonrpc: "2.0", id: 42, method: "GetTask", params: { id: "whatever" } },
      { "A2A-Version": "9.9" },
    );
    expect(json.error.code).toBe(-32009);
    expect(json.id).toBe(42);
  });

  it("HTTP+JSON: A2A-Version 9.9 is 400 FAILED_PRECONDITION / VERSION_NOT_SUPPORTED", async () => {
    const response = await fetch(`${agent.baseUrl}/tasks?A2A-Version=9.9`);
    expect(response.status).toBe(400);
    const json = (await response.json()) as Json;
    expect(json.error.code).toBe(400);
    expect(json.error.status).toBe("FAILED_PRECONDITION");
    expect(errorInfo(json.error.details)?.reason).toBe("VERSION_NOT_SUPPORTED");
  });

  it("a malformed JSON body is a JSON-RPC parse error -32700 with id null", async () => {
    const { status, json } = await rpc('{"jsonrpc":"2.0","id":1,"method":"SendMessage",');
    expect(status).toBe(200);
    expect(json.jsonrpc).toBe("2.0");
    expect(json.id).toBeNull();
    expect(json.result).toBeUndefined();
    expect(json.error.code).toBe(-32700);
  });

  it("a v0.3 method under A2A-Version 1.0 is MethodNotFound (-32601)", async () => {
    const { json } = await rpc(v03Send(5, "hello"), { "A2A-Version": "1.0" });
    expect(json.id).toBe(5);
    expect(json.error.code).toBe(-32601);
    expect(json.error.message).toMatch(/message\/send/);
  });

  it("A3 push-config methods are served, as the card says: an unknown task is TaskNotFound", async () => {
    const { json } = await rpc({
      jsonrpc: "2.0",
      id: "p-1",
      method: "CreateTaskPushNotificationConfig",
      params: { taskId: "t", url: "https://example.com/hook" },
    });
    expect(json.id).toBe("p-1");
    expect(json.error.code).toBe(-32001);
  });

  it("A3 GetExtendedAgentCard is UnsupportedOperation when the card says extendedAgentCard: false", async () => {
    const { json } = await rpc({ jsonrpc: "2.0", id: 11, method: "GetExtendedAgentCard" });
    expect(json.id).toBe(11);
    expect(json.error.code).toBe(-32004);

    const response = await fetch(`${agent.baseUrl}/extendedAgentCard`);
    expect(response.status).toBe(400);
    const rest = (await response.json()) as Json;
    expect(rest.error.status).toBe("FAILED_PRECONDITION");
    expect(errorInfo(rest.error.details)?.reason).toBe("UNSUPPORTED_OPERATION");
  });

  it("B9 v0.3 tasks/cancel of an unknown task is TaskNotFound (-32001)", async () => {
    const { json } = await rpc({
      jsonrpc: "2.0",
      id: "c-1",
      method: "tasks/cancel",
      params: { id: "no-such-task" },
    });
    expect(json.id).toBe("c-1");
    expect(json.error.code).toBe(-32001);
    expect(errorInfo(json.error.data)?.reason).toBe("TASK_NOT_FOUND");
  });
});
