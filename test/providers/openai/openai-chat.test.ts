import { describe, expect, it } from "vitest";
import { generate } from "../../../src/providers/base/collect";
import { ModelRequest, type ModelRequestInput } from "../../../src/providers/base/types";
import { openai, toChatCompletionsBody } from "../../../src/providers/openai/openai-chat";
import {
  expectAllCovered,
  failure,
  type RecordedChatBody,
  replay,
  requestFromRecorded,
  run,
  summarize,
} from "../chat-helpers";
import { FakeProvider, fixtureJson, type RecordedRequest } from "../fake-provider";

/**
 * The OpenAI Chat Completions adapter against the recorded streams of
 * test/fixtures/providers/openai-chat, replayed byte for byte under several network
 * chunkings, plus the transport (keys, URLs, cancellation, stalls).
 */

const ENV = { OPENAI_API_KEY: "sk-test" };
const HI: ModelRequestInput = { messages: [{ role: "user", content: "Hi" }] };

/** Usage as the recorded usage chunks state it (reasoning and cached tokens included). */
const usage = (prompt: number, completion: number, reasoning = 0) => ({
  promptTokens: prompt,
  completionTokens: completion,
  totalTokens: prompt + completion,
  reasoningTokens: reasoning,
  cachedPromptTokens: 0,
});

