import { runInDurableObject, SELF } from "cloudflare:test";
import { trace } from "@opentelemetry/api";
import type { ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { describe, expect, it } from "vitest";
import * as z from "zod";
import { tool } from "../../src/agent/tool";
import type { CallOptions, Model, ModelRequest } from "../../src/providers/base/types";
import { openai } from "../../src/providers/openai/openai-chat";
import { fakeModel } from "../../src/testing/fake-model";
import { FakeProvider } from "../providers/fake-provider";
import { withAgent } from "../support/agent-override";
import { BASE, rest, rpc, send, sleep, userMessage } from "../support/helpers";
import { callerTrace, hex, parentOf, recordSpans, stubOf } from "./support";

type Json = Record<string, unknown>;

const { register, spansOf } = recordSpans();

const TRACESTATE = "edgelink=t61,vendor=abc";

/** A caller's trace, with a `tracestate` that must travel along with it. */
function tracedCaller() {
  const caller = callerTrace();
  return { ...caller, headers: { traceparent: caller.traceparent, tracestate: TRACESTATE } };
}
const traceparentOf = (span: ReadableSpan) =>
  `00-${span.spanContext().traceId}-${span.spanContext().spanId}-01`;

async function until<T>(probe: () => T | undefined | Promise<T | undefined>, ms = 5000) {
  const end = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error("timed out waiting");
    await sleep(25);
  }
}

/** A real OpenAI adapter whose HTTP goes to a fake provider (faked at the wire). */
function wiredModel(fake: FakeProvider, name = "gpt-4o-mini"): Model {
  const inner = openai({ model: name, apiKey: "sk-test", baseUrl: "https://fake.test/v1" });
  return {
    provider: inner.provider,
    model: inner.model,
    get capabilities() {
      return inner.capabilities;
    },
    streamBatches: (request: ModelRequest, options: CallOptions = {}) =>
      inner.streamBatches(request, { ...options, fetch: fake.fetch }),
  };
}

/** Installs a webhook receiver on a live context object's push dispatcher (white-box). */
async function receiveWebhooks(contextId: string): Promise<Request[]> {
  const got: Request[] = [];
  await runInDurableObject(stubOf(contextId), (instance) => {
    const dispatcher = (instance as unknown as { dispatcher: object }).dispatcher;
    Object.defineProperty(dispatcher, "fetchFn", {
      configurable: true,
      value: async (input: RequestInfo | URL, init?: RequestInit) => {
        got.push(new Request(input, init));
        return new Response(null, { status: 200 });
      },
    });
  });
  return got;
}

/** Puts keys on the env a context object's handler runs get (white-box). */
async function withRunEnv(contextId: string, extra: Json) {
  await runInDurableObject(stubOf(contextId), (instance) => {
    const runs = (instance as unknown as { runs: { env: Json } }).runs;
    Object.defineProperty(runs, "env", { configurable: true, value: { ...runs.env, ...extra } });
  });
}

/** Every attribute value of a span and of its events, as text. */
const valuesOf = (span: ReadableSpan) =>
  [
    span.status.message ?? "",
    ...Object.values(span.attributes),
    ...span.events.flatMap((e) => Object.values(e.attributes ?? {})),
  ].map((v) => (typeof v === "string" ? v : JSON.stringify(v)));

