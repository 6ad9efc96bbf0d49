import { describe, expect, it } from "vitest";
import type { JsonObject } from "../../../src/protocol/json";
import { generate } from "../../../src/providers/base/collect";
import {
  ModelRequest,
  type ModelRequestInput,
  type StreamEvent,
} from "../../../src/providers/base/types";
import {
  type AiBinding,
  workersAI,
  workersAiError,
} from "../../../src/providers/workers-ai/workers-ai";
import { CHUNKINGS, failure, run, stableIds, summarize } from "../chat-helpers";
import { randomChunks, seededRandom } from "../fake-provider";

/**
 * Workers AI through a fake AI binding. No raw Workers AI stream could be recorded, so the
 * streams below are built from the shapes in test/fixtures/providers/NOTES.md, and
 * the fake binding hands them out as SSE bytes split at random byte boundaries.
 */

const MODEL = "@cf/meta/llama-3.3-70b-instruct-fp8-fast";
const HI: ModelRequestInput = { messages: [{ role: "user", content: "Hi" }] };

type Answer =
  | { sse: string; stallAfterBytes?: number; delayMs?: number; requestId?: string }
  | { throws: unknown; requestId?: string }
  | { value: unknown }
  | { never: true };

/** A stand-in for `env.AI`: records each `run` and answers from a script. */
class FakeAi implements AiBinding {
  readonly calls: { model: string; inputs: JsonObject; options: JsonObject | undefined }[] = [];
  canceledStreams = 0;
  lastRequestId: string | null = null;
  readonly #answers: Answer[] = [];
  readonly #random: () => number;
  readonly #maxChunk: number;
  /** A stream handed out after the caller gave up, to see that it gets canceled. */
  late: { resolve: (value: unknown) => void } | null = null;

  constructor(options: { seed?: number; maxChunk?: number } = {}) {
    this.#random = seededRandom(options.seed ?? 1);
    this.#maxChunk = options.maxChunk ?? 16;
  }

  answer(...answers: Answer[]): this {
    this.#answers.push(...answers);
    return this;
  }

  stream(text: string, options: { stallAfterBytes?: number; delayMs?: number } = {}) {
    const bytes = new TextEncoder().encode(text);
    const stalled = options.stallAfterBytes;
    const chunks = randomChunks(
      stalled === undefined ? bytes : bytes.slice(0, stalled),
      this.#random,
      this.#maxChunk,
    );
    return new ReadableStream<Uint8Array>({
      pull: async (controller) => {
        if (options.delayMs) await new Promise((r) => setTimeout(r, options.delayMs));
        const chunk = chunks.shift();
        if (chunk) controller.enqueue(chunk);
        else if (stalled === undefined) controller.close();
        else await new Promise(() => {});
      },
      cancel: () => {
        this.canceledStreams++;
      },
    });
  }

  async run(model: string, inputs: JsonObject, options?: JsonObject): Promise<unknown> {
    this.calls.push({ model, inputs, options });
    const answer = this.#answers.shift();
    if (!answer) throw new Error("fake AI: no answer scripted");
    if ("never" in answer) {
      return new Promise((resolve) => {
        this.late = { resolve };
      });
    }
    if ("value" in answer) return answer.value;
    this.lastRequestId = answer.requestId ?? null;
    if ("throws" in answer) throw answer.throws;
    return this.stream(answer.sse, answer);
  }
}

/** SSE as the binding streams it: `data: <json>` events, then `data: [DONE]`. */
function sse(...chunks: (JsonObject | string)[]): string {
  return chunks.map((c) => `data: ${typeof c === "string" ? c : JSON.stringify(c)}\n\n`).join("");
}

/** Runs one stream under every chunking; the events must not depend on it. */
async function decode(
  body: string,
  request: ModelRequestInput = HI,
  requestId?: string,
): Promise<StreamEvent[]> {
  let first: StreamEvent[] | null = null;
  for (const chunking of CHUNKINGS) {
    const ai = new FakeAi(chunking).answer({ sse: body, ...(requestId ? { requestId } : {}) });
    const events = await run(workersAI({ model: MODEL }), request, { env: { AI: ai } });
    if (first === null) first = events;
    else expect(stableIds(events)).toEqual(stableIds(first));
  }
  return first ?? [];
}

