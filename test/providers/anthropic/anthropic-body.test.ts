import { describe, expect, it } from "vitest";
import type { ItemInput } from "../../../src/history/items";
import {
  type AnthropicBody,
  EFFORT_BUDGET_TOKENS,
  LEADING_USER_TEXT,
  outputMode,
  toAnthropicBody,
} from "../../../src/providers/anthropic/anthropic";
import { ProviderError } from "../../../src/providers/base/errors";
import { ModelRequest, type ModelRequestInput } from "../../../src/providers/base/types";

function body(request: ModelRequestInput, maxTokens = 4096): AnthropicBody {
  return toAnthropicBody(ModelRequest.parse(request), { model: "claude-test", maxTokens });
}

function messagesOf(items: ItemInput[]) {
  return body({ messages: items }).messages;
}

const user = (text: string): ItemInput => ({ type: "message", role: "user", content: text });
const assistant = (text: string, extra: Record<string, unknown> = {}): ItemInput => ({
  type: "message",
  role: "assistant",
  content: text,
  extra: extra as never,
});
const call = (callId: string, args = "{}", metadata?: Record<string, unknown>): ItemInput => ({
  type: "function_call",
  callId,
  name: "lookup",
  arguments: args,
  ...(metadata ? { metadata: metadata as never } : {}),
});
const output = (callId: string, text: string, isError = false): ItemInput => ({
  type: "function_call_output",
  callId,
  name: "lookup",
  output: text,
  isError,
});

const THINKING = { provider: "anthropic", text: "Let me look.", signature: "sig-1" };
const REDACTED = { provider: "anthropic", text: "", redacted: "opaque==" };

describe("anthropic body: system and roles (G3, G5, G7)", () => {
  it("G5: system is separate: request.system first, then every system/developer message", () => {
    const b = body({
      system: "Be brief.",
      messages: [
        { type: "message", role: "system", content: "You are a pirate." },
        user("Hi"),
        { type: "message", role: "developer", content: "Answer in French." },
      ],
    });
    expect(b.system).toBe("Be brief.\n\nYou are a pirate.\n\nAnswer in French.");
    expect(b.messages).toEqual([{ role: "user", content: [{ type: "text", text: "Hi" }] }]);
  });

  it("G7: handoffs and config updates never reach the provider; updated instructions do", () => {
    const b = body({
      messages: [
        { type: "message", role: "system", content: "Old rules." },
        user("Hi"),
        { type: "agent_handoff", toAgent: "billing" },
        { type: "agent_config_update", instructions: "New rules." },
        assistant("Hello"),
      ],
    });
    expect(b.system).toBe("New rules.");
    expect(JSON.stringify(b.messages)).not.toMatch(/billing|handoff|config/);
    expect(b.messages.map((m) => m.role)).toEqual(["user", "assistant"]);
  });

  it("no system field when there are no instructions", () => {
    expect("system" in body({ messages: [user("Hi")] })).toBe(false);
  });

  it("G5: same-role messages are merged so roles alternate", () => {
    expect(messagesOf([user("a"), user("b"), assistant("c"), assistant("d"), user("e")])).toEqual([
      {
        role: "user",
        content: [
          { type: "text", text: "a" },
          { type: "text", text: "b" },
        ],
      },
      {
        role: "assistant",
        content: [
          { type: "text", text: "c" },
          { type: "text", text: "d" },
        ],
      },
      { role: "user", content: [{ type: "text", text: "e" }] },
    ]);
  });

  it("G5: a history that starts with the assistant gets a placeholder user message first", () => {
    expect(messagesOf([assistant("Welcome! How can I help?"), user("Hi")])).toEqual([
      { role: "user", content: [{ type: "text", text: LEADING_USER_TEXT }] },
      { role: "assistant", content: [{ type: "text", text: "Welcome! How can I help?" }] },
      { role: "user", content: [{ type: "text", text: "Hi" }] },
    ]);
    // only instructions: still one user message, the API needs one
    const b = body({ system: "Write a haiku.", messages: [] });
    expect(b.messages).toEqual([
      { role: "user", content: [{ type: "text", text: LEADING_USER_TEXT }] },
    ]);
  });

  it("empty text parts and empty messages are left out (the API rejects empty text blocks)", () => {
    expect(messagesOf([user("Hi"), assistant(""), user("there")])).toEqual([
      {
        role: "user",
        content: [
          { type: "text", text: "Hi" },
          { type: "text", text: "there" },
        ],
      },
    ]);
  });
});