describe("openai-chat fixtures: streams (G11, G12, G13)", () => {
  it("G13: text-with-usage — text, the usage chunk after finish_reason, then [DONE]", async () => {
    const { events } = await replay(
      openai({ model: "gpt-4o" }),
      "openai-chat/text-with-usage.sse",
      HI,
      ENV,
    );
    const s = summarize(events);
    expect(s.start).toEqual({
      type: "message_start",
      provider: "openai",
      model: "gpt-4o-2024-08-06",
      requestId: "chatcmpl-C2P2HtMJhPkWjQ2adKerkdVilXmRL",
    });
    expect(s.text).toBe("The capital of Mexico is Mexico City.");
    expect(s.end.stopReason).toBe("stop");
    expect(s.end.providerStopReason).toBe("stop");
    expect(s.end.usage).toEqual(usage(14, 8));
    expect(s.usages).toEqual([usage(14, 8)]);
    // G14: gpt-4o at $2.50 / $10 per million tokens.
    expect(s.end.costEstimate).toBeCloseTo((14 * 2.5 + 8 * 10) / 1e6, 12);
    expect(s.calls).toEqual([]);
  });

  it("G13: after-tool-result-text — the answer after a tool turn", async () => {
    const { events } = await replay(
      openai({ model: "gpt-4o-mini" }),
      "openai-chat/after-tool-result-text.sse",
      HI,
      ENV,
    );
    const s = summarize(events);
    expect(s.text).toBe("The capital of the UK is London.");
    expect(s.end).toMatchObject({ stopReason: "stop", usage: usage(78, 9), reasoning: [] });
  });

  it("G13: azure-empty-choices-first-chunk — a first chunk with no choices and no id is skipped", async () => {
    const { events } = await replay(
      openai({ model: "gpt-5-nano" }),
      "openai-chat/azure-empty-choices-first-chunk.sse",
      HI,
      ENV,
    );
    const s = summarize(events);
    // The message starts with the first real chunk: its id and model, not Azure's blanks.
    expect(s.start.requestId).toBe("chatcmpl-CYPS1lijGoK8gd9lYzY3r9Sx50nbt");
    expect(s.start.model).toBe("gpt-5-nano-2025-08-07");
    expect(s.text).toBe("Capital of Denmark.");
    expect(s.end.usage).toEqual(usage(15, 78, 64));
    expect(s.end.stopReason).toBe("stop");
  });

  it("G13: gpt5-text-extra-chunk-after-usage — a moderation chunk after the usage changes nothing", async () => {
    const { events } = await replay(
      openai({ model: "gpt-5" }),
      "openai-chat/gpt5-text-extra-chunk-after-usage.sse",
      HI,
      ENV,
    );
    const s = summarize(events);
    expect(s.text).toBe("Paris.");
    expect(s.end.usage).toEqual(usage(13, 11));
    expect(s.usages).toHaveLength(1);
    expect(events.map((e) => e.type).slice(-2)).toEqual(["usage", "message_end"]);
  });

  it("G9: parallel-tool-calls — two calls by index, ids from their first fragments", async () => {
    const { events } = await replay(
      openai({ model: "gpt-4o" }),
      "openai-chat/parallel-tool-calls.sse",
      HI,
      ENV,
    );
    const s = summarize(events);
    expect(s.calls).toEqual([
      { id: "call_q2UyBRP7eXNTzAoR8lEhjc9Z", name: "get_country", arguments: "{}", input: {} },
      { id: "call_b51ijcpFkDiTQG1bQzsrmtW5", name: "get_product_name", arguments: "{}", input: {} },
    ]);
    expect(s.end).toMatchObject({ stopReason: "tool_calls", providerStopReason: "tool_calls" });
    expect(s.end.usage).toEqual(usage(364, 40));
    expect(s.text).toBe("");
    // Calls end at finish_reason, before the usage chunk arrives.
    const types = events.map((e) => e.type);
    expect(types.lastIndexOf("tool_call_end")).toBeLessThan(types.indexOf("usage"));
  });

  it("G9, G13: tool-call-long-args — arguments over many fragments assemble to the whole JSON", async () => {
    const { events } = await replay(
      openai({ model: "gpt-4o" }),
      "openai-chat/tool-call-long-args.sse",
      HI,
      ENV,
    );
    const s = summarize(events);
    expect(s.calls).toHaveLength(1);
    const call = s.calls[0];
    expect(call?.id).toBe("call_CCGIWaMeYWmxOQ91orkmTvzn");
    expect(call?.name).toBe("final_result");
    expect(call?.input).toEqual({
      answers: [
        { label: "Capital", answer: "The capital of Mexico is Mexico City." },
        { label: "Weather", answer: "The weather in Mexico City is currently sunny." },
        { label: "Product Name", answer: "The product name is Pydantic AI." },
      ],
    });
    expect(events.filter((e) => e.type === "tool_call_delta").length).toBeGreaterThan(20);
    expect(s.end).toMatchObject({ stopReason: "tool_calls", usage: usage(448, 62) });
  });

  it("G9: tool-call-split-args — '{\"','country','\":\"','UK','\"}' is one call", async () => {
    const { events } = await replay(
      openai({ model: "gpt-4o-mini" }),
      "openai-chat/tool-call-split-args.sse",
      HI,
      ENV,
    );
    const s = summarize(events);
    expect(s.calls).toEqual([
      {
        id: "call_ZR5UUuTt3pf61kjwAJIYdVMj",
        name: "get_capital",
        arguments: '{"country":"UK"}',
        input: { country: "UK" },
      },
    ]);
    expect(events.filter((e) => e.type === "tool_call_delta").map((e) => e.argumentsDelta)).toEqual(
      ['{"', "country", '":"', "UK", '"}'],
    );
    expect(s.end).toMatchObject({ stopReason: "tool_calls", usage: usage(53, 15) });
  });
});