describe("trace context on the wire", () => {
  it("a provider request carries the request's trace id, the chat span's id and the caller's tracestate", async () => {
    const { contextId } = (await send("start")) as { contextId: string };
    const fake = new FakeProvider().reply({ fixture: "openai-chat/text-with-usage.sse" });
    await withAgent(stubOf(contextId), () => ({
      handler: undefined,
      model: wiredModel(fake),
      tools: {},
    }));
    const caller = tracedCaller();
    const { body } = await rpc(
      "SendMessage",
      { message: userMessage("hello provider", { contextId }) },
      { headers: caller.headers },
    );
    expect((body.result as { task: Json }).task.status).toMatchObject({
      state: "TASK_STATE_COMPLETED",
    });
    const chat = await until(() =>
      spansOf(caller.traceId).find((s) => s.name === "chat gpt-4o-mini"),
    );
    expect(chat.kind).toBe(2); // CLIENT
    expect(fake.requests).toHaveLength(1);
    const headers = fake.requests[0]?.headers as Headers;
    expect(headers.get("traceparent")).toBe(traceparentOf(chat));
    expect(headers.get("tracestate")).toBe(TRACESTATE);
  });

  it("a webhook delivery carries the task's trace id, its attempt span's id and the caller's tracestate", async () => {
    const { contextId } = (await send("start")) as { contextId: string };
    const got = await receiveWebhooks(contextId);
    const caller = tracedCaller();
    const { body } = await rpc(
      "SendMessage",
      {
        message: userMessage("count 1", { contextId }),
        configuration: { taskPushNotificationConfig: { url: "https://hooks.example.com/wire" } },
      },
      { headers: caller.headers },
    );
    const task = (body.result as { task: Json }).task;
    const attempts = () =>
      spansOf(caller.traceId).filter(
        (s) => s.name === "POST webhook" && s.attributes["a2a.task.id"] === task.id,
      );
    await until(() => (got.length >= 1 && attempts().length >= got.length ? true : undefined));
    const sent = got.map((r) => r.headers.get("traceparent"));
    const spans = new Set(attempts().map(traceparentOf));
    for (const parent of sent) expect(spans.has(parent as string)).toBe(true);
    for (const request of got) expect(request.headers.get("tracestate")).toBe(TRACESTATE);
    for (const attempt of attempts()) expect(attempt.kind).toBe(2); // CLIENT
  });

  it("a delegated A2A call carries the delegation span's id and the caller's tracestate to the peer", async () => {
    const { contextId } = (await send("start")) as { contextId: string };
    // The peer is this same Worker, reached as a binding of the runs' env: what it
    // receives as traceparent is the parent of its server span.
    await withRunEnv(contextId, { PEER: SELF });
    await withAgent(stubOf(contextId), () => ({
      handler: async (ctx: {
        env: Json;
        delegate: (t: unknown, m: string) => { answer(): Promise<string> };
      }) => `child said: ${await ctx.delegate(ctx.env.PEER, "hello child").answer()}`,
    }));
    const caller = tracedCaller();
    await rpc(
      "SendMessage",
      { message: userMessage("delegate please", { contextId }) },
      { headers: caller.headers },
    );
    const delegation = await until(() =>
      spansOf(caller.traceId).find((s) => s.name.startsWith("invoke_agent binding:PEER")),
    );
    expect(delegation.kind).toBe(2); // CLIENT
    const peer = await until(() =>
      spansOf(caller.traceId).find(
        (s) =>
          s.kind === 1 &&
          s.attributes["a2a.method.name"] === "SendStreamingMessage" &&
          parentOf(s) === delegation.spanContext().spanId,
      ),
    );
    expect(peer.spanContext().traceState?.serialize()).toBe(TRACESTATE);
  });
});

describe("spans of compaction and of the chat endpoint", () => {
  it("a history compaction is a compact_history span under the request's server span", async () => {
    const first = (await send("alpha")) as { contextId: string };
    for (const word of ["beta", "gamma"]) await send(word, { contextId: first.contextId });
    const caller = tracedCaller();
    const path = `/contexts/${encodeURIComponent(first.contextId)}/history:compact`;
    const compacted = await rest(
      "POST",
      path,
      { strategy: "recent", maxMessages: 2 },
      caller.headers,
    );
    expect(compacted.status).toBe(200);
    const compact = await until(() =>
      spansOf(caller.traceId).find((s) => s.name === "compact_history"),
    );
    const server = spansOf(caller.traceId).find((s) => s.kind === 1);
    expect(parentOf(server)).toBe(caller.spanId);
    expect(parentOf(compact)).toBe(server?.spanContext().spanId);
    expect(compact.attributes).toMatchObject({
      "edgelink.compaction.strategy": "recent",
      "edgelink.compaction.items": 3,
    });
  });

  it("the chat endpoint's request is a `chat stream` server span over the run", async () => {
    const caller = tracedCaller();
    const response = await SELF.fetch(`${BASE}/chat`, {
      method: "POST",
      headers: { "Content-Type": "application/json", ...caller.headers },
      body: JSON.stringify({ message: "chat traced" }),
    });
    expect(response.status).toBe(200);
    await response.text();
    const server = await until(() => spansOf(caller.traceId).find((s) => s.name === "chat stream"));
    expect(server.kind).toBe(1); // SERVER
    expect(parentOf(server)).toBe(caller.spanId);
    const run = await until(() =>
      spansOf(caller.traceId).find((s) => s.name.startsWith("invoke_agent ")),
    );
    expect(parentOf(run)).toBe(server.spanContext().spanId);
  });
});

