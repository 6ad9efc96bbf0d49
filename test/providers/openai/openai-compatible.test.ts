import { describe, expect, it } from "vitest";
import { ModelRequest, type ModelRequestInput } from "../../../src/providers/base/types";
import { toChatCompletionsBody } from "../../../src/providers/openai/openai-chat";
import { openaiCompatible } from "../../../src/providers/openai/openai-compatible";
import {
  expectAllCovered,
  failure,
  type RecordedChatBody,
  replay,
  replayFailure,
  requestFromRecorded,
  run,
  summarize,
} from "../chat-helpers";
import { FakeProvider, fixtureJson, type RecordedRequest } from "../fake-provider";

/**
 * OpenAI-compatible servers (Groq, OpenRouter, DeepSeek, vLLM, Anthropic's compat layer)
 * against test/fixtures/providers/openai-compatible, replayed byte for byte under
 * several chunkings. Same converter and decoder as `openai`, `compatible` flavor.
 */

const HI: ModelRequestInput = { messages: [{ role: "user", content: "Hi" }] };

const server = (name: string, model: string, extra: object = {}) =>
  openaiCompatible({ name, baseUrl: `https://${name}.test/v1`, model, apiKey: "key", ...extra });

describe("openai-compatible fixtures: streams", () => {
  it("G9: anthropic-compat-tool-index-starts-at-1 — text, then a call whose index 1 becomes event index 0", async () => {
    const { events } = await replay(
      server("anthropic", "claude-haiku-4-5"),
      "openai-compatible/anthropic-compat-tool-index-starts-at-1.sse",
      HI,
    );
    const s = summarize(events);
    expect(s.start).toEqual({
      type: "message_start",
      provider: "anthropic",
      model: "claude-haiku-4-5-20251001",
      requestId: "msg_sanitized",
    });
    expect(s.text).toBe("Reading it.");
    expect(s.calls).toEqual([
      {
        id: "toolu_sanitized",
        name: "read_file",
        arguments: '{"path": "a.txt"}',
        input: { path: "a.txt" },
      },
    ]);
    const start = events.find((e) => e.type === "tool_call_start");
    expect(start).toMatchObject({ index: 0, id: "toolu_sanitized" });
    // No usage chunk was sent: usage and cost are unknown, not zero.
    expect(s.end).toMatchObject({ stopReason: "tool_calls", usage: null, costEstimate: null });
  });

  it("J1: deepseek-reasoning-content — reasoning_content streams as thinking, then the answer", async () => {
    const { events } = await replay(
      server("deepseek", "deepseek-reasoner"),
      "openai-compatible/deepseek-reasoning-content.sse",
      HI,
    );
    const s = summarize(events);
    expect(s.reasoning).toHaveLength(882);
    expect(s.reasoning.startsWith('Hmm, the user just said "Hello".')).toBe(true);
    expect(s.reasoning.endsWith("they might not reply further - and that's okay too.")).toBe(true);
    expect(s.text).toBe("Hello there! 😊 How can I help you today?");
    expect(s.end).toMatchObject({ stopReason: "stop", providerStopReason: "stop", reasoning: [] });
    expect(s.end.usage).toEqual({
      promptTokens: 6,
      completionTokens: 212,
      totalTokens: 218,
      reasoningTokens: 198,
      cachedPromptTokens: 0,
    });
    // Thinking comes before any text.
    const types = events.map((e) => e.type);
    expect(types.lastIndexOf("reasoning_delta")).toBeLessThan(types.indexOf("text_delta"));
  });

  it("G9, G12: groq-tool-call-whole-x_groq-usage — a whole call in one chunk, usage on the finish chunk, x_groq.id as request id", async () => {
    const { events } = await replay(
      server("groq", "openai/gpt-oss-120b"),
      "openai-compatible/groq-tool-call-whole-x_groq-usage.sse",
      HI,
    );
    const s = summarize(events);
    expect(s.start.requestId).toBe("req_01khrvt32ze9rb75za4xqmdz13");
    expect(s.reasoning).toBe(
      'We need to call the function with correct parameter "name". Provide a name, e.g., "example".',
    );
    expect(s.calls).toEqual([
      {
        id: "fc_bfb39741-3748-4def-9886-a93fc9c64a90",
        name: "get_something_by_name",
        arguments: '{"name":"example"}',
        input: { name: "example" },
      },
    ]);
    expect(s.end.stopReason).toBe("tool_calls");
    expect(s.end.usage).toEqual({
      promptTokens: 304,
      completionTokens: 49,
      totalTokens: 353,
      reasoningTokens: 23,
    });
    expect(s.usages).toHaveLength(1);
  });

  it("G12: vllm-text-usage — extra vLLM fields are ignored; usage from the choices:[] chunk", async () => {
    const { events } = await replay(
      server("vllm", "meta-llama/Llama-3.3-70B-Instruct", {
        capabilities: { inputPricePerMillion: 1, outputPricePerMillion: 2 },
      }),
      "openai-compatible/vllm-text-usage.sse",
      HI,
    );
    const s = summarize(events);
    expect(s.text).toBe("1, 2, 3, 4, 5");
    expect(s.start.requestId).toBe("chatcmpl-bcfbe349402eb3d2");
    expect(s.end.usage).toEqual({
      promptTokens: 46,
      completionTokens: 14,
      totalTokens: 60,
      cachedPromptTokens: 0,
    });
    // G14: prices given as capabilities make a cost.
    expect(s.end.costEstimate).toBeCloseTo((46 * 1 + 14 * 2) / 1e6, 12);
  });

  it("groq-reasoning-then-error-event — thinking streams, then `event: error` is thrown with Groq's code", async () => {
    const { error, events } = await replayFailure(
      server("groq", "openai/gpt-oss-120b"),
      "openai-compatible/groq-reasoning-then-error-event.sse",
      HI,
    );
    const reasoning = events
      .filter((e) => e.type === "reasoning_delta")
      .map((e) => e.text)
      .join("");
    expect(reasoning).toHaveLength(412);
    expect(reasoning.startsWith("We need to call the tool with invalid parameters first")).toBe(
      true,
    );
    expect(events.some((e) => e.type === "message_end")).toBe(false);
    expect(error).toMatchObject({
      provider: "groq",
      kind: "stream",
      code: "tool_use_failed",
      status: 400,
      retryable: false,
      requestId: "req_01khrvt2r6e9rb7e8qsg86ywkw",
    });
    expect(error.message).toContain("Tool call validation failed");
  });

  it("openrouter-comments-and-inline-error — `:` comments skipped; the top-level error next to normal fields is thrown", async () => {
    const { error, events } = await replayFailure(
      server("openrouter", "minimax/minimax-m2:free"),
      "openai-compatible/openrouter-comments-and-inline-error.sse",
      HI,
    );
    expect(events.map((e) => e.type)).toEqual([
      "message_start",
      "reasoning_delta",
      "reasoning_delta",
    ]);
    expect(events.flatMap((e) => (e.type === "reasoning_delta" ? [e.text] : [])).join("")).toBe(
      "We need to respond to a greeting. The user",
    );
    expect(error).toMatchObject({
      provider: "openrouter",
      kind: "stream",
      code: "400",
      status: 400,
      retryable: false,
      requestId: "gen-1762179802-UN8pkJI4AGZvryk0kFnb",
    });
    expect(error.message).toContain("Token limit reached");
  });

  it("H7: openrouter-error-429 — a 429 with a numeric code is retryable", async () => {
    const fake = new FakeProvider().reply({
      fixture: "openai-compatible/openrouter-error-429.json",
    });
    const { error } = await failure(server("openrouter", "google/gemini-2.0-flash-exp:free"), HI, {
      fetch: fake.fetch,
    });
    expect(error).toMatchObject({
      provider: "openrouter",
      kind: "http",
      status: 429,
      code: "429",
      retryable: true,
      // The recording carries no Retry-After header.
      retryAfterMs: null,
    });
    expect(error.message).toContain("Provider returned error");
  });
});