describe("openai-chat fixtures: HTTP errors (H7)", () => {
  it("H7: error-400-invalid-request — status 400, OpenAI's type and message, not retryable", async () => {
    const fake = new FakeProvider().reply({
      fixture: "openai-chat/error-400-invalid-request.json",
    });
    const { error, events } = await failure(openai({ model: "o1-mini" }), HI, {
      fetch: fake.fetch,
      env: ENV,
    });
    expect(events).toEqual([]);
    expect(error).toMatchObject({ kind: "http", status: 400, retryable: false });
    // OpenAI's specific `code`, not its generic `type` (invalid_request_error).
    expect(error.code).toBe("unsupported_value");
    expect(error.message).toContain(
      "Unsupported value: 'messages[0].role' does not support 'system' with this model.",
    );
  });

  it("H7: error-404-model-not-found — status 404, not retryable", async () => {
    const fake = new FakeProvider().reply({
      fixture: "openai-chat/error-404-model-not-found.json",
    });
    const { error } = await failure(openai({ model: "gpt-5.2-proo" }), HI, {
      fetch: fake.fetch,
      env: ENV,
    });
    expect(error).toMatchObject({ kind: "http", status: 404, retryable: false });
    expect(error.code).toBe("model_not_found");
    // The URL it called: a base URL without /v1 shows at once.
    expect(error.message).toMatch(
      /^openai: POST https:\/\/api\.openai\.com\/v1\/chat\/completions answered 404: /,
    );
    expect(error.message).toContain(
      "The model `gpt-5.2-proo` does not exist or you do not have access to it.",
    );
  });

  it("H7: a 429 with Retry-After is retryable and says when", async () => {
    const fake = new FakeProvider().reply({
      status: 429,
      headers: { "retry-after": "3", "x-request-id": "req_429" },
      body: '{"error":{"message":"Rate limit reached","type":"requests","param":null,"code":"rate_limit_exceeded"}}',
    });
    const { error } = await failure(openai({ model: "gpt-4o" }), HI, {
      fetch: fake.fetch,
      env: ENV,
    });
    expect(error).toMatchObject({
      kind: "http",
      status: 429,
      retryable: true,
      retryAfterMs: 3000,
      requestId: "req_429",
    });
  });
});

/** The recorded body and our body for the equivalent normalized request. */
function shapes(
  name: string,
  extra: Partial<ModelRequestInput> = {},
): { recorded: RecordedChatBody; ours: Record<string, unknown> } {
  const recorded = fixtureJson<RecordedRequest>(`openai-chat/${name}.request.json`)
    .body as RecordedChatBody;
  const request = ModelRequest.parse({ ...requestFromRecorded(recorded), ...extra });
  return { recorded, ours: toChatCompletionsBody(request, recorded.model, "openai") };
}

/** Our tool specs carry no `strict` flag: it is a function-level option we do not set. */
function withoutStrict(tools: RecordedChatBody["tools"]): unknown {
  return tools?.map(({ function: { strict: _strict, ...fn }, ...tool }) => ({
    ...tool,
    function: fn,
  }));
}

