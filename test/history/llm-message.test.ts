import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Conversation } from "../../src/history/conversation";
import {
  fromLlmMessages,
  LlmMessage,
  type LlmMessageInput,
  toLlmMessages,
} from "../../src/history/llm-message";
import { at, mk } from "./helpers";

const full: LlmMessageInput[] = [
  { role: "system", content: "rules", id: "s", createdAt: at(0), metadata: { v: 2 } },
  { role: "user", content: "add 2 and 3", name: "ann", id: "u", createdAt: at(1) },
  {
    role: "assistant",
    content: "calling",
    id: "a",
    createdAt: at(2),
    toolCalls: [
      {
        id: "call-1",
        name: "add",
        arguments: '{"a":2,"b":3}',
        metadata: { thoughtSignature: "sig" },
      },
      { id: "call-2", name: "noop", arguments: "{}" },
    ],
  },
  { role: "tool", content: "5", id: "t1", createdAt: at(3), toolName: "add", toolCallId: "call-1" },
  {
    role: "tool",
    content: "bad",
    id: "t2",
    createdAt: at(3),
    toolName: "noop",
    toolCallId: "call-2",
    isError: true,
    metadata: { m: 1 },
  },
  { role: "assistant", content: "5", id: "a2", createdAt: at(4), metadata: { summary: false } },
];

