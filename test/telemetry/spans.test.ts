import {
  evictDurableObject,
  runDurableObjectAlarm,
  runInDurableObject,
  SELF,
} from "cloudflare:test";
import type { ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { describe, expect, it } from "vitest";
import * as z from "zod";
import { tool } from "../../src/agent/tool";
import { ProviderError } from "../../src/providers/base/errors";
import { fallback } from "../../src/providers/fallback";
import { withRetry } from "../../src/providers/retry";
import { fakeModel } from "../../src/testing/fake-model";
import { withAgent } from "../support/agent-override";
import { rpc, send, sleep, userMessage, waitForState } from "../support/helpers";
import { callerTrace, parentOf, recordSpans, stubOf } from "./support";

type Json = Record<string, unknown>;

const { exporter, spansOf } = recordSpans();

async function until<T>(probe: () => T | undefined | Promise<T | undefined>, ms = 5000) {
  const end = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error("timed out waiting");
    await sleep(25);
  }
}

/** The attribute types the conventions give each name Edgelink emits (checked on every span). */
const TYPES: Record<string, "string" | "number" | "string[]"> = {
  "gen_ai.operation.name": "string",
  "gen_ai.provider.name": "string",
  "gen_ai.request.model": "string",
  "gen_ai.response.model": "string",
  "gen_ai.response.finish_reasons": "string[]",
  "gen_ai.response.time_to_first_chunk": "number",
  "gen_ai.usage.input_tokens": "number",
  "gen_ai.usage.output_tokens": "number",
  "gen_ai.conversation.id": "string",
  "gen_ai.agent.name": "string",
  "gen_ai.tool.name": "string",
  "gen_ai.tool.call.id": "string",
  "gen_ai.tool.type": "string",
  "a2a.method.name": "string",
  "a2a.task.id": "string",
  "a2a.task.state": "string",
  "a2a.tenant": "string",
  "a2a.protocol.version": "string",
  "error.type": "string",
  "http.request.method": "string",
  "http.response.status_code": "number",
};

function checkTypes(spans: ReadableSpan[]) {
  for (const span of spans) {
    for (const [name, value] of Object.entries(span.attributes)) {
      const want = TYPES[name];
      if (!want) continue;
      const got = Array.isArray(value)
        ? `${typeof value[0]}[]`
        : Number.isInteger(value) && want === "number"
          ? "number"
          : typeof value;
      expect(`${span.name} ${name}: ${got}`).toBe(`${span.name} ${name}: ${want}`);
    }
  }
}

const tools = {
  add: tool({
    description: "Adds two numbers",
    input: z.object({ a: z.number(), b: z.number() }),
    run: ({ a, b }) => a + b,
  }),
  broken: tool({
    description: "Always fails",
    input: z.object({}),
    run: () => {
      throw new Error("out of order");
    },
  }),
};