describe("openai-chat fixtures: request shapes (G3, G4, G8)", () => {
  it("G4: text-with-usage — one user message, stream with include_usage", () => {
    const { recorded, ours } = shapes("text-with-usage");
    expect(ours).toEqual(recorded);
  });

  it("G4: gpt5-text-extra-chunk-after-usage — `moderation` only through providerOptions", () => {
    const { recorded, ours } = shapes("gpt5-text-extra-chunk-after-usage", {
      providerOptions: { moderation: { model: "omni-moderation-latest" } },
    });
    expect(ours).toEqual(recorded);
  });

  it("G4, G8: tool-call-split-args — tools as {type:function, function:{name,description,parameters}}", () => {
    const { recorded, ours } = shapes("tool-call-split-args");
    expect(ours).toEqual({ ...recorded, tools: withoutStrict(recorded.tools) });
  });

  it("G4: after-tool-result-text — the call as an assistant message with tool_calls, the output as a tool message", () => {
    const { recorded, ours } = shapes("after-tool-result-text");
    expect(ours).toEqual({ ...recorded, tools: withoutStrict(recorded.tools) });
    expect((ours.messages as { role: string }[]).map((m) => m.role)).toEqual([
      "user",
      "assistant",
      "tool",
    ]);
  });

  it("G4: parallel-tool-calls — tool_choice required and seven tools in the recorded layout", () => {
    const { recorded, ours } = shapes("parallel-tool-calls");
    expect(recorded.tool_choice).toBe("required");
    expect(ours).toEqual({ ...recorded, tools: withoutStrict(recorded.tools) });
  });

  it("G4: tool-call-long-args — two rounds: parallel calls in ONE assistant message, one tool message per output", () => {
    const { recorded, ours } = shapes("tool-call-long-args");
    // Deliberate difference: a turn with calls only has `content: null`; the recording
    // left the key out (both mean "no text").
    const messages = recorded.messages.map((m) =>
      m.role === "assistant" && !("content" in m) ? { ...m, content: null } : m,
    );
    expect(ours).toEqual({ ...recorded, messages, tools: withoutStrict(recorded.tools) });
    expect((ours.messages as { role: string }[]).map((m) => m.role)).toEqual([
      "user",
      "assistant",
      "tool",
      "tool",
      "assistant",
      "tool",
    ]);
  });

  it("G4: error-400-invalid-request — a reasoning model (o1-mini) gets its instructions as `developer`", () => {
    const { recorded, ours } = shapes("error-400-invalid-request");
    // Deliberate differences: `developer`, not the `system` the API refused for this model
    // (the recorded 400); we always stream (with usage); `n` is never sent.
    const { n: _n, ...rest } = recorded;
    expect(ours).toEqual({
      ...rest,
      messages: [
        { role: "developer", content: "You are a helpful assistant." },
        { role: "user", content: "Hello" },
      ],
      stream: true,
      stream_options: { include_usage: true },
    });
  });

  it("G4: error-404-model-not-found — the same body, streamed", () => {
    const { recorded, ours } = shapes("error-404-model-not-found");
    // Deliberate difference: we always stream.
    expect(ours).toEqual({ ...recorded, stream: true, stream_options: { include_usage: true } });
  });

  it("covers every file of openai-chat/", () => {
    expectAllCovered("openai-chat", {
      bodies: [
        "text-with-usage.sse",
        "after-tool-result-text.sse",
        "azure-empty-choices-first-chunk.sse",
        "gpt5-text-extra-chunk-after-usage.sse",
        "parallel-tool-calls.sse",
        "tool-call-long-args.sse",
        "tool-call-split-args.sse",
        "error-400-invalid-request.json",
        "error-404-model-not-found.json",
      ],
      requests: [
        "text-with-usage",
        "gpt5-text-extra-chunk-after-usage",
        "tool-call-split-args",
        "after-tool-result-text",
        "parallel-tool-calls",
        "tool-call-long-args",
        "error-400-invalid-request",
        "error-404-model-not-found",
      ],
    });
  });
});