function shapes(
  name: string,
  extra: Partial<ModelRequestInput> = {},
): { recorded: RecordedChatBody; ours: Record<string, unknown> } {
  const recorded = fixtureJson<RecordedRequest>(`openai-compatible/${name}.request.json`)
    .body as RecordedChatBody;
  const request = ModelRequest.parse({ ...requestFromRecorded(recorded), ...extra });
  return { recorded, ours: toChatCompletionsBody(request, recorded.model, "compatible") };
}

describe("openai-compatible fixtures: request shapes (G4, G8)", () => {
  it("deepseek-reasoning-content and vllm-text-usage — identical bodies", () => {
    for (const name of ["deepseek-reasoning-content", "vllm-text-usage"]) {
      const { recorded, ours } = shapes(name);
      expect(ours, name).toEqual(recorded);
    }
  });

  it("groq-reasoning-then-error-event — system first, tools in OpenAI layout, tool_choice auto", () => {
    const { recorded, ours } = shapes("groq-reasoning-then-error-event");
    // Deliberate differences: we ask for a usage chunk; `n` is never sent.
    const { n: _n, ...rest } = recorded;
    expect(ours).toEqual({ ...rest, stream_options: { include_usage: true } });
  });

  it("groq-tool-call-whole-x_groq-usage — assistant text and its call in ONE message, then the tool output", () => {
    const { recorded, ours } = shapes("groq-tool-call-whole-x_groq-usage");
    const { n: _n, ...rest } = recorded;
    expect(ours).toEqual({ ...rest, stream_options: { include_usage: true } });
    const assistant = (ours.messages as Record<string, unknown>[])[2];
    expect(assistant?.role).toBe("assistant");
    expect(String(assistant?.content).startsWith("<think>")).toBe(true);
    expect(assistant?.tool_calls).toHaveLength(1);
  });

  it("openrouter-comments-and-inline-error — maxTokens as max_tokens for compatible servers", () => {
    const { recorded, ours } = shapes("openrouter-comments-and-inline-error", { maxTokens: 10 });
    // Deliberate difference: `max_tokens`, which every compatible server knows.
    const { max_completion_tokens: limit, ...rest } = recorded;
    expect(ours).toEqual({ ...rest, max_tokens: limit });
  });

  it("openrouter-error-429 — system then user, streamed", () => {
    const { recorded, ours } = shapes("openrouter-error-429");
    // Deliberate difference: we always stream (with usage).
    expect(ours).toEqual({ ...recorded, stream: true, stream_options: { include_usage: true } });
  });

  it("covers every file of openai-compatible/", () => {
    expectAllCovered("openai-compatible", {
      bodies: [
        "anthropic-compat-tool-index-starts-at-1.sse",
        "deepseek-reasoning-content.sse",
        "groq-reasoning-then-error-event.sse",
        "groq-tool-call-whole-x_groq-usage.sse",
        "openrouter-comments-and-inline-error.sse",
        "openrouter-error-429.json",
        "vllm-text-usage.sse",
      ],
      requests: [
        "deepseek-reasoning-content",
        "vllm-text-usage",
        "groq-reasoning-then-error-event",
        "groq-tool-call-whole-x_groq-usage",
        "openrouter-comments-and-inline-error",
        "openrouter-error-429",
      ],
    });
  });
});