describe("message content on spans", () => {
  const secretTools = (marker: string) => ({
    lookup: tool({
      description: "Looks a name up",
      input: z.object({ name: z.string() }),
      run: ({ name }) => `found ${name}`,
    }),
    refuse: tool({
      description: "Fails naming its input",
      input: z.object({ name: z.string() }),
      run: ({ name }) => {
        throw new Error(`no such person: ${name} (${marker})`);
      },
    }),
  });

  async function turn(marker: string, optIn: boolean) {
    const { contextId } = (await send("start")) as { contextId: string };
    if (optIn)
      await withRunEnv(contextId, { OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: "true" });
    const model = fakeModel(
      [
        {
          toolCalls: [
            { name: "lookup", input: { name: marker }, id: "call_1" },
            { name: "refuse", input: { name: marker }, id: "call_2" },
          ],
        },
        `The answer about ${marker}.`,
      ],
      { provider: "openai", model: "gpt-content" },
    );
    await withAgent(stubOf(contextId), () => ({
      handler: undefined,
      model,
      tools: secretTools(marker),
    }));
    const caller = tracedCaller();
    await rpc(
      "SendMessage",
      { message: userMessage(`tell me about ${marker}`, { contextId }) },
      { headers: caller.headers },
    );
    return until(() => {
      const spans = spansOf(caller.traceId);
      const done =
        spans.filter((s) => s.name === "chat gpt-content").length === 2 &&
        spans.some((s) => s.name.startsWith("invoke_agent "));
      return done ? spans : undefined;
    });
  }

  it("no span carries prompts, answers, tool arguments, results or tool error text unless the operator opts in", async () => {
    const marker = `secret-${hex(6)}`;
    const spans = await turn(marker, false);
    const leaks = spans.flatMap((s) =>
      valuesOf(s)
        .filter((v) => v.includes(marker))
        .map((v) => `${s.name}: ${v}`),
    );
    expect(leaks).toEqual([]);
    const refused = spans.find((s) => s.name === "execute_tool refuse");
    expect(refused?.status.code).toBe(2); // still an error, without its text
    expect(refused?.attributes["error.type"]).toBe("ToolError");
  });

  it("with OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true the spans carry the content", async () => {
    const marker = `secret-${hex(6)}`;
    const spans = await turn(marker, true);
    const chats = spans.filter((s) => s.name === "chat gpt-content");
    expect(String(chats[0]?.attributes["gen_ai.input.messages"])).toContain(
      `tell me about ${marker}`,
    );
    expect(String(chats[1]?.attributes["gen_ai.output.messages"])).toContain(
      `The answer about ${marker}.`,
    );
    const lookup = spans.find((s) => s.name === "execute_tool lookup");
    expect(String(lookup?.attributes["gen_ai.tool.call.arguments"])).toContain(marker);
    expect(String(lookup?.attributes["gen_ai.tool.call.result"])).toContain(`found ${marker}`);
    const refused = spans.find((s) => s.name === "execute_tool refuse");
    expect(refused?.status.message).toContain(marker);
  });
});

describe("with no tracer provider registered", () => {
  it("nothing is written to a task's trace column and no traceparent goes out, to a provider or a webhook", async () => {
    trace.disable();
    try {
      const { contextId } = (await send("start")) as { contextId: string };
      const fake = new FakeProvider().reply({ fixture: "openai-chat/text-with-usage.sse" });
      await withAgent(stubOf(contextId), () => ({
        handler: undefined,
        model: wiredModel(fake),
        tools: {},
      }));
      const got = await receiveWebhooks(contextId);
      const caller = tracedCaller();
      const { body } = await rpc(
        "SendMessage",
        {
          message: userMessage("untraced", { contextId }),
          configuration: { taskPushNotificationConfig: { url: "https://hooks.example.com/none" } },
        },
        { headers: caller.headers },
      );
      const task = (body.result as { task: Json }).task;
      expect(task.status).toMatchObject({ state: "TASK_STATE_COMPLETED" });
      await until(() => (got.length >= 1 ? true : undefined));
      expect(fake.requests).toHaveLength(1);
      expect(fake.requests[0]?.headers.get("traceparent")).toBeNull();
      expect(fake.requests[0]?.headers.get("tracestate")).toBeNull();
      for (const request of got) {
        expect(request.headers.get("traceparent")).toBeNull();
        expect(request.headers.get("tracestate")).toBeNull();
      }
      const column = await runInDurableObject(stubOf(contextId), (_i, state) =>
        state.storage.sql.exec("SELECT trace FROM tasks").toArray(),
      );
      expect(column.length).toBeGreaterThan(0);
      expect(column.every((row) => row.trace === null)).toBe(true);
      expect(spansOf(caller.traceId)).toEqual([]);
    } finally {
      register();
    }
  });
});