describe("OpenTelemetry traces", () => {
  it("T1 a model turn with two tool calls is one trace: server, invoke_agent, two chat calls, two tools", async () => {
    const { contextId } = (await send("start")) as { contextId: string };
    const model = fakeModel(
      [
        {
          toolCalls: [
            { name: "add", input: { a: 2, b: 3 }, id: "call_a" },
            { name: "broken", input: {}, id: "call_b" },
          ],
        },
        "The sum is 5.",
      ],
      { provider: "openai", model: "gpt-test" },
    );
    await withAgent(stubOf(contextId), () => ({ handler: undefined, model, tools }));
    const caller = callerTrace();
    const { body } = await rpc(
      "SendMessage",
      { message: userMessage("add 2 and 3", { contextId }) },
      { headers: { traceparent: caller.traceparent } },
    );
    const task = body.result as { task: Json };
    expect(task.task.status).toMatchObject({ state: "TASK_STATE_COMPLETED" });
    const spans = await until(() => {
      const found = spansOf(caller.traceId);
      return found.length >= 6 ? found : undefined;
    });
    const byName = (name: string) => spans.filter((s) => s.name === name);
    const [server] = byName("SendMessage");
    expect(server).toBeDefined();
    expect(server?.kind).toBe(1); // SERVER
    expect(parentOf(server as ReadableSpan)).toBe(caller.spanId);
    expect(server?.attributes).toMatchObject({
      "a2a.method.name": "SendMessage",
      "a2a.protocol.version": "1.0",
      "a2a.task.state": "TASK_STATE_COMPLETED",
      "gen_ai.conversation.id": contextId,
      "http.response.status_code": 200,
    });
    expect(server?.attributes["a2a.task.id"]).toBe(task.task.id);

    const [agent] = spans.filter((s) => s.name.startsWith("invoke_agent "));
    expect(parentOf(agent as ReadableSpan)).toBe(server?.spanContext().spanId);
    expect(agent?.attributes).toMatchObject({
      "gen_ai.operation.name": "invoke_agent",
      "gen_ai.conversation.id": contextId,
      "a2a.task.id": task.task.id,
      "a2a.task.state": "completed",
    });

    const chats = byName("chat gpt-test");
    expect(chats).toHaveLength(2);
    for (const chat of chats) {
      expect(chat.kind).toBe(2); // CLIENT
      expect(parentOf(chat)).toBe(agent?.spanContext().spanId);
      expect(chat.attributes).toMatchObject({
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "openai",
        "gen_ai.request.model": "gpt-test",
        "gen_ai.response.model": "gpt-test",
      });
      // No message content unless the operator opts in.
      expect(chat.attributes["gen_ai.input.messages"]).toBeUndefined();
    }
    expect(chats.map((c) => c.attributes["gen_ai.response.finish_reasons"])).toEqual([
      ["tool_calls"],
      ["stop"],
    ]);

    const add = byName("execute_tool add")[0];
    const broken = byName("execute_tool broken")[0];
    expect(parentOf(add as ReadableSpan)).toBe(agent?.spanContext().spanId);
    expect(add?.attributes).toMatchObject({
      "gen_ai.operation.name": "execute_tool",
      "gen_ai.tool.name": "add",
      "gen_ai.tool.call.id": "call_a",
    });
    expect(add?.status.code).not.toBe(2);
    expect(broken?.status.code).toBe(2); // ERROR
    expect(broken?.attributes["error.type"]).toBe("ToolError");
    checkTypes(spans);
  });

  it("T2 a failing provider marks its call's span an error with error.type, and the run failed", async () => {
    const { contextId } = (await send("start")) as { contextId: string };
    const failure = new ProviderError({
      provider: "openai",
      kind: "http",
      status: 503,
      message: "overloaded",
      retryable: false,
    });
    const model = fakeModel([failure], { provider: "openai", model: "gpt-down" });
    await withAgent(stubOf(contextId), () => ({ handler: undefined, model, tools: {} }));
    const caller = callerTrace();
    await rpc(
      "SendMessage",
      { message: userMessage("hello?", { contextId }) },
      { headers: { traceparent: caller.traceparent } },
    );
    const chat = await until(() => spansOf(caller.traceId).find((s) => s.name === "chat gpt-down"));
    expect(chat.status.code).toBe(2);
    expect(chat.attributes["error.type"]).toBe("503");
    expect(chat.events.some((e) => e.name === "exception")).toBe(true);
    const agent = await until(() =>
      spansOf(caller.traceId).find((s) => s.name.startsWith("invoke_agent ")),
    );
    expect(agent.attributes["a2a.task.state"]).toBe("failed");
    expect(agent.status.code).toBe(2);
  });

  it("T2 a provider error's text stays off the span without the opt-in: status and exception carry its kind, never a token", async () => {
    const { contextId } = (await send("start")) as { contextId: string };
    const failure = new ProviderError({
      provider: "openai",
      kind: "http",
      status: 401,
      message: "invalid key; request had Authorization: Bearer sk-live-0123456789abcdef",
      retryable: false,
    });
    const model = fakeModel([failure], { provider: "openai", model: "gpt-leaky" });
    await withAgent(stubOf(contextId), () => ({ handler: undefined, model, tools: {} }));
    const caller = callerTrace();
    await rpc(
      "SendMessage",
      { message: userMessage("hello?", { contextId }) },
      { headers: { traceparent: caller.traceparent } },
    );
    const chat = await until(() =>
      spansOf(caller.traceId).find((s) => s.name === "chat gpt-leaky"),
    );
    expect(chat.status.code).toBe(2);
    expect(chat.attributes["error.type"]).toBe("401");
    const exception = chat.events.find((e) => e.name === "exception");
    expect(exception).toBeDefined();
    const everything = JSON.stringify({ status: chat.status, events: chat.events });
    expect(everything).not.toContain("sk-live");
    expect(everything).not.toContain("invalid key");
    expect(chat.status.message).toBe("ProviderError (401)");
  });

  it("T6 a retry and a fallback inside one model call are events of its one span", async () => {
    const { contextId } = (await send("start")) as { contextId: string };
    const overloaded = () =>
      new ProviderError({ provider: "openai", kind: "http", status: 503, message: "busy" });
    const fast = { maxAttempts: 2, initialDelayMs: 1, maxDelayMs: 1 };
    const first = withRetry(
      fakeModel([overloaded(), overloaded()], { provider: "openai", model: "gpt-a" }),
      fast,
    );
    const second = withRetry(
      fakeModel([overloaded(), "from b"], { provider: "anthropic", model: "claude-b" }),
      fast,
    );
    const model = fallback([first, second]);
    await withAgent(stubOf(contextId), () => ({ handler: undefined, model, tools: {} }));
    const caller = callerTrace();
    await rpc(
      "SendMessage",
      { message: userMessage("anyone?", { contextId }) },
      { headers: { traceparent: caller.traceparent } },
    );
    const chats = await until(() => {
      const found = spansOf(caller.traceId).filter((s) => s.name.startsWith("chat "));
      return found.length ? found : undefined;
    });
    expect(chats).toHaveLength(1);
    const [chat] = chats;
    expect(chat?.status.code).not.toBe(2);
    expect(chat?.attributes["gen_ai.response.model"]).toBe("claude-b");
    expect(chat?.events.map((e) => [e.name, e.attributes?.["error.type"]])).toEqual([
      // gpt-a gave up (after its own retry): the call fell back to claude-b, which
      // failed once and answered when retried.
      ["edgelink.model.fallback", "503"],
      ["edgelink.model.retry", "503"],
    ]);
  });

  it("T3 a delegated child task's spans share the parent's trace id", async () => {
    const { contextId } = (await send("start")) as { contextId: string };
    const stub = stubOf(contextId);
    // The peer is this same Worker, reached as a binding of the parent's env.
    // Runs get their env from the object's handler-runs part (white-box: a binding added here).
    await runInDurableObject(stub, (instance) => {
      const runs = (instance as unknown as { runs: { env: Json } }).runs;
      Object.defineProperty(runs, "env", {
        configurable: true,
        value: { ...runs.env, PEER: SELF },
      });
    });
    await withAgent(stub, () => ({
      handler: async (ctx: {
        env: Json;
        delegate: (t: unknown, m: string) => { answer(): Promise<string> };
      }) => `child said: ${await ctx.delegate(ctx.env.PEER, "hello child").answer()}`,
    }));
    const caller = callerTrace();
    const { body } = await rpc(
      "SendMessage",
      { message: userMessage("delegate please", { contextId }) },
      { headers: { traceparent: caller.traceparent } },
    );
    expect((body.result as { task: Json }).task.status).toMatchObject({
      state: "TASK_STATE_COMPLETED",
    });
    const spans = await until(() => {
      const found = spansOf(caller.traceId);
      const child = found.filter((s) => s.name.startsWith("invoke_agent ") && s.kind === 0);
      return child.length >= 2 ? found : undefined;
    });
    const delegation = spans.find((s) => s.name.startsWith("invoke_agent binding:PEER"));
    expect(delegation?.kind).toBe(2); // CLIENT
    // The child's server span hangs under the delegation's client span.
    const childServer = spans.find(
      (s) =>
        s.attributes["a2a.method.name"] === "SendStreamingMessage" &&
        parentOf(s) === delegation?.spanContext().spanId,
    );
    expect(childServer?.kind).toBe(1); // SERVER
    const runs = spans.filter((s) => s.name.startsWith("invoke_agent ") && s.kind === 0);
    expect(new Set(runs.map((r) => r.attributes["gen_ai.conversation.id"])).size).toBe(2);
  });

  it("T4 a push retry after the object restarts keeps the task's trace id", async () => {
    const caller = callerTrace();
    const { body } = await rpc(
      "SendMessage",
      {
        message: userMessage("count 1"),
        configuration: { taskPushNotificationConfig: { url: "https://hooks.example.com/trace" } },
      },
      { headers: { traceparent: caller.traceparent } },
    );
    const task = (body.result as { task: Json }).task;
    const contextId = task.contextId as string;
    await waitForState(task.id as string, "TASK_STATE_COMPLETED");
    const attempts = () =>
      exporter
        .getFinishedSpans()
        .filter((s) => s.name === "POST webhook" && s.attributes["a2a.task.id"] === task.id);
    await until(() => (attempts().length >= 1 ? true : undefined), 10_000);
    // The receiver is unreachable (no network in the tests): the delivery is retried later,
    // by an object that starts again and knows nothing of the request.
    await evictDurableObject(stubOf(contextId));
    await until(async () => {
      // The retry is made due now rather than after its backoff (the restarted object's
      // first act), then the alarm delivers it.
      await runInDurableObject(stubOf(contextId), (_i, state) => {
        state.storage.sql.exec("UPDATE push_deliveries SET next_at = 0 WHERE state = 'pending'");
      });
      await runDurableObjectAlarm(stubOf(contextId));
      return attempts().some((s) => s.attributes["edgelink.push.attempt"] === 2) ? true : undefined;
    }, 15_000);
    const tried = attempts();
    expect(tried.length).toBeGreaterThanOrEqual(2);
    for (const attempt of tried) {
      expect(attempt.spanContext().traceId).toBe(caller.traceId);
      expect(attempt.kind).toBe(2);
      expect(attempt.status.code).toBe(2);
      expect(attempt.attributes["error.type"]).toBe("503");
    }
  }, 30_000);
});
