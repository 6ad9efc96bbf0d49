import { describe, expect, it } from "vitest";
import type { ItemInput } from "../../../src/history/items";
import { anthropic } from "../../../src/providers/anthropic/anthropic";
import { generate } from "../../../src/providers/base/collect";
import { ProviderError } from "../../../src/providers/base/errors";
import {
  type CallOptions,
  ModelRequest,
  type ModelRequestInput,
  type StreamEvent,
  type ToolCall,
} from "../../../src/providers/base/types";
import {
  collectBatches,
  FakeProvider,
  type FakeReply,
  fixtureJson,
  fixturePaths,
  fixtureText,
  type RecordedRequest,
} from "../fake-provider";

/** Fixture paths the tests below used; the last test checks that none was left out. */
const used = new Set<string>();
function fx(name: string): string {
  const path = `anthropic/${name}`;
  used.add(path);
  return path;
}

/** What a recorded stream's `cache_*_input_tokens: 0` map to. */
const ZERO_CACHE = { cachedPromptTokens: 0, cacheWritePromptTokens: 0 };

const HELLO: ModelRequestInput = { messages: [{ role: "user", content: "Hi" }] };

interface Run {
  events: StreamEvent[];
  fake: FakeProvider;
}

async function run(
  reply: FakeReply,
  options: {
    seed?: number;
    maxChunk?: number;
    request?: ModelRequestInput;
    model?: string;
    call?: CallOptions;
  } = {},
): Promise<Run> {
  const fake = new FakeProvider({ seed: options.seed ?? 1, maxChunk: options.maxChunk ?? 1 << 20 });
  fake.reply(reply);
  const model = anthropic({ model: options.model ?? "claude-haiku-4-5", apiKey: "sk-test" });
  const events = await collectBatches(
    model.streamBatches(ModelRequest.parse(options.request ?? HELLO), {
      fetch: fake.fetch,
      ...options.call,
    }),
  );
  return { events, fake };
}

function textOf(events: StreamEvent[]): string {
  return events.flatMap((e) => (e.type === "text_delta" ? [e.text] : [])).join("");
}

function reasoningOf(events: StreamEvent[]): string {
  return events.flatMap((e) => (e.type === "reasoning_delta" ? [e.text] : [])).join("");
}

function callsOf(events: StreamEvent[]): ToolCall[] {
  return events.flatMap((e) => (e.type === "tool_call_end" ? [e.call] : []));
}

function endOf(events: StreamEvent[]) {
  const last = events.at(-1);
  if (last?.type !== "message_end") throw new Error(`last event is ${last?.type}`);
  return last;
}

function startOf(events: StreamEvent[]) {
  const first = events[0];
  if (first?.type !== "message_start") throw new Error(`first event is ${first?.type}`);
  return first;
}

/**
 * What the fixture's own `data:` lines say, read without our SSE parser or decoder: the
 * concatenated deltas of one kind, to compare against what the adapter produced.
 */
function wireDeltas(path: string, deltaType: string, field: string): string[] {
  const out: string[] = [];
  for (const line of fixtureText(path).split("\n")) {
    if (!line.startsWith("data: ")) continue;
    const data = JSON.parse(line.slice(6)) as { delta?: Record<string, string> };
    if (data.delta?.type === deltaType) out.push(data.delta[field] ?? "");
  }
  return out;
}

function recorded(name: string): RecordedRequest {
  return fixtureJson<RecordedRequest>(fx(`${name}.request.json`));
}

