import { describe, expect, it } from "vitest";
import type { ItemInput } from "../../../src/history/items";
import { ProviderError } from "../../../src/providers/base/errors";
import { ModelRequest, type ModelRequestInput } from "../../../src/providers/base/types";
import {
  type ChatFlavor,
  isOpenAIReasoningModel,
  toChatCompletionsBody,
} from "../../../src/providers/openai/openai-chat-body";

/** Conversation items → Chat Completions bodies (G3, G4, G7, G8, G18). */

function body(
  request: ModelRequestInput,
  model = "gpt-4o",
  flavor: ChatFlavor = "openai",
  capabilities?: { tools: boolean; structuredOutput: boolean },
) {
  return toChatCompletionsBody(ModelRequest.parse(request), model, flavor, {
    provider: "test",
    ...(capabilities ? { capabilities } : {}),
  });
}

function messages(
  request: ModelRequestInput,
  model = "gpt-4o",
  flavor: ChatFlavor = "openai",
): Record<string, unknown>[] {
  return body(request, model, flavor).messages as Record<string, unknown>[];
}

const user = (content: string): ItemInput => ({
  type: "message",
  role: "user",
  content,
});
const call = (callId: string, name: string, args = "{}"): ItemInput => ({
  type: "function_call",
  callId,
  name,
  arguments: args,
});
const output = (callId: string, text: string, isError = false): ItemInput => ({
  type: "function_call_output",
  callId,
  name: "tool",
  output: text,
  isError,
});

describe("G4: instructions", () => {
  it("system and developer messages go as `system` for ordinary models", () => {
    expect(
      messages({
        messages: [{ type: "message", role: "developer", content: "Be brief." }, user("Hi")],
      }),
    ).toEqual([
      { role: "system", content: "Be brief." },
      { role: "user", content: "Hi" },
    ]);
  });

  it("reasoning models (o-series, gpt-5) get them as `developer`", () => {
    for (const model of [
      "o1",
      "o3-mini",
      "o4-mini-2025-04-16",
      "gpt-5",
      "gpt-5-mini",
      "openai/o3",
    ]) {
      expect(isOpenAIReasoningModel(model), model).toBe(true);
      expect(messages({ system: "Be brief.", messages: [user("Hi")] }, model)[0], model).toEqual({
        role: "developer",
        content: "Be brief.",
      });
    }
    for (const model of ["gpt-4o", "gpt-4.1-mini", "omni-moderation", "llama-o3"]) {
      expect(isOpenAIReasoningModel(model), model).toBe(false);
    }
  });

  it("compatible servers and Workers AI always get `system`, whatever the model is called", () => {
    const request = { system: "Be brief.", messages: [user("Hi")] };
    expect(messages(request, "o3-mini", "compatible")[0]).toEqual({
      role: "system",
      content: "Be brief.",
    });
    expect(messages(request, "gpt-5", "workers-ai")[0]).toEqual({
      role: "system",
      content: "Be brief.",
    });
  });

  it("G3: request.system goes first, joined with the first instruction message into one", () => {
    expect(
      messages({
        system: "You are Edgelink.",
        messages: [user("Hi"), { type: "message", role: "system", content: "Answer in French." }],
      }),
    ).toEqual([
      { role: "system", content: "You are Edgelink.\n\nAnswer in French." },
      { role: "user", content: "Hi" },
    ]);
  });

  it("only the first instruction message is the instructions; a later one stays in place as a user message", () => {
    expect(
      messages({
        messages: [
          { type: "message", role: "system", content: "Be brief." },
          user("Hi"),
          { type: "message", role: "assistant", content: "Hello." },
          { type: "message", role: "developer", content: "The user is now on a phone." },
          user("Weather?"),
        ],
      }),
    ).toEqual([
      { role: "system", content: "Be brief." },
      { role: "user", content: "Hi" },
      { role: "assistant", content: "Hello." },
      { role: "user", content: "The user is now on a phone." },
      { role: "user", content: "Weather?" },
    ]);
  });

  it("G7: handoffs and config updates never reach the provider; updated instructions do", () => {
    expect(
      messages({
        messages: [
          { type: "message", role: "system", content: "Old instructions." },
          user("Hi"),
          { type: "agent_handoff", fromAgent: "triage", toAgent: "billing" },
          { type: "agent_config_update", instructions: "New instructions." },
          user("Bill?"),
        ],
      }),
    ).toEqual([
      { role: "system", content: "New instructions." },
      { role: "user", content: "Hi" },
      { role: "user", content: "Bill?" },
    ]);
  });
});