describe("anthropic body: tool turns (G5, G9)", () => {
  it("G5: one turn's calls in one assistant message (text first), all results in one user message right after", () => {
    const messages = messagesOf([
      user("Weather in Paris and Rome?"),
      assistant("Checking both."),
      call("c1", '{"city":"Paris"}'),
      call("c2", '{"city":"Rome"}'),
      output("c1", "18C"),
      output("c2", "boom", true),
      assistant("Paris 18C; Rome unknown."),
    ]);
    expect(messages).toEqual([
      { role: "user", content: [{ type: "text", text: "Weather in Paris and Rome?" }] },
      {
        role: "assistant",
        content: [
          { type: "text", text: "Checking both." },
          { type: "tool_use", id: "c1", name: "lookup", input: { city: "Paris" } },
          { type: "tool_use", id: "c2", name: "lookup", input: { city: "Rome" } },
        ],
      },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "c1", content: "18C" },
          { type: "tool_result", tool_use_id: "c2", content: "boom", is_error: true },
        ],
      },
      { role: "assistant", content: [{ type: "text", text: "Paris 18C; Rome unknown." }] },
    ]);
  });

  it("G5: text stored after the calls of its turn still goes first", () => {
    const [, turn] = messagesOf([
      user("q"),
      call("c1"),
      assistant("Let me check."),
      output("c1", "x"),
    ]);
    expect(turn?.content.map((b) => b.type)).toEqual(["text", "tool_use"]);
  });

  it("G5: results stored out of order or interleaved come in call order, in one message", () => {
    const messages = messagesOf([
      user("q"),
      call("c1"),
      call("c2"),
      call("c3"),
      output("c3", "three"),
      output("c1", "one"),
      output("c2", "two"),
    ]);
    expect(messages[2]).toEqual({
      role: "user",
      content: [
        { type: "tool_result", tool_use_id: "c1", content: "one" },
        { type: "tool_result", tool_use_id: "c2", content: "two" },
        { type: "tool_result", tool_use_id: "c3", content: "three" },
      ],
    });
    expect(messages).toHaveLength(3);
  });

  it("G5: a result without a matching call is dropped; a second result for a call too", () => {
    const messages = messagesOf([
      user("q"),
      output("ghost", "nobody asked"),
      call("c1"),
      output("c1", "first"),
      output("c1", "again"),
    ]);
    expect(JSON.stringify(messages)).not.toContain("nobody asked");
    expect(JSON.stringify(messages)).not.toContain("again");
    expect(messages).toEqual([
      { role: "user", content: [{ type: "text", text: "q" }] },
      { role: "assistant", content: [{ type: "tool_use", id: "c1", name: "lookup", input: {} }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "c1", content: "first" }] },
    ]);
  });

  it("G5: a new round after tool results is a new turn; a user message after results merges with them (results first)", () => {
    const messages = messagesOf([
      user("q"),
      call("c1"),
      output("c1", "one"),
      call("c2"),
      output("c2", "two"),
      user("thanks, and?"),
    ]);
    expect(messages.map((m) => [m.role, m.content.map((b) => b.type)])).toEqual([
      ["user", ["text"]],
      ["assistant", ["tool_use"]],
      ["user", ["tool_result"]],
      ["assistant", ["tool_use"]],
      ["user", ["tool_result", "text"]],
    ]);
  });

  it("G9: empty arguments are {}, unparsable ones {} too (the API wants an object)", () => {
    const [, turn] = messagesOf([
      user("q"),
      call("c1", ""),
      call("c2", '{"cut": "of'),
      output("c1", "a"),
      output("c2", "b"),
    ]);
    expect(turn?.content).toEqual([
      { type: "tool_use", id: "c1", name: "lookup", input: {} },
      { type: "tool_use", id: "c2", name: "lookup", input: {} },
    ]);
  });

  it("a call without a result is sent as is (the agent loop gives every call a result)", () => {
    const messages = messagesOf([user("q"), call("c1")]);
    expect(messages.at(-1)).toEqual({
      role: "assistant",
      content: [{ type: "tool_use", id: "c1", name: "lookup", input: {} }],
    });
  });
});

