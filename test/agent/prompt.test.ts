import { describe, expect, it } from "vitest";
import { z } from "zod";
import { resolveAgent } from "../../src/agent/definition";
import {
  composePrompt,
  generatedToolsPrompt,
  type PromptCompositionInput,
} from "../../src/agent/prompt";
import { tool } from "../../src/agent/tool";

const tools = {
  search: tool({ description: "Searches the web", input: z.object({}), run: () => "" }),
  add: tool({ description: "  Adds two numbers ", input: z.object({}), run: () => 0 }),
  noop: tool({ description: "", input: z.object({}), run: () => null }),
};

const compose = (input: PromptCompositionInput, over = {}) => composePrompt(input, tools, over);

const full: PromptCompositionInput = {
  global: "You work for Acme.",
  toolsPrompt: true,
  profiles: [
    {
      id: "terse",
      sections: [{ id: "f", type: "format", content: "One word answers." }],
    },
    {
      id: "support",
      isDefault: true,
      sections: [
        { id: "ex", type: "examples", content: "Q: hi\nA: Hello!", order: 3 },
        { id: "p", type: "persona", content: "You are a patient support agent.", order: 1 },
        { id: "off", type: "custom", content: "Never shown.", order: 2, enabled: false },
        { id: "blank", type: "context", content: "  \n ", order: 2 },
        { id: "c", type: "constraints", content: "Never promise refunds.", order: 2 },
        { id: "t", type: "task", content: "Solve the customer's problem.", order: 1 },
      ],
    },
  ],
  additionalContext: "The customer is on the Pro plan.",
};

describe("prompt composition (L1–L3)", () => {
  it("L1 L2: global → tools → the default profile's enabled sections by order → additional context", () => {
    expect(compose(full)).toBe(
      [
        "You work for Acme.",
        "You can call these tools:\n- search: Searches the web\n- add: Adds two numbers\n- noop",
        "You are a patient support agent.",
        "Solve the customer's problem.",
        "Never promise refunds.",
        "Q: hi\nA: Hello!",
        "The customer is on the Pro plan.",
      ].join("\n\n"),
    );
  });

  it("L1: the output is deterministic, and the input is not changed by composing", () => {
    const input = structuredClone(full);
    expect(compose(input)).toBe(compose(full));
    expect(input).toEqual(full);
  });

  it("L1: a named profile wins over the default; without a default the first profile is used", () => {
    expect(compose({ ...full, profile: "terse" })).toContain("You can call these tools:");
    expect(compose({ ...full, profile: "terse" })).toContain("\n\nOne word answers.\n\n");
    const noDefault = {
      profiles: [
        { id: "a", sections: [{ id: "x", type: "task" as const, content: "First." }] },
        { id: "b", sections: [{ id: "y", type: "task" as const, content: "Second." }] },
      ],
    };
    expect(compose(noDefault)).toBe("First.");
  });

  it("L2: empty parts are skipped: no global, no tools prompt, a disabled global, no profile", () => {
    expect(compose({})).toBe("");
    expect(
      compose({ global: { content: "Hidden", enabled: false }, additionalContext: "Only me" }),
    ).toBe("Only me");
    expect(compose({ toolsPrompt: "Use tools wisely." })).toBe("Use tools wisely.");
    expect(generatedToolsPrompt({})).toBe("");
  });

  it("L3: systemOverride replaces the whole composed prompt verbatim", () => {
    expect(compose({ ...full, systemOverride: "  Exactly this.\n" })).toBe("  Exactly this.\n");
  });

  it("a bad composition is a definition error naming the field", () => {
    const card = { name: "T", description: "d" };
    expect(() => resolveAgent({ card, instructions: { profile: "missing" } })).toThrow(
      "instructions.profile: no profile missing",
    );
    expect(() =>
      resolveAgent({
        card,
        instructions: {
          profiles: [
            { id: "a", isDefault: true },
            { id: "b", isDefault: true },
          ],
        },
      }),
    ).toThrow(/at most one profile is the default/);
    expect(() =>
      resolveAgent({
        card,
        instructions: {
          profiles: [{ id: "a", sections: [{ id: "s", type: "poem" as never, content: "" }] }],
        },
      }),
    ).toThrow(/instructions\.profiles\.0\.sections\.0\.type/);
    // The exported composePrompt checks its input the same way.
    expect(() => composePrompt({ profile: "missing" })).toThrow(
      "instructions.profile: no profile missing",
    );
  });
});