describe("openaiCompatible(): endpoint and auth", () => {
  const fixture = "openai-compatible/vllm-text-usage.sse";

  it("POSTs {baseUrl}/chat/completions with the explicit key and extra headers", async () => {
    const fake = new FakeProvider().reply({ fixture });
    const model = openaiCompatible({
      name: "openrouter",
      baseUrl: "https://openrouter.ai/api/v1/",
      model: "openai/gpt-4o",
      apiKey: "or-key",
      headers: { "x-title": "Edgelink" },
    });
    await run(model, HI, { fetch: fake.fetch });
    const [seen] = fake.requests;
    expect(seen?.url).toBe("https://openrouter.ai/api/v1/chat/completions");
    expect(seen?.headers.get("authorization")).toBe("Bearer or-key");
    expect(seen?.headers.get("x-title")).toBe("Edgelink");
    expect(seen?.body.model).toBe("openai/gpt-4o");
  });

  it("apiKeyEnv reads the key from the env; a missing secret is a config error naming it", async () => {
    const model = openaiCompatible({
      name: "groq",
      baseUrl: "https://api.groq.com/openai/v1",
      model: "llama-3.3-70b-versatile",
      apiKeyEnv: "GROQ_API_KEY",
    });
    const fake = new FakeProvider().reply({ fixture });
    await run(model, HI, { fetch: fake.fetch, env: { GROQ_API_KEY: "gsk" } });
    expect(fake.requests[0]?.headers.get("authorization")).toBe("Bearer gsk");
    const { error } = await failure(model, HI, { fetch: fake.fetch, env: {} });
    expect(error).toMatchObject({ provider: "groq", kind: "config" });
    expect(error.message).toContain("GROQ_API_KEY");
    expect(fake.requests).toHaveLength(1);
  });

  it("a local server without a key gets no Authorization header", async () => {
    const fake = new FakeProvider().reply({ fixture });
    const model = openaiCompatible({
      name: "ollama",
      baseUrl: "http://localhost:11434/v1",
      model: "qwen3",
    });
    const events = await run(model, HI, { fetch: fake.fetch });
    expect(fake.requests[0]?.headers.has("authorization")).toBe(false);
    expect(summarize(events).start.provider).toBe("ollama");
  });

  it("aborting mid-stream cancels the body at once", async () => {
    const fake = new FakeProvider({ maxChunk: 32 }).reply({
      fixture: "openai-compatible/deepseek-reasoning-content.sse",
      delayMs: 2,
    });
    const controller = new AbortController();
    const model = server("deepseek", "deepseek-reasoner");
    let caught: unknown;
    let seen = 0;
    try {
      for await (const batch of model.streamBatches(ModelRequest.parse(HI), {
        fetch: fake.fetch,
        signal: controller.signal,
      })) {
        seen += batch.length;
        if (seen > 3) controller.abort();
      }
    } catch (error) {
      caught = error;
    }
    expect(caught).toMatchObject({ provider: "deepseek", kind: "aborted" });
    expect(fake.canceledStreams).toBe(1);
  });
});