const NATIVE_TEXT = sse(
  { response: "Bonjour", p: "abcdefghijklmnop" },
  { response: " à", p: "abc" },
  { response: " tous 👋🏽", p: "abcdefgh" },
  { response: "", tool_calls: [], p: "x" },
  { response: "" },
  { response: "", usage: { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 } },
  "[DONE]",
);

describe("native Workers AI streams", () => {
  it("G13: response tokens (with `p` padding) are the text; the last chunk's usage is the usage", async () => {
    const s = summarize(await decode(NATIVE_TEXT, HI, "cf-req-1"));
    expect(s.start).toEqual({
      type: "message_start",
      provider: "workers-ai",
      model: MODEL,
      requestId: "cf-req-1",
    });
    expect(s.text).toBe("Bonjour à tous 👋🏽");
    expect(s.end).toMatchObject({
      stopReason: "stop",
      providerStopReason: null,
      usage: { promptTokens: 12, completionTokens: 5, totalTokens: 17 },
      // G14: Workers AI bills in neurons; no per-token price is known.
      costEstimate: null,
    });
  });

  it("G9: Llama 3.3 tool calls (name + arguments object, no id) get ids and string arguments", async () => {
    const s = summarize(
      await decode(
        sse(
          {
            response: "",
            tool_calls: [
              { name: "get_weather", arguments: { city: "Paris" } },
              { name: "get_time", arguments: {} },
            ],
            p: "abcd",
          },
          { response: "", usage: { prompt_tokens: 40, completion_tokens: 20, total_tokens: 60 } },
          "[DONE]",
        ),
      ),
    );
    expect(s.calls.map((c) => [c.name, c.arguments, c.input])).toEqual([
      ["get_weather", '{"city":"Paris"}', { city: "Paris" }],
      ["get_time", "{}", {}],
    ]);
    for (const call of s.calls) expect(call.id).toMatch(/^call_/);
    expect(new Set(s.calls.map((c) => c.id)).size).toBe(2);
    expect(s.end.stopReason).toBe("tool_calls");
  });

  it("G9: OpenAI-style entries in the native list, then a null finalization entry that is ignored", async () => {
    const s = summarize(
      await decode(
        sse(
          {
            response: "",
            tool_calls: [
              {
                id: "chatcmpl-tool-7f3a",
                type: "function",
                index: 0,
                function: { name: "get_weather", arguments: '{"city": "Oslo"}' },
              },
            ],
          },
          {
            response: "",
            tool_calls: [{ id: null, type: null, function: { name: null, arguments: null } }],
          },
          { response: "", usage: { prompt_tokens: 30, completion_tokens: 9, total_tokens: 39 } },
          "[DONE]",
        ),
      ),
    );
    expect(s.calls).toEqual([
      {
        id: "chatcmpl-tool-7f3a",
        name: "get_weather",
        arguments: '{"city": "Oslo"}',
        input: { city: "Oslo" },
      },
    ]);
  });

  it("a null finalization entry alone makes no call", async () => {
    const s = summarize(
      await decode(
        sse(
          { response: "Done." },
          { response: "", tool_calls: [{ id: null, function: { name: null, arguments: null } }] },
          "[DONE]",
        ),
      ),
    );
    expect(s.calls).toEqual([]);
    expect(s.end.stopReason).toBe("stop");
  });
});