describe("openai(): transport", () => {
  it("POSTs {base}/chat/completions with Bearer auth; the key from OPENAI_API_KEY", async () => {
    const fake = new FakeProvider().reply({ fixture: "openai-chat/text-with-usage.sse" });
    await run(openai({ model: "gpt-4o" }), HI, { fetch: fake.fetch, env: ENV });
    const [seen] = fake.requests;
    expect(seen?.url).toBe("https://api.openai.com/v1/chat/completions");
    expect(seen?.method).toBe("POST");
    expect(seen?.headers.get("authorization")).toBe("Bearer sk-test");
    expect(seen?.headers.get("content-type")).toBe("application/json");
    expect(seen?.body).toMatchObject({ model: "gpt-4o", stream: true });
  });

  it("base URL: option over OPENAI_BASE_URL over the public API; apiKey over the env", async () => {
    const fake = new FakeProvider().reply(
      { fixture: "openai-chat/text-with-usage.sse" },
      { fixture: "openai-chat/text-with-usage.sse" },
    );
    const env = { ...ENV, OPENAI_BASE_URL: "https://gateway.test/openai/" };
    await run(openai({ model: "gpt-4o" }), HI, { fetch: fake.fetch, env });
    await run(
      openai({
        model: "gpt-4o",
        baseUrl: "https://proxy.test/v1",
        apiKey: "sk-explicit",
        headers: { "x-extra": "1" },
      }),
      HI,
      { fetch: fake.fetch, env },
    );
    expect(fake.requests.map((r) => r.url)).toEqual([
      "https://gateway.test/openai/chat/completions",
      "https://proxy.test/v1/chat/completions",
    ]);
    expect(fake.requests[1]?.headers.get("authorization")).toBe("Bearer sk-explicit");
    expect(fake.requests[1]?.headers.get("x-extra")).toBe("1");
  });

  it("a missing key is a config error that names the secret, before any request", async () => {
    const fake = new FakeProvider();
    const { error } = await failure(openai({ model: "gpt-4o" }), HI, { fetch: fake.fetch });
    expect(error.kind).toBe("config");
    expect(error.message).toContain("OPENAI_API_KEY");
    expect(fake.requests).toHaveLength(0);
  });

  it("the x-request-id header is the request id", async () => {
    const fake = new FakeProvider().reply({
      fixture: "openai-chat/text-with-usage.sse",
      headers: { "x-request-id": "req_abc" },
    });
    const events = await run(openai({ model: "gpt-4o" }), HI, { fetch: fake.fetch, env: ENV });
    expect(summarize(events).start.requestId).toBe("req_abc");
  });

  it("aborting mid-stream stops reading at once: the body is canceled, the error is `aborted`", async () => {
    const fake = new FakeProvider({ maxChunk: 64 }).reply({
      fixture: "openai-chat/tool-call-long-args.sse",
      delayMs: 5,
    });
    const controller = new AbortController();
    const model = openai({ model: "gpt-4o" });
    const seen: string[] = [];
    let caught: unknown;
    try {
      for await (const batch of model.streamBatches(ModelRequest.parse(HI), {
        fetch: fake.fetch,
        env: ENV,
        signal: controller.signal,
      })) {
        seen.push(...batch.map((e) => e.type));
        if (seen.includes("tool_call_delta")) controller.abort();
      }
    } catch (error) {
      caught = error;
    }
    expect(caught).toMatchObject({ name: "ProviderError", kind: "aborted", retryable: false });
    expect(fake.canceledStreams).toBe(1);
    expect(seen).not.toContain("message_end");
  });

  it("H7: a stream that stalls after its first bytes fails with a retryable timeout", async () => {
    const body = new TextEncoder().encode(
      'data: {"id":"c1","choices":[{"index":0,"delta":{"content":"Hel"},"finish_reason":null}]}\n\n',
    );
    const fake = new FakeProvider().reply({ stallAfterBytes: body.length, body });
    const { error, events } = await failure(openai({ model: "gpt-4o", stallMs: 30 }), HI, {
      fetch: fake.fetch,
      env: ENV,
    });
    expect(error).toMatchObject({ kind: "timeout", retryable: true });
    expect(events.map((e) => e.type)).toEqual(["message_start", "text_delta"]);
    expect(fake.canceledStreams).toBe(1);
  });

  it("H7: no response at all within stallMs is a timeout; a failed connection a network error", async () => {
    const fake = new FakeProvider().reply({ hang: true }, { networkError: "connection refused" });
    const model = openai({ model: "gpt-4o", stallMs: 30 });
    const hung = await failure(model, HI, { fetch: fake.fetch, env: ENV });
    expect(hung.error).toMatchObject({ kind: "timeout", retryable: true });
    const refused = await failure(model, HI, { fetch: fake.fetch, env: ENV });
    expect(refused.error).toMatchObject({ kind: "network", retryable: true });
  });

  it("G10, G15: generate() adds a replay up to text, usage, cost and latency", async () => {
    const fake = new FakeProvider({ maxChunk: 7 }).reply({
      fixture: "openai-chat/after-tool-result-text.sse",
    });
    const response = await generate(openai({ model: "gpt-4o-mini" }), HI, {
      fetch: fake.fetch,
      env: ENV,
    });
    expect(response).toMatchObject({
      text: "The capital of the UK is London.",
      provider: "openai",
      model: "gpt-4o-mini-2024-07-18",
      stopReason: "stop",
      usage: usage(78, 9),
      requestId: "chatcmpl-Dx0Xq5Xx9rHB2ehcHZCRDsnuymUXc",
    });
    expect(response.costEstimate).toBeCloseTo((78 * 0.15 + 9 * 0.6) / 1e6, 12);
    expect(response.timeToFirstTokenMs).not.toBeNull();
  });

  it("G14: a model with unknown prices has a null cost, not zero", async () => {
    const fake = new FakeProvider().reply({ fixture: "openai-chat/text-with-usage.sse" });
    const events = await run(openai({ model: "my-finetune" }), HI, { fetch: fake.fetch, env: ENV });
    expect(summarize(events).end.costEstimate).toBeNull();
  });
});