describe("LLM message view (E1)", () => {
  it("E1 fills id, createdAt and metadata; round-trips every field through items", () => {
    const parsed = LlmMessage.parse({ role: "user", content: "x" });
    expect(parsed.id).toMatch(/^msg_/);
    expect(Number.isNaN(Date.parse(parsed.createdAt))).toBe(false);
    expect(parsed.metadata).toEqual({});
    const messages = full.map((m) => LlmMessage.parse(m));
    expect(toLlmMessages(fromLlmMessages(full))).toEqual(messages);
    expect(JSON.parse(JSON.stringify(messages))).toEqual(messages);
  });

  it("E1 is a view over the one item model: tool calls become function_call items", () => {
    const c = Conversation.fromLlmMessages(full);
    expect(c.items.map((i) => i.type)).toEqual([
      "message",
      "message",
      "message",
      "function_call",
      "function_call",
      "function_call_output",
      "function_call_output",
      "message",
    ]);
    expect(c.items[3]).toMatchObject({ callId: "call-1", metadata: { thoughtSignature: "sig" } });
    expect(c.items[6]).toMatchObject({ isError: true, callId: "call-2", output: "bad" });
    // The same messages give the same item ids, so a store sees no change.
    expect(fromLlmMessages(full).map((i) => i.id)).toEqual(c.items.map((i) => i.id));
  });

  it("E1 validates roles and tool fields", () => {
    expect(LlmMessage.safeParse({ role: "developer", content: "x" }).success).toBe(false);
    expect(LlmMessage.safeParse({ role: "tool", content: "x", toolName: "f" }).success).toBe(false);
    expect(LlmMessage.safeParse({ role: "tool", content: "x", toolCallId: "c" }).success).toBe(
      false,
    );
    expect(LlmMessage.safeParse({ role: "user", content: "x", toolCallId: "c" }).success).toBe(
      false,
    );
    expect(
      LlmMessage.safeParse({
        role: "user",
        content: "x",
        toolCalls: [{ id: "c", name: "f", arguments: "{}" }],
      }).success,
    ).toBe(false);
    expect(LlmMessage.parse({ role: "assistant", content: "x", toolCalls: [] })).not.toHaveProperty(
      "toolCalls",
    );
    expect(
      LlmMessage.parse({
        role: "tool",
        content: "x",
        toolName: "f",
        toolCallId: "c",
        isError: false,
      }),
    ).not.toHaveProperty("isError");
  });

  it("E1 items → messages: developer is system, calls join the assistant message before them", () => {
    const items = [
      mk.developer("d", "dev rules"),
      mk.user("u"),
      mk.call("c0", "k0"), // no assistant message right before: an empty one carries it
      mk.output("o0", "k0"),
      mk.assistant("a"),
      mk.call("c1", "k1"),
      mk.call("c2", "k2"),
      mk.output("o1", "k1"),
      mk.output("o2", "k2"),
    ];
    const messages = toLlmMessages(items);
    expect(messages.map((m) => [m.role, m.id, m.toolCalls?.map((c) => c.id)])).toEqual([
      ["system", "d", undefined],
      ["user", "u", undefined],
      ["assistant", "c0", ["k0"]],
      ["tool", "o0", undefined],
      ["assistant", "a", ["k1", "k2"]],
      ["tool", "o1", undefined],
      ["tool", "o2", undefined],
    ]);
    expect(messages[2]?.content).toBe("");
  });

  it("E1 round-trips arbitrary valid message lists (property)", () => {
    const text = fc.string({ maxLength: 12 });
    const json = fc.dictionary(
      fc.string({ minLength: 1, maxLength: 4 }),
      fc.oneof(fc.integer(), text, fc.boolean()),
      {
        maxKeys: 2,
      },
    );
    const call = fc.record(
      { id: fc.uuid(), name: fc.constantFrom("f", "g"), arguments: text },
      { requiredKeys: ["id", "name", "arguments"] },
    );
    const message = fc.oneof(
      fc.record({
        role: fc.constantFrom("system", "user"),
        content: text,
        name: fc.option(text, { nil: undefined }),
        metadata: json,
      }),
      fc.record({
        role: fc.constant("assistant"),
        content: text,
        metadata: json,
        toolCalls: fc.array(call, { maxLength: 2 }),
      }),
      fc.record({
        role: fc.constant("tool"),
        content: text,
        toolName: fc.constantFrom("f", "g"),
        toolCallId: fc.uuid(),
        isError: fc.boolean(),
      }),
    );
    fc.assert(
      fc.property(fc.array(message, { maxLength: 8 }), (raw) => {
        const input = raw.map((m) => JSON.parse(JSON.stringify(m)) as LlmMessageInput);
        const parsed = input.map((m) => LlmMessage.parse(m));
        expect(toLlmMessages(fromLlmMessages(parsed))).toEqual(parsed);
      }),
      { numRuns: 60 },
    );
  });

  it("E3 fromLlmMessages refuses duplicate ids", () => {
    expect(() =>
      Conversation.fromLlmMessages([
        { role: "user", content: "a", id: "x" },
        { role: "user", content: "b", id: "x" },
      ]),
    ).toThrow(/duplicate/);
  });

  it("G7/F20 handoffs and config updates never reach the model view", () => {
    const c = new Conversation({
      items: [mk.user("u"), mk.handoff("h"), mk.config("k", { tools: ["f"] }), mk.assistant("a")],
    });
    expect(c.toLlmMessages().map((m) => m.id)).toEqual(["u", "a"]);
    expect(c.providerItems().map((i) => i.id)).toEqual(["u", "a"]);
  });

  it("F21 with config updates, the model gets the resolved current instructions", () => {
    const c = new Conversation({
      items: [
        mk.system("s", "old rules"),
        mk.user("u"),
        mk.config("k", { instructions: "new rules" }),
        mk.assistant("a"),
      ],
    });
    const messages = c.toLlmMessages();
    expect(messages[0]).toMatchObject({ role: "system", id: "s", content: "new rules" });
    expect(c.items[0]).toMatchObject({ content: ["old rules"] }); // the view, not the history, changes
    const noSystem = new Conversation({
      items: [mk.user("u"), mk.config("k", { instructions: "only rules" })],
    });
    expect(noSystem.toLlmMessages()[0]).toMatchObject({ role: "system", content: "only rules" });
    const toolsOnly = new Conversation({
      items: [mk.system("s", "rules"), mk.config("k", { tools: [] })],
    });
    expect(toolsOnly.providerItems()[0]).toBe(toolsOnly.items[0]);
  });
});