describe("OpenAI-style chunks from newer models", () => {
  const increment = (neurons: number) => ({
    prompt_tokens: 20,
    completion_tokens: 1,
    total_tokens: 21,
    neurons,
  });
  const chunk = (delta: JsonObject, usage: JsonObject, finish: string | null = null) => ({
    id: "id-1",
    object: "chat.completion.chunk",
    created: 1,
    model: "@cf/openai/gpt-oss-120b",
    choices: [{ index: 0, delta, finish_reason: finish }],
    usage,
    p: "abcdefgh",
  });

  it("G12: increments on each chunk are neither added up nor taken; the final native cumulative usage is", async () => {
    const s = summarize(
      await decode(
        sse(
          chunk({ role: "assistant", reasoning_content: "The user greets." }, increment(1.5)),
          chunk({ content: "Hello" }, increment(0.3)),
          chunk({ content: "!" }, increment(0.3), "stop"),
          { id: "id-1", choices: [], usage: increment(0.1) },
          { response: "", usage: { prompt_tokens: 20, completion_tokens: 3, total_tokens: 23 } },
          "[DONE]",
        ),
      ),
    );
    expect(s.start.model).toBe("@cf/openai/gpt-oss-120b");
    expect(s.reasoning).toBe("The user greets.");
    expect(s.text).toBe("Hello!");
    expect(s.usages).toEqual([{ promptTokens: 20, completionTokens: 3, totalTokens: 23 }]);
    expect(s.end).toMatchObject({
      stopReason: "stop",
      providerStopReason: "stop",
      usage: { promptTokens: 20, completionTokens: 3, totalTokens: 23 },
    });
  });

  it("delta.reasoning (gpt-oss) is thinking too; tool calls in deltas assemble", async () => {
    const s = summarize(
      await decode(
        sse(
          chunk({ reasoning: "Need weather." }, increment(1)),
          chunk(
            {
              tool_calls: [
                {
                  index: 0,
                  id: "call_w1",
                  type: "function",
                  function: { name: "get_weather", arguments: "" },
                },
              ],
            },
            increment(1),
          ),
          chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }, increment(1)),
          chunk(
            { tool_calls: [{ index: 0, function: { arguments: '"Lyon"}' } }] },
            increment(1),
            "tool_calls",
          ),
          { response: "", usage: { prompt_tokens: 50, completion_tokens: 12, total_tokens: 62 } },
          "[DONE]",
        ),
      ),
    );
    expect(s.reasoning).toBe("Need weather.");
    expect(s.calls).toEqual([
      { id: "call_w1", name: "get_weather", arguments: '{"city":"Lyon"}', input: { city: "Lyon" } },
    ]);
    expect(s.end).toMatchObject({ stopReason: "tool_calls", usage: { totalTokens: 62 } });
  });
});