describe("G4: tool traffic", () => {
  it("consecutive calls become one assistant message; each output a tool message", () => {
    expect(
      messages({
        messages: [
          user("Weather in Paris and Rome?"),
          call("call_1", "weather", '{"city":"Paris"}'),
          call("call_2", "weather", '{"city":"Rome"}'),
          output("call_1", "sunny"),
          output("call_2", "rain", true),
          { type: "message", role: "assistant", content: "Sunny in Paris, rain in Rome." },
        ],
      }),
    ).toEqual([
      { role: "user", content: "Weather in Paris and Rome?" },
      {
        role: "assistant",
        content: null,
        tool_calls: [
          {
            id: "call_1",
            type: "function",
            function: { name: "weather", arguments: '{"city":"Paris"}' },
          },
          {
            id: "call_2",
            type: "function",
            function: { name: "weather", arguments: '{"city":"Rome"}' },
          },
        ],
      },
      { role: "tool", tool_call_id: "call_1", content: "sunny" },
      { role: "tool", tool_call_id: "call_2", content: "rain" },
      { role: "assistant", content: "Sunny in Paris, rain in Rome." },
    ]);
  });

  it("calls right after assistant text join that message; a later round is a new one", () => {
    const out = messages({
      messages: [
        user("Go"),
        { type: "message", role: "assistant", content: "Let me look." },
        call("call_1", "a"),
        output("call_1", "1"),
        call("call_2", "b"),
        output("call_2", "2"),
      ],
    }) as { role: string; content: unknown; tool_calls?: unknown[] }[];
    expect(out.map((m) => [m.role, m.content, m.tool_calls?.length])).toEqual([
      ["user", "Go", undefined],
      ["assistant", "Let me look.", 1],
      ["tool", "1", undefined],
      ["assistant", null, 1],
      ["tool", "2", undefined],
    ]);
  });

  it("an output whose call is not in the conversation is dropped (the API would reject it)", () => {
    expect(messages({ messages: [user("Hi"), output("call_gone", "stale")] })).toEqual([
      { role: "user", content: "Hi" },
    ]);
  });

  it('Workers AI gets "" instead of null as the text of a tool-only turn', () => {
    const out = messages(
      { messages: [user("Go"), call("call_1", "a"), output("call_1", "1")] },
      "@cf/meta/llama-3.3-70b-instruct-fp8-fast",
      "workers-ai",
    ) as { content: unknown }[];
    expect(out[1]?.content).toBe("");
  });

  it("an empty assistant message with no calls keeps its empty text", () => {
    expect(
      messages({ messages: [user("Hi"), { type: "message", role: "assistant", content: "" }] }),
    ).toEqual([
      { role: "user", content: "Hi" },
      { role: "assistant", content: "" },
    ]);
  });
});

describe("G2, G4: content", () => {
  it("images become image_url parts in order; detail only when not auto", () => {
    expect(
      messages({
        messages: [
          {
            type: "message",
            role: "user",
            name: "ana",
            content: [
              "What is in these?",
              { type: "image", url: "https://example.com/cat.png" },
              { type: "image", url: "https://example.com/dog.png", detail: "low" },
            ],
          },
        ],
      }),
    ).toEqual([
      {
        role: "user",
        name: "ana",
        content: [
          { type: "text", text: "What is in these?" },
          { type: "image_url", image_url: { url: "https://example.com/cat.png" } },
          { type: "image_url", image_url: { url: "https://example.com/dog.png", detail: "low" } },
        ],
      },
    ]);
  });

  it("image bytes go as a data: URL with their media type, declared or recognised", () => {
    const png = "iVBORw0KGgoAAAANSUhEUg==";
    const out = messages({
      messages: [
        {
          type: "message",
          role: "user",
          content: [
            { type: "image", bytes: png },
            { type: "image", bytes: "AAAA", mediaType: "image/heic", detail: "high" },
          ],
        },
      ],
    }) as { content: unknown[] }[];
    expect(out[0]?.content).toEqual([
      { type: "image_url", image_url: { url: `data:image/png;base64,${png}` } },
      { type: "image_url", image_url: { url: "data:image/heic;base64,AAAA", detail: "high" } },
    ]);
  });

  it("image bytes of unknown format without a mediaType are a config error, not a guess", () => {
    expect(() =>
      messages({
        messages: [{ type: "message", role: "user", content: [{ type: "image", bytes: "AAAA" }] }],
      }),
    ).toThrow(expect.objectContaining({ kind: "config" }));
  });

  it("several text parts join with newlines", () => {
    expect(
      messages({ messages: [{ type: "message", role: "user", content: ["one", "two"] }] }),
    ).toEqual([{ role: "user", content: "one\ntwo" }]);
  });
});

