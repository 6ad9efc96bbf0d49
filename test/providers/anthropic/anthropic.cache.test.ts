import { describe, expect, it } from "vitest";
import type { ItemInput } from "../../../src/history/items";
import { anthropic, toAnthropicBody } from "../../../src/providers/anthropic/anthropic";
import { generate } from "../../../src/providers/base/collect";
import { capabilitiesFor, estimateCost } from "../../../src/providers/base/pricing";
import {
  addUsage,
  ModelRequest,
  type ModelRequestInput,
  usage,
} from "../../../src/providers/base/types";
import { FakeProvider } from "../fake-provider";

const user = (text: string): ItemInput => ({ type: "message", role: "user", content: text });
const assistant = (text: string): ItemInput => ({
  type: "message",
  role: "assistant",
  content: text,
});

const CONVERSATION: ModelRequestInput = {
  system: "You are terse.",
  tools: [{ name: "lookup" }, { name: "search" }],
  messages: [user("first question"), assistant("first answer"), user("second question")],
};

function cachedBody(request: ModelRequestInput, promptCaching = true) {
  return toAnthropicBody(ModelRequest.parse(request), {
    model: "claude-sonnet-4-5",
    maxTokens: 1024,
    promptCaching,
  });
}

/** Every `cache_control` in a body, wherever it is. */
function breakpoints(body: unknown): number {
  return JSON.stringify(body).split('"cache_control"').length - 1;
}

describe("anthropic prompt caching", () => {
  it("marks the instructions, the last tool and the message before the newest one", () => {
    const body = cachedBody(CONVERSATION);
    expect(body.system).toEqual([
      { type: "text", text: "You are terse.", cache_control: { type: "ephemeral" } },
    ]);
    expect(body.tools?.map((t) => t.cache_control)).toEqual([undefined, { type: "ephemeral" }]);
    expect(body.messages.map((m) => m.content.map((b) => b.cache_control))).toEqual([
      [undefined],
      [{ type: "ephemeral" }],
      [undefined],
    ]);
    // The API allows four breakpoints; we use at most three.
    expect(breakpoints(body)).toBe(3);
  });

  it("is off by default: no cache_control anywhere, system stays a string", () => {
    const body = cachedBody(CONVERSATION, false);
    expect(breakpoints(body)).toBe(0);
    expect(body.system).toBe("You are terse.");
  });

  it("a first turn (one message, no tools, no system) gets no breakpoint", () => {
    expect(breakpoints(cachedBody({ messages: [user("hello")] }))).toBe(0);
  });

  it("after tool work, only the last block of the prefix is marked", () => {
    const body = cachedBody({
      messages: [
        user("weather?"),
        { type: "function_call", callId: "c1", name: "lookup", arguments: "{}" },
        { type: "function_call_output", callId: "c1", name: "lookup", output: "sunny" },
        assistant("It is sunny."),
        user("and tomorrow?"),
      ],
    });
    const prefix = body.messages.at(-2);
    expect(prefix?.role).toBe("assistant");
    expect(prefix?.content.at(-1)).toEqual({
      type: "text",
      text: "It is sunny.",
      cache_control: { type: "ephemeral" },
    });
    expect(breakpoints(body)).toBe(1);
  });

  it("a prefix ending in a thinking block gets no breakpoint (the API refuses one there)", () => {
    const thinking = { provider: "anthropic", text: "Hmm.", signature: "sig" };
    const body = cachedBody({
      messages: [
        user("q"),
        { type: "message", role: "assistant", content: "", extra: { reasoning: [thinking] } },
        user("again"),
      ],
    });
    expect(body.messages[1]?.content).toEqual([
      { type: "thinking", thinking: "Hmm.", signature: "sig" },
    ]);
    expect(breakpoints(body)).toBe(0);
  });

  it("the adapter option reaches the wire; cache usage comes back priced (G12, G14)", async () => {
    const events = [
      {
        type: "message_start",
        message: {
          id: "msg_1",
          model: "claude-sonnet-4-5",
          usage: {
            input_tokens: 20,
            cache_creation_input_tokens: 0,
            cache_read_input_tokens: 3000,
            output_tokens: 1,
          },
        },
      },
      { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
      { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Yes." } },
      { type: "content_block_stop", index: 0 },
      { type: "message_delta", delta: { stop_reason: "end_turn" }, usage: { output_tokens: 4 } },
      { type: "message_stop" },
    ];
    const fake = new FakeProvider();
    fake.reply({
      status: 200,
      body: events.map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`).join(""),
    });
    const model = anthropic({ model: "claude-sonnet-4-5", apiKey: "k", promptCaching: true });
    const response = await generate(model, CONVERSATION, { fetch: fake.fetch });
    expect(breakpoints(fake.requests[0]?.body)).toBe(3);
    expect(response.usage).toEqual({
      promptTokens: 3020,
      completionTokens: 4,
      totalTokens: 3024,
      cachedPromptTokens: 3000,
      cacheWritePromptTokens: 0,
    });
    expect(response.costEstimate).toBeCloseTo((20 * 3 + 3000 * 0.3 + 4 * 15) / 1e6, 12);
  });
});

describe("cache token usage across providers (G12, G14)", () => {
  it("cache writes are summed over rounds and priced at the write rate", () => {
    const a = usage({ promptTokens: 1200, completionTokens: 5, cacheWritePromptTokens: 1000 });
    const b = usage({ promptTokens: 1210, completionTokens: 5, cachedPromptTokens: 1000 });
    const sum = addUsage(a, b);
    expect(sum).toMatchObject({ cachedPromptTokens: 1000, cacheWritePromptTokens: 1000 });
    const caps = capabilitiesFor("claude-haiku-4-5");
    expect(caps.cacheWriteInputPricePerMillion).toBe(1.25);
    // haiku 4.5: $1 in, $0.10 read, $1.25 write, $5 out per million
    expect(estimateCost(caps, a)).toBeCloseTo((200 * 1 + 1000 * 1.25 + 5 * 5) / 1e6, 12);
  });

  it("a model without a write price charges cache writes as input", () => {
    const caps = capabilitiesFor("gpt-4o-mini");
    const u = usage({ promptTokens: 1000, completionTokens: 0, cacheWritePromptTokens: 1000 });
    expect(estimateCost(caps, u)).toBeCloseTo((1000 * 0.15) / 1e6, 12);
  });
});