describe("inputs of env.AI.run (G3, G4, G8, G16, G18)", () => {
  const tools = [
    {
      name: "get_weather",
      description: "Weather for a city",
      parameters: { type: "object", properties: { city: { type: "string" } } },
    },
  ];

  async function inputsOf(request: ModelRequestInput, extra: object = {}) {
    const ai = new FakeAi().answer({ sse: NATIVE_TEXT });
    await run(workersAI({ model: MODEL, ...extra }), request, { env: { AI: ai } });
    return ai.calls[0];
  }

  it("messages, tools in OpenAI layout, stream, max_tokens and temperature 0; the model as run's first argument", async () => {
    const seen = await inputsOf({
      system: "Be brief.",
      messages: [
        { role: "user", content: "Weather in Paris?" },
        {
          type: "function_call",
          callId: "call_1",
          name: "get_weather",
          arguments: '{"city":"Paris"}',
        },
        { type: "function_call_output", callId: "call_1", name: "get_weather", output: "sunny" },
      ],
      tools,
      toolChoice: "auto",
      temperature: 0,
      maxTokens: 256,
    });
    expect(seen?.model).toBe(MODEL);
    expect(seen?.options).toBeUndefined();
    expect(seen?.inputs).toEqual({
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", content: "Weather in Paris?" },
        {
          role: "assistant",
          content: "",
          tool_calls: [
            {
              id: "call_1",
              type: "function",
              function: { name: "get_weather", arguments: '{"city":"Paris"}' },
            },
          ],
        },
        { role: "tool", tool_call_id: "call_1", content: "sunny" },
      ],
      tools: [
        {
          type: "function",
          function: {
            name: "get_weather",
            description: "Weather for a city",
            parameters: { type: "object", properties: { city: { type: "string" } } },
          },
        },
      ],
      stream: true,
      temperature: 0,
      max_tokens: 256,
    });
  });

  it("tool choice none sends no tools; AI Gateway options go as run's third argument", async () => {
    const seen = await inputsOf(
      { ...HI, tools, toolChoice: "none" },
      { gateway: { id: "my-gateway", skipCache: true } },
    );
    expect(seen?.inputs).not.toHaveProperty("tools");
    expect(seen?.inputs).not.toHaveProperty("tool_choice");
    expect(seen?.options).toEqual({ gateway: { id: "my-gateway", skipCache: true } });
  });

  it("G16: forcing a tool (required, or one by name) is a config error before any call", async () => {
    for (const toolChoice of ["required", { name: "get_weather" }] as const) {
      const ai = new FakeAi();
      const { error } = await failure(
        workersAI({ model: MODEL }),
        { ...HI, tools, toolChoice },
        {
          env: { AI: ai },
        },
      );
      expect(error).toMatchObject({ provider: "workers-ai", kind: "config", retryable: false });
      expect(error.message).toContain("8001");
      expect(ai.calls).toHaveLength(0);
    }
  });

  it("G16: tools for a model marked without tool support are a config error", async () => {
    const ai = new FakeAi();
    const { error } = await failure(
      workersAI({ model: MODEL, capabilities: { tools: false } }),
      { ...HI, tools },
      { env: { AI: ai } },
    );
    expect(error.kind).toBe("config");
    expect(ai.calls).toHaveLength(0);
  });

  it("G18: a schema goes into the instructions (JSON mode does not stream); with structuredOutput, as Workers AI's response_format", async () => {
    const schema = { type: "object", properties: { city: { type: "string" } } };
    const plain = await inputsOf({ ...HI, outputSchema: schema });
    expect(plain?.inputs).not.toHaveProperty("response_format");
    const system = (plain?.inputs.messages as { role: string; content: string }[] | undefined)?.[0];
    expect(system?.role).toBe("system");
    expect(system?.content).toContain(JSON.stringify(schema));
    const native = await inputsOf(
      { ...HI, outputSchema: schema },
      { capabilities: { structuredOutput: true } },
    );
    expect(native?.inputs.response_format).toEqual({ type: "json_schema", json_schema: schema });
  });

  it("a missing binding is a config error naming it; another binding name is read", async () => {
    const { error } = await failure(workersAI({ model: MODEL }), HI, { env: {} });
    expect(error.kind).toBe("config");
    expect(error.message).toContain('binding "AI"');
    const ai = new FakeAi().answer({ sse: NATIVE_TEXT });
    const events = await run(workersAI({ model: MODEL, binding: "LLM" }), HI, { env: { LLM: ai } });
    expect(summarize(events).text).toBe("Bonjour à tous 👋🏽");
  });
});

