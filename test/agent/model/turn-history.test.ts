import { describe, expect, it } from "vitest";
import { resolveContextWindow } from "../../../src/agent/context-window-option";
import { resolveAgent } from "../../../src/agent/definition";
import { historyBudget } from "../../../src/agent/model/turn-history";
import { capabilitiesFor } from "../../../src/providers/base/pricing";
import type { Model } from "../../../src/providers/base/types";

const modelWith = (contextWindow: number | null, maxOutputTokens: number | null): Model => ({
  provider: "test",
  model: "test",
  capabilities: { ...capabilitiesFor("test"), contextWindow, maxOutputTokens },
  streamBatches: () => {
    throw new Error("not called");
  },
});

describe("the history budget of a model turn (F25, issue 10)", () => {
  it("F25: derives the budget from the model's contextWindow minus reserved output, system prompt and tools", () => {
    const settings = resolveContextWindow();
    const tools = [{ name: "add", description: "adds", parameters: { type: "object" } }];
    const system = "x".repeat(400); // 100 tokens
    const toolTokens = Math.ceil(JSON.stringify(tools).length / 4);
    // gpt-4o-mini-like: 128k window, 16k output.
    expect(historyBudget(modelWith(128_000, 16_384), { system, tools }, settings)).toBe(
      128_000 - 16_384 - 100 - toolTokens,
    );
    // The request's own maxTokens is what the answer may take.
    expect(
      historyBudget(modelWith(128_000, 16_384), { system, tools, maxTokens: 1000 }, settings),
    ).toBe(128_000 - 1000 - 100 - toolTokens);
    // A model whose output limit is large keeps at most a quarter of its window for it.
    expect(historyBudget(modelWith(200_000, 128_000), { tools: [] }, settings)).toBe(
      200_000 - 50_000 - 1,
    );
    // Unknown window and output: 32,768 and 4,096.
    expect(historyBudget(modelWith(null, null), { tools: [] }, settings)).toBe(32_768 - 4_096 - 1);
    // An explicit budget wins; a window smaller than its fixed parts leaves 0.
    expect(
      historyBudget(modelWith(null, null), { tools: [] }, resolveContextWindow({ maxTokens: 777 })),
    ).toBe(777);
    expect(historyBudget(modelWith(100, null), { system, tools: [] }, settings)).toBe(0);
  });

  it("F25: tokens reserved for a prompt section not yet known (recalled memory) come off the budget", () => {
    const settings = resolveContextWindow();
    const model = modelWith(128_000, 16_384);
    const without = historyBudget(model, { tools: [] }, settings);
    expect(historyBudget(model, { tools: [] }, settings, 1_001)).toBe(without - 1_001);
    // An explicit budget is the history's alone: nothing else counts against it.
    const explicit = resolveContextWindow({ maxTokens: 777 });
    expect(historyBudget(model, { tools: [] }, explicit, 1_001)).toBe(777);
  });

  it("documented defaults, and a bad contextWindow is a definition error naming the field", () => {
    expect(resolveContextWindow()).toEqual({
      maxTokens: null,
      maxItems: null,
      fallbackContextWindow: 32_768,
      reserveOutputTokens: null,
      keepRecentTurns: 3,
      summaryMaxTokens: 512,
      summarize: true,
      pageSize: 64,
    });
    const card = { name: "a", description: "b" };
    for (const [field, value] of [
      ["maxTokens", 0],
      ["keepRecentTurns", 1.5],
      ["pageSize", -1],
      ["summaryMaxTokens", "512"],
    ] as const) {
      expect(() => resolveAgent({ card, contextWindow: { [field]: value } as never })).toThrow(
        `contextWindow.${field} must be an integer`,
      );
    }
    expect(() => resolveAgent({ card, contextWindow: { summarize: "yes" } as never })).toThrow(
      "contextWindow.summarize must be a boolean",
    );
  });
});