describe("anthropic body: thinking replay (J1)", () => {
  it("thinking stored on the assistant message goes first in its message, exactly as received", () => {
    const [, turn] = messagesOf([
      user("q"),
      assistant("Checking.", { reasoning: [THINKING, REDACTED] }),
      call("c1"),
      output("c1", "x"),
    ]);
    expect(turn?.content).toEqual([
      { type: "thinking", thinking: "Let me look.", signature: "sig-1" },
      { type: "redacted_thinking", data: "opaque==" },
      { type: "text", text: "Checking." },
      { type: "tool_use", id: "c1", name: "lookup", input: {} },
    ]);
  });

  it("thinking stored on the first function call (a turn without text) goes first", () => {
    const [, turn] = messagesOf([
      user("q"),
      call("c1", "{}", { reasoning: [THINKING] }),
      call("c2"),
      output("c1", "x"),
      output("c2", "y"),
    ]);
    expect(turn?.content.map((b) => b.type)).toEqual(["thinking", "tool_use", "tool_use"]);
  });

  it("the same block stored on both the message and the call is sent once", () => {
    const [, turn] = messagesOf([
      user("q"),
      assistant("t", { reasoning: [THINKING] }),
      call("c1", "{}", { reasoning: [THINKING] }),
      output("c1", "x"),
    ]);
    expect(turn?.content.filter((b) => b.type === "thinking")).toHaveLength(1);
  });

  it("blocks of other providers and unsigned thinking are not sent", () => {
    const [, turn] = messagesOf([
      user("q"),
      assistant("Done.", {
        reasoning: [
          { provider: "openai", id: "rs_1", encrypted: "enc" },
          { provider: "anthropic", text: "no signature" },
          "not a block",
        ],
      }),
    ]);
    expect(turn?.content).toEqual([{ type: "text", text: "Done." }]);
  });

  it("when assistant messages merge, thinking still comes first", () => {
    const messages = messagesOf([
      user("q"),
      assistant("a"),
      output("ghost", "dropped"),
      assistant("b", { reasoning: [THINKING] }),
    ]);
    expect(messages[1]?.content.map((b) => b.type)).toEqual(["thinking", "text", "text"]);
  });
});

describe("anthropic body: images (G2)", () => {
  const PNG =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

  it("G2: bytes → base64 source (media type given or sniffed), URL → url source, data: URL → base64", () => {
    const [message] = messagesOf([
      {
        type: "message",
        role: "user",
        content: [
          "What are these?",
          { type: "image", bytes: PNG, mediaType: "image/png" },
          { type: "image", bytes: PNG },
          { type: "image", url: "https://example.com/cat.jpg", detail: "high" },
          { type: "image", url: "data:image/webp;base64,UklGRg==" },
        ],
      },
    ]);
    expect(message?.content).toEqual([
      { type: "text", text: "What are these?" },
      { type: "image", source: { type: "base64", media_type: "image/png", data: PNG } },
      { type: "image", source: { type: "base64", media_type: "image/png", data: PNG } },
      { type: "image", source: { type: "url", url: "https://example.com/cat.jpg" } },
      { type: "image", source: { type: "base64", media_type: "image/webp", data: "UklGRg==" } },
    ]);
  });

  it("G16: unknown image bytes without a media type, or a non-base64 data: URL, are config errors", () => {
    for (const image of [
      { type: "image", bytes: "AAAAAAAAAAAAAAAA" },
      { type: "image", url: "data:image/svg+xml,%3Csvg%3E" },
    ]) {
      expect(() =>
        messagesOf([{ type: "message", role: "user", content: [image as never] }]),
      ).toThrow(ProviderError);
    }
  });

  it("images in assistant messages are left out (the API does not take them there)", () => {
    const messages = messagesOf([
      user("q"),
      { type: "message", role: "assistant", content: ["Here.", { type: "image", bytes: PNG }] },
    ]);
    expect(messages[1]?.content).toEqual([{ type: "text", text: "Here." }]);
  });
});