describe("failures (H7)", () => {
  async function thrown(error: unknown, requestId?: string) {
    const ai = new FakeAi().answer({ throws: error, ...(requestId ? { requestId } : {}) });
    return (await failure(workersAI({ model: MODEL }), HI, { env: { AI: ai } })).error;
  }

  it("capacity (3040) is an http 429, retryable; the binding's request id is kept", async () => {
    const error = await thrown(
      new Error("3040: Capacity temporarily exceeded, please try again."),
      "cf-req-9",
    );
    expect(error).toMatchObject({
      provider: "workers-ai",
      kind: "http",
      status: 429,
      code: "3040",
      retryable: true,
      requestId: "cf-req-9",
    });
    expect(error.message).toContain("Capacity temporarily exceeded");
  });

  it("invalid input (5006, 8001) is final", async () => {
    const bad = await thrown(new Error("5006: Error: required properties at '/' are 'messages'"));
    expect(bad).toMatchObject({ kind: "http", status: 400, code: "5006", retryable: false });
    const invalid = await thrown(
      Object.assign(new Error("AiError: 8001: Invalid input"), { name: "InvalidInput" }),
    );
    expect(invalid).toMatchObject({ kind: "http", code: "8001", retryable: false });
  });

  it("a server error (3043) is retryable; a used-up daily allocation (3036) is not", async () => {
    expect(await thrown(new Error("3043: Internal server error"))).toMatchObject({
      status: 500,
      retryable: true,
    });
    expect(
      await thrown(
        new Error("3036: You have used up your daily free allocation of 10,000 neurons"),
      ),
    ).toMatchObject({ status: 429, retryable: false });
  });

  it("a code carried as a property counts; without code or status it is a network error", async () => {
    expect(await thrown(Object.assign(new Error("Request timeout"), { code: 3007 }))).toMatchObject(
      { kind: "http", status: 408, code: "3007", retryable: true },
    );
    expect(await thrown(new TypeError("Network connection lost."))).toMatchObject({
      kind: "network",
      code: null,
      retryable: true,
    });
  });

  it("workersAiError reads REST error envelopes too", () => {
    expect(
      workersAiError("workers-ai", {
        errors: [{ message: "AiError: Bad input", code: 5006 }],
        success: false,
      }),
    ).toMatchObject({ kind: "http", status: 400, code: "5006", retryable: false });
  });

  it("an error inside the stream is a `stream` error after the text so far", async () => {
    const ai = new FakeAi({ maxChunk: 4 }).answer({
      sse: sse(
        { response: "Hel" },
        { errors: [{ message: "3040: Capacity temporarily exceeded", code: 3040 }] },
      ),
    });
    const { error } = await failure(workersAI({ model: MODEL }), HI, { env: { AI: ai } });
    expect(error).toMatchObject({ kind: "stream", code: "3040", retryable: true });
  });

  it("a stream that ends without [DONE] was cut off", async () => {
    const ai = new FakeAi().answer({ sse: sse({ response: "Hel" }, { response: "lo" }) });
    const { error, events } = await failure(workersAI({ model: MODEL }), HI, { env: { AI: ai } });
    expect(error).toMatchObject({ kind: "stream", retryable: true });
    expect(events.map((e) => e.type)).toEqual(["message_start", "text_delta", "text_delta"]);
  });

  it("a binding that never answers times out; a stream that comes later is canceled", async () => {
    const ai = new FakeAi().answer({ never: true });
    const { error } = await failure(workersAI({ model: MODEL, stallMs: 20 }), HI, {
      env: { AI: ai },
    });
    expect(error).toMatchObject({ kind: "timeout", retryable: true });
    ai.late?.resolve(ai.stream(NATIVE_TEXT));
    await new Promise((r) => setTimeout(r, 10));
    expect(ai.canceledStreams).toBe(1);
  });

  it("a stream that stalls after its first bytes times out and is canceled", async () => {
    const ai = new FakeAi().answer({ sse: NATIVE_TEXT, stallAfterBytes: 60 });
    const { error } = await failure(workersAI({ model: MODEL, stallMs: 20 }), HI, {
      env: { AI: ai },
    });
    expect(error).toMatchObject({ kind: "timeout", retryable: true });
    expect(ai.canceledStreams).toBe(1);
  });

  it("aborting mid-stream stops reading at once", async () => {
    const ai = new FakeAi({ maxChunk: 8 }).answer({ sse: NATIVE_TEXT, delayMs: 2 });
    const controller = new AbortController();
    let caught: unknown;
    const seen: string[] = [];
    try {
      for await (const batch of workersAI({ model: MODEL }).streamBatches(ModelRequest.parse(HI), {
        env: { AI: ai },
        signal: controller.signal,
      })) {
        seen.push(...batch.map((e) => e.type));
        if (seen.includes("text_delta")) controller.abort();
      }
    } catch (error) {
      caught = error;
    }
    expect(caught).toMatchObject({ kind: "aborted" });
    expect(ai.canceledStreams).toBe(1);
    expect(seen).not.toContain("message_end");
  });

  it("an already canceled call does not reach the binding", async () => {
    const ai = new FakeAi().answer({ sse: NATIVE_TEXT });
    const controller = new AbortController();
    controller.abort();
    const { error } = await failure(workersAI({ model: MODEL }), HI, {
      env: { AI: ai },
      signal: controller.signal,
    });
    expect(error.kind).toBe("aborted");
    expect(ai.calls).toHaveLength(0);
  });
});

describe("a model that does not stream", () => {
  it("its whole result is one batch of events", async () => {
    const ai = new FakeAi().answer({
      value: {
        response: "Hi there",
        tool_calls: [],
        usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
      },
    });
    const response = await generate(workersAI({ model: MODEL }), HI, { env: { AI: ai } });
    expect(response).toMatchObject({
      text: "Hi there",
      provider: "workers-ai",
      model: MODEL,
      stopReason: "stop",
      usage: { promptTokens: 3, completionTokens: 2, totalTokens: 5 },
    });
  });
});
