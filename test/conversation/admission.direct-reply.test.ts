import { env, runInDurableObject, SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { contextObjectName } from "../../src/storage/ids";
import { parseChat } from "../support/chat-sse";
import { BASE, parseSse, rest, rpc, userMessage } from "../support/helpers";

type Json = Record<string, unknown>;
const V1 = { "A2A-Version": "1.0" };
const V03 = { "A2A-Version": "0.3" };

// The demo agent's `reply` hook answers "ping" with "pong" and lets everything else through.
const v03Message = (text: string, extra: Json = {}): Json => ({
  kind: "message",
  messageId: `d-${crypto.randomUUID()}`,
  role: "user",
  parts: [{ kind: "text", text }],
  ...extra,
});

/** The tasks a conversation holds: a direct reply must leave none. */
async function tasksOf(contextId: string): Promise<Json[]> {
  const { body } = await rpc("ListTasks", { contextId });
  return (body.result as Json).tasks as Json[];
}

/** Tables in the conversation's object: 0 while nothing was ever written. */
async function tablesOf(contextId: string): Promise<number> {
  const ns = env.EDGELINK_CONTEXT;
  const stub = ns.get(ns.idFromName(contextObjectName("", contextId)));
  return runInDurableObject(stub, (_instance, state) =>
    Number(state.storage.sql.exec("SELECT count(*) AS n FROM sqlite_master").one().n),
  );
}

async function stream(path: string, body: Json, headers: Record<string, string>) {
  const response = await SELF.fetch(`${BASE}${path}`, {
    method: "POST",
    headers: { "Content-Type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  expect(response.headers.get("content-type")).toMatch(/text\/event-stream/);
  return parseSse(await response.text());
}

describe("direct Message responses (A2A §3.1.1)", () => {
  it("JSON-RPC v1.0: SendMessage returns {message}, and no task is written", async () => {
    const { status, body } = await rpc("SendMessage", { message: userMessage("ping") });
    expect(status).toBe(200);
    const result = body.result as Json;
    expect(Object.keys(result)).toEqual(["message"]);
    expect(result.message).toMatchObject({ role: "ROLE_AGENT", parts: [{ text: "pong" }] });
    // The conversation's id was issued for the reply, though nothing is stored under it.
    const contextId = (result.message as Json).contextId as string;
    expect(contextId).toMatch(/^c\./);
    expect((result.message as Json).taskId).toBeUndefined();
    expect(await tasksOf(contextId)).toEqual([]);
    // Nothing at all was written: not even the object's schema, nor a history.
    expect(await tablesOf(contextId)).toBe(0);
    expect((await rest("GET", `/contexts/${contextId}/history`)).status).toBe(404);
    // Anything else in the same conversation still gets a task.
    const other = await rpc("SendMessage", { message: userMessage("not ping", { contextId }) });
    expect((other.body.result as Json).task).toMatchObject({ contextId });
    expect(await tasksOf(contextId)).toHaveLength(1);
  });

  it("JSON-RPC v0.3: message/send returns the bare message (kind: message)", async () => {
    const { body } = await rpc("message/send", { message: v03Message("ping") }, { version: null });
    expect(body.result).toMatchObject({
      kind: "message",
      role: "agent",
      parts: [{ kind: "text", text: "pong" }],
    });
    expect(typeof (body.result as Json).contextId).toBe("string");
  });

  it("HTTP+JSON, both versions: POST /message:send returns the message", async () => {
    const v1 = await rest("POST", "/message:send", { message: userMessage("ping") }, V1);
    expect(v1.status).toBe(200);
    expect(v1.body.message).toMatchObject({ role: "ROLE_AGENT", parts: [{ text: "pong" }] });
    expect(v1.body.task).toBeUndefined();
    const v03 = await rest("POST", "/message:send", { message: v03Message("ping") }, V03);
    expect(v03.body).toMatchObject({ kind: "message", role: "agent", parts: [{ text: "pong" }] });
  });

  it("returnImmediately has no effect on a direct reply", async () => {
    const { body } = await rpc("SendMessage", {
      message: userMessage("ping"),
      configuration: { returnImmediately: true },
    });
    expect((body.result as Json).message).toMatchObject({ parts: [{ text: "pong" }] });
  });

  it("SendStreamingMessage: exactly one message event, then the stream ends (JSON-RPC v1, REST v0.3)", async () => {
    const rpcEvents = await stream(
      "/",
      {
        jsonrpc: "2.0",
        id: 4,
        method: "SendStreamingMessage",
        params: { message: userMessage("ping") },
      },
      V1,
    );
    expect(rpcEvents).toHaveLength(1);
    expect(rpcEvents[0]?.data).toMatchObject({
      jsonrpc: "2.0",
      id: 4,
      result: { message: { role: "ROLE_AGENT", parts: [{ text: "pong" }] } },
    });
    const restEvents = await stream("/message:stream", { message: v03Message("ping") }, V03);
    expect(restEvents).toHaveLength(1);
    expect(restEvents[0]?.data).toMatchObject({ kind: "message", parts: [{ text: "pong" }] });
  });

  it("a message to an existing task goes to the task, never to the reply hook", async () => {
    const first = await rpc("SendMessage", { message: userMessage("hello") });
    const task = (first.body.result as Json).task as Json;
    expect((task.status as Json).state).toBe("TASK_STATE_INPUT_REQUIRED");
    const next = await rpc("SendMessage", {
      message: userMessage("ping", { taskId: task.id, contextId: task.contextId }),
    });
    const resumed = (next.body.result as Json).task as Json;
    expect(resumed.id).toBe(task.id);
    expect((resumed.status as Json).state).toBe("TASK_STATE_COMPLETED");
  });

  it("N1 N2: the chat endpoint streams the reply as start, chunk, done (no task)", async () => {
    const response = await SELF.fetch(`${BASE}/chat`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ message: "ping" }),
    });
    const frames = parseChat(await response.text());
    expect(frames.map((f) => f.event)).toEqual(["start", "chunk", "done"]);
    expect(frames[0]?.data).toMatchObject({ taskId: null });
    expect(frames[1]?.data).toEqual({ content: "pong" });
    expect(frames[2]?.data).toMatchObject({ taskId: null, state: "completed" });
    const sessionId = frames[0]?.data.sessionId as string;
    expect(typeof sessionId).toBe("string");
    expect(await tasksOf(sessionId)).toEqual([]);
  });
});