describe("anthropic body: request knobs (G3, G8, G16)", () => {
  it("G8: tools are {name, description, input_schema}", () => {
    const b = body({
      messages: [user("q")],
      tools: [
        {
          name: "get_weather",
          description: "Weather for a city",
          parameters: {
            type: "object",
            properties: { city: { type: "string" } },
            required: ["city"],
          },
        },
      ],
    });
    expect(b.tools).toEqual([
      {
        name: "get_weather",
        description: "Weather for a city",
        input_schema: {
          type: "object",
          properties: { city: { type: "string" } },
          required: ["city"],
        },
      },
    ]);
    expect("tool_choice" in b).toBe(false);
  });

  it("toolChoice: auto → auto, required → any, a name → tool, none → none", () => {
    const tools = [{ name: "f" }];
    const choice = (toolChoice: ModelRequestInput["toolChoice"]) =>
      body({ messages: [user("q")], tools, toolChoice }).tool_choice;
    expect(choice("auto")).toEqual({ type: "auto" });
    expect(choice("required")).toEqual({ type: "any" });
    expect(choice({ name: "f" })).toEqual({ type: "tool", name: "f" });
    expect(choice("none")).toEqual({ type: "none" });
    // without tools there is nothing to choose
    expect("tool_choice" in body({ messages: [user("q")], toolChoice: "required" })).toBe(false);
  });

  it("G3: temperature 0 is sent; top_p, stop → stop_sequences; metadata is not sent", () => {
    const b = body({
      messages: [user("q")],
      temperature: 0,
      topP: 0.5,
      stop: ["END"],
      metadata: { user: "u1" },
    });
    expect(b.temperature).toBe(0);
    expect(b.top_p).toBe(0.5);
    expect(b.stop_sequences).toEqual(["END"]);
    expect("metadata" in b).toBe(false);
    expect(b.stream).toBe(true);
  });

  it("max_tokens: the request's, else the default given by the adapter", () => {
    expect(body({ messages: [user("q")], maxTokens: 100 }, 4096).max_tokens).toBe(100);
    expect(body({ messages: [user("q")] }, 4096).max_tokens).toBe(4096);
  });

  it("reasoning: budgetTokens → thinking enabled; effort → a budget; a default max_tokens is raised above it", () => {
    expect(body({ messages: [user("q")], reasoning: { budgetTokens: 2000 } }, 64000)).toMatchObject(
      {
        thinking: { type: "enabled", budget_tokens: 2000 },
        max_tokens: 64000,
      },
    );
    expect(body({ messages: [user("q")], reasoning: { effort: "high" } }, 4096)).toMatchObject({
      thinking: { type: "enabled", budget_tokens: EFFORT_BUDGET_TOKENS.high },
      max_tokens: EFFORT_BUDGET_TOKENS.high + 4096,
    });
    // an explicit max_tokens is the caller's choice: sent as is
    expect(
      body({ messages: [user("q")], maxTokens: 1000, reasoning: { budgetTokens: 2000 } })
        .max_tokens,
    ).toBe(1000);
    // `reasoning: {}` alone asks for no thinking
    expect("thinking" in body({ messages: [user("q")], reasoning: {} })).toBe(false);
  });

  it("providerOptions are merged last and win", () => {
    const b = body({
      messages: [user("q")],
      temperature: 0.2,
      providerOptions: { temperature: 0.9, metadata: { user_id: "u1" } },
    });
    expect(b.temperature).toBe(0.9);
    expect(b.metadata).toEqual({ user_id: "u1" });
  });
});

describe("anthropic body: structured output (G18)", () => {
  const SCHEMA = { type: "object", properties: { city: { type: "string" } }, required: ["city"] };

  it("G18: with nothing else using tools, a forced tool named outputName carries the schema", () => {
    const request = {
      messages: [user("Capital of France?")],
      outputSchema: SCHEMA,
      outputName: "answer",
    };
    expect(outputMode(ModelRequest.parse(request))).toBe("tool");
    const b = body(request);
    expect(b.tools).toEqual([
      { name: "answer", description: expect.any(String), input_schema: SCHEMA },
    ]);
    expect(b.tool_choice).toEqual({ type: "tool", name: "answer" });
    expect(b.system).toBeUndefined();
  });

  it("G18: with other tools, thinking, or a non-object schema, the schema goes into the system prompt", () => {
    const cases: ModelRequestInput[] = [
      { messages: [user("q")], outputSchema: SCHEMA, tools: [{ name: "f" }] },
      { messages: [user("q")], outputSchema: SCHEMA, reasoning: { budgetTokens: 1024 } },
      { messages: [user("q")], outputSchema: { type: "array", items: { type: "string" } } },
    ];
    for (const request of cases) {
      expect(outputMode(ModelRequest.parse(request))).toBe("instructions");
      const b = body({ ...request, system: "Be brief." });
      expect(b.system).toMatch(/^Be brief\.\n\nAnswer with a single JSON value/);
      expect(b.system).toContain(JSON.stringify(request.outputSchema));
      expect(b.tools?.some((t) => t.name === "output") ?? false).toBe(false);
      expect(b.tool_choice).toBeUndefined();
    }
  });

  it("without outputSchema nothing is added", () => {
    expect(outputMode(ModelRequest.parse({ messages: [user("q")] }))).toBe(null);
  });
});