describe("G8: tools and tool choice", () => {
  const tools = [
    {
      name: "get_weather",
      description: "Weather for a city",
      parameters: { type: "object", properties: { city: { type: "string" } } },
    },
  ];

  it("tools as {type:function, function:{name,description,parameters}}", () => {
    expect(body({ messages: [user("Hi")], tools }).tools).toEqual([
      {
        type: "function",
        function: {
          name: "get_weather",
          description: "Weather for a city",
          parameters: { type: "object", properties: { city: { type: "string" } } },
        },
      },
    ]);
  });

  it("tool choice: auto, none and required as strings, one tool by name as an object", () => {
    const choice = (toolChoice: ModelRequestInput["toolChoice"]) =>
      body({ messages: [user("Hi")], tools, toolChoice }).tool_choice;
    expect(choice("auto")).toBe("auto");
    expect(choice("none")).toBe("none");
    expect(choice("required")).toBe("required");
    expect(choice({ name: "get_weather" })).toEqual({
      type: "function",
      function: { name: "get_weather" },
    });
    expect(choice(undefined)).toBeUndefined();
  });

  it("no tools: neither tools nor tool_choice is sent (the API rejects a choice without tools)", () => {
    const out = body({ messages: [user("Hi")], toolChoice: "required" });
    expect(out).not.toHaveProperty("tools");
    expect(out).not.toHaveProperty("tool_choice");
  });

  it("G16: tools for a model without tool support are a config error", () => {
    expect(() =>
      body({ messages: [user("Hi")], tools }, "gpt-4o", "openai", {
        tools: false,
        structuredOutput: true,
      }),
    ).toThrow(ProviderError);
  });
});

describe("G3, G18: sampling, limits, output schema", () => {
  it("G3: temperature 0 is sent; top_p, stop as given", () => {
    const out = body({ messages: [user("Hi")], temperature: 0, topP: 0.5, stop: ["\n\n"] });
    expect(out).toMatchObject({ temperature: 0, top_p: 0.5, stop: ["\n\n"] });
  });

  it("maxTokens: max_completion_tokens for OpenAI reasoning models, max_tokens otherwise", () => {
    expect(body({ messages: [user("Hi")], maxTokens: 100 }, "gpt-4o")).toMatchObject({
      max_tokens: 100,
    });
    const reasoning = body({ messages: [user("Hi")], maxTokens: 100 }, "o4-mini");
    expect(reasoning).toMatchObject({ max_completion_tokens: 100 });
    expect(reasoning).not.toHaveProperty("max_tokens");
    expect(body({ messages: [user("Hi")], maxTokens: 100 }, "o4-mini", "compatible")).toMatchObject(
      { max_tokens: 100 },
    );
  });

  it("reasoning effort as reasoning_effort", () => {
    expect(body({ messages: [user("Hi")], reasoning: { effort: "low" } }, "o3")).toMatchObject({
      reasoning_effort: "low",
    });
  });

  it("metadata goes to OpenAI with store: true (OpenAI refuses metadata otherwise); not to others", () => {
    const request = { messages: [user("Hi")], metadata: { tenant: "t1" } };
    expect(body(request)).toMatchObject({ metadata: { tenant: "t1" }, store: true });
    expect(body(request, "llama", "compatible")).not.toHaveProperty("metadata");
  });

  it("G18: an output schema is a json_schema response_format named by outputName", () => {
    const schema = { type: "object", properties: { city: { type: "string" } } };
    expect(
      body({ messages: [user("Hi")], outputSchema: schema, outputName: "answer" }).response_format,
    ).toEqual({ type: "json_schema", json_schema: { name: "answer", schema } });
  });

  it("G18: without native support, the schema goes into the instructions instead", () => {
    const schema = { type: "object", properties: { city: { type: "string" } } };
    const out = body(
      { system: "Be brief.", messages: [user("Hi")], outputSchema: schema },
      "llama",
      "compatible",
      { tools: true, structuredOutput: false },
    );
    expect(out).not.toHaveProperty("response_format");
    const first = (out.messages as { role: string; content: string }[])[0];
    expect(first?.role).toBe("system");
    expect(first?.content.startsWith("Be brief.\n\n")).toBe(true);
    expect(first?.content).toContain(JSON.stringify(schema));
  });

  it("providerOptions are merged last and win", () => {
    expect(
      body({
        messages: [user("Hi")],
        temperature: 0.2,
        providerOptions: { temperature: 1, seed: 7, stream_options: null },
      }),
    ).toMatchObject({ temperature: 1, seed: 7, stream_options: null });
  });

  it("an OpenAI or compatible body streams with usage; a Workers AI one has no model and no stream_options", () => {
    expect(body({ messages: [user("Hi")] })).toEqual({
      model: "gpt-4o",
      messages: [{ role: "user", content: "Hi" }],
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(body({ messages: [user("Hi")] }, "@cf/x", "workers-ai")).toEqual({
      messages: [{ role: "user", content: "Hi" }],
      stream: true,
    });
  });
});