/** A synthetic Anthropic stream: one `event:` + `data:` frame per payload. */
function sse(...events: Record<string, unknown>[]): string {
  return events.map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`).join("");
}

const START = {
  type: "message_start",
  message: {
    id: "msg_1",
    model: "claude-haiku-4-5-20251001",
    usage: { input_tokens: 5, output_tokens: 1 },
  },
};

const SSE_FIXTURES = [
  "after-thinking-tool-result-text.sse",
  "parallel-tool-use-empty-input.sse",
  "redacted-thinking.sse",
  "text-after-tool-results.sse",
  "text-basic.sse",
  "text-short.sse",
  "thinking-long.sse",
  "thinking-then-tool-use.sse",
  "tool-use-json-vercel.sse",
  "tool-use-split-args.sse",
  "tool-use-truncated-max-tokens.sse",
];

describe("anthropic: recorded streams, any network chunking (G13)", () => {
  it.each(SSE_FIXTURES)(
    "G13: %s decodes to the same events whatever the chunking",
    async (name) => {
      const path = fx(name);
      const whole = await run({ fixture: path });
      expect(startOf(whole.events).provider).toBe("anthropic");
      expect(endOf(whole.events).type).toBe("message_end");
      expect(whole.events.filter((e) => e.type === "message_end")).toHaveLength(1);
      const chunkings = [
        { seed: 1, maxChunk: 1 },
        { seed: 2, maxChunk: 2 },
        { seed: 3, maxChunk: 3 },
        { seed: 4, maxChunk: 7 },
        { seed: 5, maxChunk: 16 },
      ];
      for (const chunking of chunkings) {
        const split = await run({ fixture: path }, chunking);
        expect(split.events, `seed ${chunking.seed}, chunks of 1..${chunking.maxChunk}`).toEqual(
          whole.events,
        );
      }
      // What the wire says, read independently of the decoder.
      expect(textOf(whole.events)).toBe(wireDeltas(path, "text_delta", "text").join(""));
      expect(reasoningOf(whole.events)).toBe(
        wireDeltas(path, "thinking_delta", "thinking").join(""),
      );
    },
  );
});

describe("anthropic: what each recorded stream decodes to", () => {
  it("G11 G12: text-basic (older shape, no cache fields, no request-id header)", async () => {
    const { events } = await run(
      { fixture: fx("text-basic.sse") },
      { model: "claude-3-opus-latest" },
    );
    expect(startOf(events)).toEqual({
      type: "message_start",
      provider: "anthropic",
      model: "claude-3-opus-latest",
      // no request-id header recorded: the message id names the answer
      requestId: "msg_4QpJur2dWWDjF6C758FbBw5vm12BaVipnK",
    });
    expect(events.filter((e) => e.type === "text_delta").map((e) => e.text)).toEqual([
      "Hello",
      " there",
      "!",
    ]);
    expect(endOf(events)).toEqual({
      type: "message_end",
      stopReason: "stop",
      providerStopReason: "end_turn",
      usage: { promptTokens: 11, completionTokens: 6, totalTokens: 17 },
      reasoning: [],
      // G14: a model without known prices costs null, not 0
      costEstimate: null,
    });
  });

  it("G12 G14: text-short: padded JSON, ping with a space, request id from the header, cost", async () => {
    const { events } = await run({ fixture: fx("text-short.sse") });
    expect(startOf(events)).toEqual({
      type: "message_start",
      provider: "anthropic",
      model: "claude-haiku-4-5-20251001",
      requestId: "req_011CZknL2bUdgvrtea9HYSrj",
    });
    expect(textOf(events)).toBe("Hello");
    expect(events.filter((e) => e.type === "usage").map((e) => e.usage)).toEqual([
      { ...ZERO_CACHE, promptTokens: 10, completionTokens: 2, totalTokens: 12 },
      { ...ZERO_CACHE, promptTokens: 10, completionTokens: 4, totalTokens: 14 },
    ]);
    const end = endOf(events);
    // The recorded usage carries cache_read/cache_creation_input_tokens: 0, mapped as such.
    expect(end.usage).toEqual({
      promptTokens: 10,
      completionTokens: 4,
      totalTokens: 14,
      ...ZERO_CACHE,
    });
    // claude-haiku-4-5: $1 in, $5 out per million
    expect(end.costEstimate).toBeCloseTo((10 * 1 + 4 * 5) / 1e6, 12);
  });

  it("G13: text-after-tool-results: emoji split across chunks stays whole", async () => {
    const { events } = await run({ fixture: fx("text-after-tool-results.sse") }, { maxChunk: 1 });
    const text = textOf(events);
    expect(
      text.startsWith("Here are two great names for your pet pelican:\n\n1. **Charles**"),
    ).toBe(true);
    expect(text.endsWith("name for your feathered friend! 🦅")).toBe(true);
    expect(text).not.toContain("\uFFFD");
    expect(startOf(events).requestId).toBe("req_011CZkTfpqPnYcgCs7qMz1za");
    expect(endOf(events)).toMatchObject({
      stopReason: "stop",
      usage: { promptTokens: 678, completionTokens: 82, totalTokens: 760 },
    });
  });

  it("G9 G11: parallel-tool-use-empty-input: two no-argument calls, input {}", async () => {
    const { events } = await run({ fixture: fx("parallel-tool-use-empty-input.sse") });
    expect(
      events.filter((e) => e.type === "tool_call_start").map((e) => [e.index, e.id, e.name]),
    ).toEqual([
      [0, "toolu_01LtHJmixrs9NcWQkK8hu8hj", "pelican_name_generator"],
      [1, "toolu_01N8a4jWyf116qKTMqKKmjyt", "pelican_name_generator"],
    ]);
    // an empty partial_json is no delta
    expect(events.some((e) => e.type === "tool_call_delta")).toBe(false);
    expect(callsOf(events)).toEqual([
      {
        id: "toolu_01LtHJmixrs9NcWQkK8hu8hj",
        name: "pelican_name_generator",
        arguments: "",
        input: {},
      },
      {
        id: "toolu_01N8a4jWyf116qKTMqKKmjyt",
        name: "pelican_name_generator",
        arguments: "",
        input: {},
      },
    ]);
    expect(textOf(events)).toBe("");
    expect(endOf(events)).toMatchObject({
      stopReason: "tool_calls",
      providerStopReason: "tool_use",
      usage: { promptTokens: 542, completionTokens: 62 },
    });
  });

  it("G9 G13: tool-use-split-args: fragments assembled, deltas as sent, text before the call", async () => {
    const path = fx("tool-use-split-args.sse");
    const { events } = await run({ fixture: path }, { maxChunk: 5, seed: 9 });
    expect(textOf(events)).toBe("I'll check the current weather in Paris for you.");
    expect(events.filter((e) => e.type === "tool_call_delta").map((e) => e.argumentsDelta)).toEqual(
      ['{"locati', 'on": "P', "ar", 'is"}'],
    );
    expect(callsOf(events)).toEqual([
      {
        id: "toolu_01NRLabsLyVHZPKxbKvkfSMn",
        name: "get_weather",
        arguments: '{"location": "Paris"}',
        input: { location: "Paris" },
      },
    ]);
    const types = events.map((e) => e.type);
    expect(types.lastIndexOf("text_delta")).toBeLessThan(types.indexOf("tool_call_start"));
    // message_delta has only output_tokens: input comes from message_start
    expect(endOf(events)).toMatchObject({
      stopReason: "tool_calls",
      usage: { promptTokens: 377, completionTokens: 65, totalTokens: 442, cachedPromptTokens: 0 },
    });
  });

  it("G9: tool-use-json-vercel: a JSON tool's arguments", async () => {
    const { events } = await run({ fixture: fx("tool-use-json-vercel.sse") });
    expect(callsOf(events)).toEqual([
      {
        id: "toolu_01KFbKqPYSuAKujiL6mTfzYA",
        name: "json",
        arguments:
          '{"elements": [{"location": "San Francisco", "temperature": 58, "condition": "sunny"}]}',
        input: { elements: [{ location: "San Francisco", temperature: 58, condition: "sunny" }] },
      },
    ]);
    expect(endOf(events)).toMatchObject({ usage: { promptTokens: 849, completionTokens: 47 } });
  });

  it("G9 G11: tool-use-truncated-max-tokens: the unclosed call ends with partial arguments, input null, stop length", async () => {
    const path = fx("tool-use-truncated-max-tokens.sse");
    const { events } = await run({ fixture: path }, { maxChunk: 3 });
    expect(textOf(events)).toBe(
      "I'll create a comprehensive tax guide for someone with multiple W2s and save it in a file called taxes.txt. Let me do that for you now.",
    );
    const partial = wireDeltas(path, "input_json_delta", "partial_json").join("");
    expect(partial.startsWith('{"filename": "taxes.txt", "lines_of_text": [')).toBe(true);
    expect(partial.endsWith('"Filing taxes')).toBe(true);
    expect(callsOf(events)).toEqual([
      { id: "toolu_01EKqbqmZrGRXy18eN7m9kvY", name: "make_file", arguments: partial, input: null },
    ]);
    const types = events.map((e) => e.type);
    expect(types.indexOf("tool_call_end")).toBe(types.length - 2);
    expect(endOf(events)).toMatchObject({
      stopReason: "length",
      providerStopReason: "max_tokens",
      usage: { promptTokens: 450, completionTokens: 124 },
    });
  });

  it("G9: a call never closed is not callable even when its partial JSON parses", async () => {
    const body = sse(
      START,
      {
        type: "content_block_start",
        index: 0,
        content_block: { type: "tool_use", id: "toolu_x", name: "f", input: {} },
      },
      {
        type: "content_block_delta",
        index: 0,
        delta: { type: "input_json_delta", partial_json: '{"a": 1}' },
      },
      { type: "message_delta", delta: { stop_reason: "max_tokens" }, usage: { output_tokens: 9 } },
      { type: "message_stop" },
    );
    const { events } = await run({ status: 200, body });
    expect(callsOf(events)).toEqual([
      { id: "toolu_x", name: "f", arguments: '{"a": 1}', input: null },
    ]);
    expect(endOf(events).stopReason).toBe("length");
  });

  it("G9: a tool_use start that already carries its input (no deltas) keeps it; unknown blocks are ignored", async () => {
    const body = sse(
      START,
      {
        type: "content_block_start",
        index: 0,
        content_block: { type: "server_tool_use", id: "srvtoolu_1", name: "web_search", input: {} },
      },
      {
        type: "content_block_delta",
        index: 0,
        delta: { type: "input_json_delta", partial_json: '{"query": "x"}' },
      },
      { type: "content_block_stop", index: 0 },
      {
        type: "content_block_start",
        index: 1,
        content_block: { type: "tool_use", id: "toolu_w", name: "f", input: { q: "whole" } },
      },
      { type: "content_block_stop", index: 1 },
      { type: "message_delta", delta: { stop_reason: "tool_use" }, usage: { output_tokens: 9 } },
      { type: "message_stop" },
    );
    const { events } = await run({ status: 200, body });
    expect(callsOf(events)).toEqual([
      { id: "toolu_w", name: "f", arguments: '{"q":"whole"}', input: { q: "whole" } },
    ]);
  });

  it("J1: thinking-long: thinking streamed as reasoning, the signed block returned for replay", async () => {
    const path = fx("thinking-long.sse");
    const { events } = await run({ fixture: path }, { model: "claude-sonnet-4-0" });
    const thinking =
      "This is a straightforward question about pedestrian safety. I should provide clear, helpful advice about how to safely cross a street. This is basic safety information that could help prevent accidents.";
    expect(reasoningOf(events)).toBe(thinking);
    // 14 thinking deltas on the wire, one of them empty
    expect(events.filter((e) => e.type === "reasoning_delta")).toHaveLength(13);
    expect(events.filter((e) => e.type === "text_delta")).toHaveLength(95);
    const [signature] = wireDeltas(path, "signature_delta", "signature");
    expect(signature?.length).toBeGreaterThan(100);
    expect(endOf(events)).toMatchObject({
      stopReason: "stop",
      reasoning: [{ provider: "anthropic", text: thinking, signature }],
      usage: { promptTokens: 43, completionTokens: 282 },
    });
    // thinking comes before the answer
    const types = events.map((e) => e.type);
    expect(types.lastIndexOf("reasoning_delta")).toBeLessThan(types.indexOf("text_delta"));
  });

  it("J1: redacted-thinking: redacted blocks kept as data for replay, no reasoning text, pings ignored", async () => {
    const path = fx("redacted-thinking.sse");
    const { events } = await run({ fixture: path }, { model: "claude-sonnet-4-5-20250929" });
    const data = fixtureText(path)
      .split("\n")
      .filter((line) => line.includes('"redacted_thinking"'))
      .map(
        (line) =>
          (JSON.parse(line.slice(6)) as { content_block: { data: string } }).content_block.data,
      );
    expect(data).toHaveLength(2);
    expect(data[0]?.startsWith("EqkECkYIBxgCKkA8AZ4n")).toBe(true);
    expect(reasoningOf(events)).toBe("");
    expect(startOf(events).requestId).toBe("msg_018XZkwvj9asBiffg3fXt88s");
    expect(
      textOf(events).startsWith(
        "I notice that you've sent what appears to be some kind of test string",
      ),
    ).toBe(true);
    expect(textOf(events).endsWith("a legitimate task or question?")).toBe(true);
    expect(endOf(events)).toMatchObject({
      stopReason: "stop",
      reasoning: data.map((redacted) => ({ provider: "anthropic", text: "", redacted })),
      usage: { promptTokens: 92, completionTokens: 189 },
    });
  });

  it("J1 G12: thinking-then-tool-use: signed thinking, then a call; thinking tokens reported", async () => {
    const { events } = await run({ fixture: fx("thinking-then-tool-use.sse") });
    expect(reasoningOf(events)).toBe(
      "The user wants me to:\n1. Use the fixed_version tool\n2. Tell them the version\n3. Make a short joke about it\n\nLet me first call the fixed_version tool to see what version it returns.",
    );
    expect(callsOf(events)).toEqual([
      { id: "toolu_01825dXWLSoJwCst1qTsiWdb", name: "fixed_version", arguments: "", input: {} },
    ]);
    const end = endOf(events);
    expect(end.reasoning).toHaveLength(1);
    expect(end.reasoning[0]?.signature?.startsWith("EoQDCm0IDhgCKkCDzGs2")).toBe(true);
    expect(end).toMatchObject({
      stopReason: "tool_calls",
      usage: {
        promptTokens: 598,
        completionTokens: 92,
        reasoningTokens: 53,
        cachedPromptTokens: 0,
      },
    });
    expect(startOf(events).requestId).toBe("req_011CbVjqiXA7wxBTF7BBSFMV");
  });

  it("G10: after-thinking-tool-result-text through generate()", async () => {
    const fake = new FakeProvider({ seed: 3, maxChunk: 4 }).reply({
      fixture: fx("after-thinking-tool-result-text.sse"),
    });
    const response = await generate(anthropic({ model: "claude-haiku-4-5", apiKey: "k" }), HELLO, {
      fetch: fake.fetch,
    });
    expect(response.text.startsWith("The version is **0.32a0**.")).toBe(true);
    expect(response.text).toContain('going through a "0.32a good time" before becoming stable! 😄');
    expect(response).toMatchObject({
      provider: "anthropic",
      model: "claude-haiku-4-5-20251001",
      requestId: "req_011CbVjqnNb2UteHkMVedZXS",
      stopReason: "stop",
      toolCalls: [],
      usage: { promptTokens: 707, completionTokens: 89, reasoningTokens: 0 },
    });
  });
});

describe("anthropic: recorded requests are reproduced from conversation items (G5, G8)", () => {
  async function sent(
    request: ModelRequestInput,
    model: string,
    reply: FakeReply = { fixture: fx("text-short.sse") },
  ) {
    const fake = new FakeProvider().reply(reply);
    await collectBatches(
      anthropic({ model, apiKey: "sk-test" }).streamBatches(ModelRequest.parse(request), {
        fetch: fake.fetch,
      }),
    );
    const seen = fake.requests[0];
    if (!seen) throw new Error("no request");
    return seen;
  }

  it("G3: text-short.request.json, byte-for-byte body, URL and headers", async () => {
    const want = recorded("text-short");
    const seen = await sent(
      { messages: [{ role: "user", content: "Say just hello" }], temperature: 1, maxTokens: 8192 },
      "claude-haiku-4-5-20251001",
    );
    expect(seen.url).toBe(want.uri);
    expect(seen.headers.get("x-api-key")).toBe("sk-test");
    expect(seen.headers.get("anthropic-version")).toBe("2023-06-01");
    expect(seen.body).toEqual(want.body);
  });

  it("G8: parallel-tool-use-empty-input.request.json: tool layout {name, description, input_schema}", async () => {
    const want = recorded("parallel-tool-use-empty-input");
    const seen = await sent(
      {
        messages: [{ role: "user", content: "Two names for a pet pelican" }],
        tools: [{ name: "pelican_name_generator", parameters: { properties: {}, type: "object" } }],
        temperature: 1,
        maxTokens: 8192,
      },
      "claude-haiku-4-5-20251001",
    );
    expect(seen.body).toEqual(want.body);
  });

  it("G5: text-after-tool-results.request.json: both calls in one assistant message, both results in one user message", async () => {
    const want = recorded("text-after-tool-results");
    const messages: ItemInput[] = [
      { type: "message", role: "user", content: "Two names for a pet pelican" },
      { type: "message", role: "assistant", content: " " },
      {
        type: "function_call",
        callId: "toolu_01LtHJmixrs9NcWQkK8hu8hj",
        name: "pelican_name_generator",
        arguments: "",
      },
      {
        type: "function_call",
        callId: "toolu_01N8a4jWyf116qKTMqKKmjyt",
        name: "pelican_name_generator",
        arguments: "",
      },
      {
        type: "function_call_output",
        callId: "toolu_01LtHJmixrs9NcWQkK8hu8hj",
        name: "pelican_name_generator",
        output: "Charles",
      },
      {
        type: "function_call_output",
        callId: "toolu_01N8a4jWyf116qKTMqKKmjyt",
        name: "pelican_name_generator",
        output: "Sammy",
      },
    ];
    const seen = await sent(
      {
        messages,
        tools: [{ name: "pelican_name_generator", parameters: { properties: {}, type: "object" } }],
        temperature: 1,
        maxTokens: 8192,
      },
      "claude-haiku-4-5-20251001",
    );
    expect(seen.body).toEqual(want.body);
  });

  const FIXED_VERSION = {
    name: "fixed_version",
    description: "Return a fixed test version string",
    parameters: { properties: {}, type: "object" },
  };
  const ASK =
    "Use the fixed_version tool. Then tell me the version and make one short joke about it. Think about it first.";

  /** The recorded body without `thinking.display`, a knob we deliberately do not send. */
  function withoutDisplay(body: Record<string, unknown>): Record<string, unknown> {
    const thinking = { ...(body.thinking as Record<string, unknown>) };
    expect(thinking.display).toBe("summarized");
    delete thinking.display;
    return { ...body, thinking };
  }

  it("G16: thinking-then-tool-use.request.json: max_tokens defaults to the model's output limit (64000)", async () => {
    const want = recorded("thinking-then-tool-use");
    const seen = await sent(
      {
        messages: [{ role: "user", content: ASK }],
        tools: [FIXED_VERSION],
        temperature: 1,
        reasoning: { budgetTokens: 1024 },
      },
      "claude-haiku-4-5-20251001",
    );
    // differs only in thinking.display
    expect(seen.body).toEqual(withoutDisplay(want.body));
  });

  it("G5 J1: after-thinking-tool-result-text.request.json is rebuilt from the decoded thinking + call + tool output", async () => {
    const model = anthropic({ model: "claude-haiku-4-5-20251001", apiKey: "sk-test" });
    const first = new FakeProvider({ seed: 7, maxChunk: 5 }).reply({
      fixture: fx("thinking-then-tool-use.sse"),
    });
    const base = {
      tools: [FIXED_VERSION],
      temperature: 1,
      reasoning: { budgetTokens: 1024 },
    };
    const turn = await generate(
      model,
      { ...base, messages: [{ role: "user", content: ASK }] },
      {
        fetch: first.fetch,
      },
    );
    const [call] = turn.toolCalls;
    if (!call) throw new Error("no call");
    // The turn has no text message: its thinking rides on the first function call.
    const items: ItemInput[] = [
      { type: "message", role: "user", content: ASK },
      {
        type: "function_call",
        callId: call.id,
        name: call.name,
        arguments: call.arguments,
        metadata: { reasoning: turn.reasoningBlocks },
      },
      { type: "function_call_output", callId: call.id, name: call.name, output: "0.32a0" },
    ];
    const second = new FakeProvider({ seed: 8, maxChunk: 5 }).reply({
      fixture: fx("after-thinking-tool-result-text.sse"),
    });
    const answer = await generate(model, { ...base, messages: items }, { fetch: second.fetch });
    const want = recorded("after-thinking-tool-result-text");
    expect(second.requests[0]?.url).toBe(want.uri);
    expect(second.requests[0]?.body).toEqual(withoutDisplay(want.body));
    expect(answer.text.startsWith("The version is **0.32a0**.")).toBe(true);
  });

  it("J1: thinking-long.request.json and redacted-thinking.request.json: thinking budget", async () => {
    for (const [name, model, text] of [
      ["thinking-long", "claude-sonnet-4-0", "How do I cross the street?"],
      [
        "redacted-thinking",
        "claude-sonnet-4-5-20250929",
        "ANTHROPIC_MAGIC_STRING_TRIGGER_REDACTED_THINKING_46C9A13E193C177646C7398A98432ECCCE4C1253D5E2D82641AC0E52CC2876CB",
      ],
    ] as const) {
      const want = recorded(name);
      const seen = await sent(
        {
          messages: [{ role: "user", content: text }],
          maxTokens: 4096,
          reasoning: { budgetTokens: 1024 },
        },
        model,
      );
      // recorded against the SDK's ?beta=true endpoint; we call the plain one
      expect(want.uri).toBe("https://api.anthropic.com/v1/messages?beta=true");
      expect(seen.url).toBe("https://api.anthropic.com/v1/messages");
      expect(seen.body).toEqual(want.body);
    }
  });

  it("G16: error-404-not-found.request.json: an unknown model gets max_tokens 4096", async () => {
    const want = recorded("error-404-not-found");
    const seen = await sent({ messages: [{ role: "user", content: "hello" }] }, "claude-sonet-4-5");
    // differs only in stream: the recording was not streamed, we always stream
    expect(want.body.stream).toBe(false);
    expect(seen.body).toEqual({ ...want.body, stream: true });
  });

  it("providerOptions merged last: error-400-invalid-request.request.json", async () => {
    const want = recorded("error-400-invalid-request");
    const seen = await sent(
      {
        messages: [{ role: "user", content: "What is 2+2?" }],
        maxTokens: 4096,
        providerOptions: { output_config: { effort: "xhigh" } },
      },
      "claude-opus-4-6",
    );
    // differs only in stream, as above
    expect(seen.body).toEqual({ ...want.body, stream: true });
  });

  it("error-404-count-tokens.request.json: same messages and model as our body", async () => {
    // We have no count_tokens call; the messages part of that body must still match ours.
    const want = recorded("error-404-count-tokens");
    expect(want.uri).toContain("/v1/messages/count_tokens");
    const seen = await sent(
      { messages: [{ role: "user", content: "hello" }] },
      "claude-does-not-exist",
    );
    expect({ model: seen.body.model, messages: seen.body.messages }).toEqual(want.body);
  });
});

describe("anthropic: errors (H7)", () => {
  it.each([
    [
      "error-400-invalid-request",
      400,
      "invalid_request_error",
      "req_011Ca7jT9AHpgXgdv8igm4z9",
      "This model does not support effort level 'xhigh'",
    ],
    [
      "error-404-not-found",
      404,
      "not_found_error",
      "req_011CdufXo8Y2LVfY2veyuQWG",
      "model: claude-sonet-4-5",
    ],
    [
      "error-404-count-tokens",
      404,
      "not_found_error",
      "req_011CVEA3SF7rnb3DuBZytqQa",
      "model: claude-does-not-exist",
    ],
  ] as const)(
    "H7: %s.json answers a typed, non-retryable http error",
    async (name, status, code, requestId, message) => {
      const error = await run({ fixture: fx(`${name}.json`) }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ProviderError);
      expect(error).toMatchObject({
        provider: "anthropic",
        kind: "http",
        status,
        code,
        requestId,
        retryable: false,
      });
      expect((error as ProviderError).message).toContain(message);
      // the status really is the recorded one
      expect(
        fixtureJson<{ status: { code: number } }>(fx(`${name}.response-meta.json`)).status.code,
      ).toBe(status);
    },
  );

  it("H7: HTTP 529 overloaded is retryable and Retry-After is read", async () => {
    const body = JSON.stringify({
      type: "error",
      error: { type: "overloaded_error", message: "Overloaded" },
      request_id: "req_529",
    });
    const error = await run({ status: 529, body, headers: { "retry-after": "3" } }).catch(
      (e: unknown) => e,
    );
    expect(error).toMatchObject({
      kind: "http",
      status: 529,
      code: "overloaded_error",
      requestId: "req_529",
      retryable: true,
      retryAfterMs: 3000,
    });
  });

  it("H7: an in-stream `event: error` overloaded_error is a retryable stream error, after the deltas already sent", async () => {
    const body = `${sse(
      START,
      { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
      { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Par" } },
    )}event: error\ndata: {"type":"error","error":{"details":null,"type":"overloaded_error","message":"Overloaded"},"request_id":"req_011CSHoEeqs5C35K2UUqR7Fy"}\n\n`;
    for (const maxChunk of [1, 8, 1 << 20]) {
      const fake = new FakeProvider({ maxChunk }).reply({ status: 200, body });
      const events: StreamEvent[] = [];
      const error = await (async () => {
        for await (const batch of anthropic({
          model: "claude-haiku-4-5",
          apiKey: "k",
        }).streamBatches(ModelRequest.parse(HELLO), { fetch: fake.fetch })) {
          events.push(...batch);
        }
      })().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ProviderError);
      expect(error).toMatchObject({
        provider: "anthropic",
        kind: "stream",
        code: "overloaded_error",
        requestId: "req_011CSHoEeqs5C35K2UUqR7Fy",
        retryable: true,
        status: null,
      });
      // Everything decoded before the error is delivered, whatever the network split.
      expect(textOf(events)).toBe("Par");
      expect(events.some((e) => e.type === "message_end")).toBe(false);
    }
  });

  it("H7: an in-stream invalid_request_error is not retryable", async () => {
    const body = `${sse(START)}event: error\ndata: {"type":"error","error":{"type":"invalid_request_error","message":"bad"}}\n\n`;
    const error = await run({ status: 200, body }).catch((e: unknown) => e);
    expect(error).toMatchObject({
      kind: "stream",
      code: "invalid_request_error",
      retryable: false,
    });
  });

  it("a stream that ends without message_stop is a stream error, not a quiet end", async () => {
    const whole = fixtureText(fx("text-short.sse"));
    const cut = whole.slice(0, whole.indexOf("event: message_stop"));
    const error = await run({ status: 200, body: cut }, { maxChunk: 5 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ provider: "anthropic", kind: "stream" });
  });

  it("a connection lost mid-stream is a retryable network error", async () => {
    const error = await run({ fixture: fx("text-short.sse"), cutAfterBytes: 900 }).catch(
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ provider: "anthropic", kind: "network", retryable: true });
  });

  it("aborting the signal cancels a call that has not answered", async () => {
    const controller = new AbortController();
    const pending = run({ hang: true }, { call: { signal: controller.signal } }).catch(
      (e: unknown) => e,
    );
    // later than the fake's listener (it does not look at an already aborted signal)
    setTimeout(() => controller.abort(), 10);
    expect(await pending).toMatchObject({ provider: "anthropic", kind: "aborted" });
  });

  it("aborting mid-stream stops at once and cancels the upstream body", async () => {
    const fake = new FakeProvider().reply({
      stallAfterBytes: 700,
      body: fixtureText(fx("text-short.sse")),
    });
    const controller = new AbortController();
    const events: StreamEvent[] = [];
    const error = await (async () => {
      for await (const batch of anthropic({ model: "claude-haiku-4-5", apiKey: "k" }).streamBatches(
        ModelRequest.parse(HELLO),
        { fetch: fake.fetch, signal: controller.signal },
      )) {
        events.push(...batch);
        controller.abort();
      }
    })().catch((e: unknown) => e);
    expect(error).toMatchObject({ provider: "anthropic", kind: "aborted" });
    expect(startOf(events).requestId).toBe("msg_01T8kTq7cYyYJeQ5DxcVUc6D");
    expect(fake.canceledStreams).toBe(1);
  });
});

describe("anthropic: keys, base URL, options", () => {
  it("key and base URL come from the env when not given", async () => {
    const fake = new FakeProvider().reply({ fixture: fx("text-short.sse") });
    await collectBatches(
      anthropic({ model: "claude-haiku-4-5" }).streamBatches(ModelRequest.parse(HELLO), {
        fetch: fake.fetch,
        env: { ANTHROPIC_API_KEY: "sk-env", ANTHROPIC_BASE_URL: "https://gateway.test/anthropic/" },
      }),
    );
    expect(fake.requests[0]?.url).toBe("https://gateway.test/anthropic/v1/messages");
    expect(fake.requests[0]?.headers.get("x-api-key")).toBe("sk-env");
  });

  it("G16: no key is a config error naming the secret, before any request", async () => {
    const fake = new FakeProvider();
    const error = await collectBatches(
      anthropic({ model: "claude-haiku-4-5" }).streamBatches(ModelRequest.parse(HELLO), {
        fetch: fake.fetch,
        env: {},
      }),
    ).catch((e: unknown) => e);
    expect(error).toMatchObject({ provider: "anthropic", kind: "config" });
    expect((error as Error).message).toContain("ANTHROPIC_API_KEY");
    expect(fake.requests).toHaveLength(0);
  });

  it("reasoning.include false keeps thinking out of the deltas but returns the block", async () => {
    const { events } = await run(
      { fixture: fx("thinking-then-tool-use.sse") },
      { request: { ...HELLO, reasoning: { budgetTokens: 1024, include: false } } },
    );
    expect(events.some((e) => e.type === "reasoning_delta")).toBe(false);
    expect(endOf(events).reasoning).toHaveLength(1);
  });

  it("G12 G14: cache reads and writes count as prompt tokens, each reported and priced", async () => {
    const body = sse(
      {
        type: "message_start",
        message: {
          id: "msg_c",
          model: "claude-sonnet-4-5",
          usage: {
            input_tokens: 10,
            cache_read_input_tokens: 1000,
            cache_creation_input_tokens: 200,
            output_tokens: 1,
          },
        },
      },
      { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
      { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "ok" } },
      { type: "content_block_stop", index: 0 },
      { type: "message_delta", delta: { stop_reason: "end_turn" }, usage: { output_tokens: 3 } },
      { type: "message_stop" },
    );
    const { events } = await run({ status: 200, body }, { model: "claude-sonnet-4-5" });
    const end = endOf(events);
    expect(end.usage).toEqual({
      promptTokens: 1210,
      completionTokens: 3,
      totalTokens: 1213,
      cachedPromptTokens: 1000,
      cacheWritePromptTokens: 200,
    });
    // sonnet 4: $3 in, $0.30 cache read, $3.75 cache write, $15 out per million
    expect(end.costEstimate).toBeCloseTo((10 * 3 + 1000 * 0.3 + 200 * 3.75 + 3 * 15) / 1e6, 12);
  });

  it("G11: stop reasons normalized", async () => {
    const cases = [
      ["end_turn", "stop"],
      ["stop_sequence", "stop"],
      ["max_tokens", "length"],
      ["tool_use", "tool_calls"],
      ["refusal", "content_filter"],
      ["pause_turn", "other"],
    ] as const;
    for (const [wire, normalized] of cases) {
      const body = sse(
        START,
        { type: "message_delta", delta: { stop_reason: wire }, usage: { output_tokens: 1 } },
        { type: "message_stop" },
      );
      const { events } = await run({ status: 200, body });
      expect(endOf(events)).toMatchObject({ stopReason: normalized, providerStopReason: wire });
    }
  });

  it("G18: the forced output tool's input comes back as text and is parsed as the output", async () => {
    const body = sse(
      START,
      {
        type: "content_block_start",
        index: 0,
        content_block: { type: "tool_use", id: "toolu_o", name: "answer", input: {} },
      },
      {
        type: "content_block_delta",
        index: 0,
        delta: { type: "input_json_delta", partial_json: '{"city": "Pa' },
      },
      {
        type: "content_block_delta",
        index: 0,
        delta: { type: "input_json_delta", partial_json: 'ris"}' },
      },
      { type: "content_block_stop", index: 0 },
      { type: "message_delta", delta: { stop_reason: "tool_use" }, usage: { output_tokens: 9 } },
      { type: "message_stop" },
    );
    const fake = new FakeProvider({ maxChunk: 3 }).reply({ status: 200, body });
    const response = await generate(
      anthropic({ model: "claude-haiku-4-5", apiKey: "k" }),
      {
        ...HELLO,
        outputSchema: { type: "object", properties: { city: { type: "string" } } },
        outputName: "answer",
      },
      { fetch: fake.fetch },
    );
    expect(fake.requests[0]?.body.tool_choice).toEqual({ type: "tool", name: "answer" });
    expect(response).toMatchObject({
      text: '{"city": "Paris"}',
      output: { city: "Paris" },
      outputError: null,
      toolCalls: [],
      stopReason: "stop",
      providerStopReason: "tool_use",
    });
  });

  it("G18: an answer that is not JSON is reported in outputError, not thrown", async () => {
    const fake = new FakeProvider().reply({ fixture: fx("text-short.sse") });
    const response = await generate(
      anthropic({ model: "claude-haiku-4-5", apiKey: "k" }),
      { ...HELLO, outputSchema: { type: "array" } },
      { fetch: fake.fetch },
    );
    // an array schema cannot be a tool input: asked for by instructions
    expect(fake.requests[0]?.body.tools).toBeUndefined();
    expect(String(fake.requests[0]?.body.system)).toContain('{"type":"array"}');
    expect(response.output).toBeUndefined();
    expect(response.outputError).toMatch(/not valid JSON/);
  });
});

describe("anthropic: fixture coverage", () => {
  it("every file of fixtures/providers/anthropic is used by a test above", () => {
    const all = fixturePaths().filter((path) => path.startsWith("anthropic/"));
    expect(all.length).toBe(34);
    // response-meta files are replayed with their bodies; the error ones are also read above
    for (const path of all) {
      if (path.endsWith(".response-meta.json")) {
        const body = path.replace(".response-meta.json", "");
        expect(used.has(`${body}.sse`) || used.has(`${body}.json`), path).toBe(true);
      } else {
        expect(used.has(path), path).toBe(true);
      }
    }
  });
});
