import { describe, expect, it } from "vitest";
import { Conversation } from "../../src/history/conversation";
import {
  FunctionCallItem,
  ID_PREFIX,
  ImageContent,
  Item,
  instructionsForModality,
  isSummary,
  MessageItem,
  parseItems,
} from "../../src/history/items";
import { at } from "./helpers";

describe("items", () => {
  it("F1 every item type gets a prefixed id, a createdAt and an optional agentId", () => {
    const c = new Conversation();
    const m = c.addMessage("user", "hi");
    const call = c.addFunctionCall({ name: "f" });
    const out = c.addFunctionOutput({ name: "f", callId: call.callId, output: "x" });
    const h = c.addHandoff({ toAgent: "b", agentId: "a" });
    const cfg = c.addConfigUpdate({ tools: [] });
    expect(m.id.startsWith(ID_PREFIX.message)).toBe(true);
    expect(call.id.startsWith("fc_")).toBe(true);
    expect(out.id.startsWith("fco_")).toBe(true);
    expect(h.id.startsWith("handoff_")).toBe(true);
    expect(cfg.id.startsWith("cfg_")).toBe(true);
    for (const item of c.items) expect(Number.isNaN(Date.parse(item.createdAt))).toBe(false);
    expect(h.agentId).toBe("a");
    expect("agentId" in m).toBe(false);
    expect(new Set(c.items.map((i) => i.type))).toEqual(
      new Set([
        "message",
        "function_call",
        "function_call_output",
        "agent_handoff",
        "agent_config_update",
      ]),
    );
  });

  it("F2 roles are system, developer, user, assistant; tool traffic is separate items", () => {
    for (const role of ["system", "developer", "user", "assistant"]) {
      expect(MessageItem.safeParse({ type: "message", role, content: "x" }).success).toBe(true);
    }
    expect(MessageItem.safeParse({ type: "message", role: "tool", content: "x" }).success).toBe(
      false,
    );
    expect(MessageItem.safeParse({ type: "message", role: "agent", content: "x" }).success).toBe(
      false,
    );
  });

  it("F3 a string content is stored as [string]; images by url or bytes", () => {
    const m = MessageItem.parse({ type: "message", role: "user", content: "hi" });
    expect(m.content).toEqual(["hi"]);
    const withImages = MessageItem.parse({
      type: "message",
      role: "user",
      content: [
        "look",
        { type: "image", url: "https://x/y.png" },
        { type: "image", bytes: "AAEC", mediaType: "image/png" },
      ],
    });
    expect(withImages.content[1]).toEqual({
      type: "image",
      url: "https://x/y.png",
      detail: "auto",
    });
    expect(ImageContent.safeParse({ type: "image" }).success).toBe(false);
    expect(ImageContent.safeParse({ type: "image", url: "u", bytes: "AA==" }).success).toBe(false);
    expect(ImageContent.safeParse({ type: "image", bytes: "not base64!" }).success).toBe(false);
  });

  it("F4 a call keeps its arguments string verbatim and generates a call id when absent", () => {
    const call = FunctionCallItem.parse({
      type: "function_call",
      name: "f",
      arguments: '{"a": 1 }',
    });
    expect(call.arguments).toBe('{"a": 1 }');
    expect(call.callId.startsWith("call_")).toBe(true);
    const other = FunctionCallItem.parse({ type: "function_call", name: "f" });
    expect(other.callId).not.toBe(call.callId);
    expect(other.arguments).toBe("{}");
    expect(
      FunctionCallItem.parse({ type: "function_call", name: "f", callId: "mine" }).callId,
    ).toBe("mine");
  });

  it("F4 a Gemini thought signature in call metadata survives serialization", () => {
    const c = new Conversation();
    c.addFunctionCall({ name: "f", arguments: { q: 1 }, metadata: { thoughtSignature: "c2ln" } });
    const back = Conversation.fromJSON(JSON.parse(JSON.stringify(c)));
    const call = back.items[0] as FunctionCallItem;
    expect(call.metadata).toEqual({ thoughtSignature: "c2ln" });
    expect(call.arguments).toBe('{"q":1}');
  });

  it("F4 outputs carry isError (default false)", () => {
    const c = new Conversation();
    const ok = c.addFunctionOutput({ name: "f", callId: "x", output: { v: 1 } });
    const bad = c.addFunctionOutput({ name: "f", callId: "y", output: "boom", isError: true });
    expect(ok.isError).toBe(false);
    expect(ok.output).toBe('{"v":1}');
    expect(bad.isError).toBe(true);
  });

  it("F23 { items } round-trips losslessly through JSON", () => {
    const c = new Conversation();
    c.addMessage("system", "rules", { createdAt: at(0) });
    c.addMessage("user", ["hi", { type: "image", url: "https://x/i.png", detail: "high" }], {
      agentId: "a",
      name: "ann",
      interrupted: true,
      extra: { k: [1, { z: null }] },
      confidence: 0.5,
      metrics: { ttft: 12 },
      audioInstructions: "speak",
      textInstructions: "write",
    });
    const call = c.addFunctionCall({ name: "f", arguments: "{}", metadata: { s: "sig" } });
    c.addFunctionOutput({
      name: "f",
      callId: call.callId,
      output: "r",
      isError: true,
      metadata: { m: 1 },
    });
    c.addHandoff({ toAgent: "b", fromAgent: "a", reason: "why" });
    c.addConfigUpdate({ instructions: "new", tools: ["f"] });
    const json = JSON.parse(JSON.stringify(c.toJSON()));
    const back = Conversation.fromJSON(json);
    expect(back.items).toEqual(c.items);
    expect(JSON.parse(JSON.stringify(back))).toEqual(json);
  });

  it("F23 unknown item types are skipped on load; malformed known ones throw", () => {
    const loaded = Conversation.fromJSON({
      items: [
        { type: "message", id: "m1", role: "user", content: "hi", createdAt: at(1) },
        { type: "reasoning_trace", id: "r1", whatever: true },
        { type: "function_call", id: "f1", name: "f", callId: "c", createdAt: at(2) },
      ],
    });
    expect(loaded.items.map((i) => i.id)).toEqual(["m1", "f1"]);
    expect(() => parseItems([{ type: "message", role: "narrator", content: "x" }])).toThrow();
    expect(() => parseItems([{ role: "user", content: "x" }])).toThrow();
    expect(() => Conversation.fromJSON({ nope: [] })).toThrow(/items/);
  });

  it("F23 duplicate ids on load are refused (the store keys rows by id)", () => {
    const m = { type: "message", id: "m", role: "user", content: "x" };
    expect(() => parseItems([m, m])).toThrow(/duplicate/);
  });

  it("F24 message extras: interrupted, extra, confidence, metrics default sensibly", () => {
    const m = MessageItem.parse({ type: "message", role: "assistant", content: "x" });
    expect(m.interrupted).toBe(false);
    expect(m.extra).toEqual({});
    expect(m.confidence).toBeUndefined();
    expect(m.metrics).toBeUndefined();
    const other = MessageItem.parse({ type: "message", role: "assistant", content: "y" });
    other.extra.k = 1;
    expect(m.extra).toEqual({}); // defaults are not shared between items
  });

  it("F24 modality-specific instructions fall back to content", () => {
    const plain = MessageItem.parse({ type: "message", role: "system", content: "base" });
    expect(instructionsForModality(plain, "audio")).toEqual(["base"]);
    expect(instructionsForModality(plain, "text")).toEqual(["base"]);
    const both = MessageItem.parse({
      type: "message",
      role: "system",
      content: "base",
      audioInstructions: "say it",
      textInstructions: "write it",
    });
    expect(instructionsForModality(both, "audio")).toBe("say it");
    expect(instructionsForModality(both, "text")).toBe("write it");
    const audioOnly = MessageItem.parse({ ...both, textInstructions: undefined });
    expect(instructionsForModality(audioOnly, "text")).toEqual(["base"]);
  });

  it("decision 3: a summary is an assistant message flagged in extra", () => {
    const summary = Item.parse({
      type: "message",
      role: "assistant",
      content: "s",
      extra: { summary: true },
    });
    expect(isSummary(summary)).toBe(true);
    expect(isSummary(Item.parse({ type: "message", role: "assistant", content: "s" }))).toBe(false);
    expect(
      isSummary(
        Item.parse({ type: "message", role: "assistant", content: "s", extra: { summary: "yes" } }),
      ),
    ).toBe(false);
  });

  it("createdAt must be ISO-8601", () => {
    expect(
      Item.safeParse({ type: "agent_handoff", toAgent: "b", createdAt: "yesterday" }).success,
    ).toBe(false);
    expect(
      Item.safeParse({
        type: "agent_handoff",
        toAgent: "b",
        createdAt: "2025-01-01T00:00:00+02:00",
      }).success,
    ).toBe(true);
  });
});
