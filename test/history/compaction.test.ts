import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { CompactionRequest, compactItems } from "../../src/history/compaction";
import { Conversation } from "../../src/history/conversation";
import {
  type Item,
  isInstruction,
  isStructural,
  isSummary,
  isUserMessage,
} from "../../src/history/items";
import { estimateTokens } from "../../src/history/tokens";
import { anyItems, wellFormedItems } from "./arbitraries";
import { chat, conv, ids, mk, scripted } from "./helpers";

describe("compaction (E5–E11)", () => {
  it("E5 request defaults", () => {
    expect(CompactionRequest.parse({})).toEqual({
      strategy: "recent",
      maxMessages: 20,
      maxTokens: 4000,
      preserveRecent: 6,
      summaryMaxTokens: 512,
    });
  });

  it("E5 invalid values are rejected before anything changes", async () => {
    const c = conv(chat(10));
    const before = [...c.items];
    for (const bad of [
      { strategy: "oldest" },
      { maxMessages: 1 },
      { maxMessages: 2.5 },
      { maxTokens: 0 },
      { preserveRecent: -1 },
      { summaryMaxTokens: 0 },
      { maxMessages: "20" },
    ]) {
      await expect(c.compact(bad as never)).rejects.toThrow();
    }
    await expect(c.compact({ strategy: "summary" })).rejects.toThrow(/summarizer/);
    expect(c.items).toEqual(before);
  });

  it("E6 recent keeps the leading system message plus the newest max-1, without a model call", async () => {
    const c = new Conversation({ systemPrompt: "rules" });
    for (let k = 1; k <= 5; k++) {
      c.addMessage("user", `q${k}`);
      c.addMessage("assistant", `a${k}`);
    }
    const summarizer = scripted("unused");
    const result = await c.compact({ strategy: "recent", maxMessages: 5 }, { summarizer });
    expect(c.messages().map((m) => m.content[0])).toEqual(["rules", "q4", "a4", "q5", "a5"]);
    expect(summarizer.calls).toHaveLength(0);
    expect(result).toMatchObject({
      strategy: "recent",
      beforeMessages: 11,
      afterMessages: 5,
      removed: 6,
      summaryCreated: false,
    });
  });

  it("E6 without a leading system message keeps just the newest", async () => {
    const c = conv([mk.user("u1"), mk.assistant("a1"), mk.user("u2"), mk.assistant("a2")]);
    await c.compact({ maxMessages: 2 });
    expect(ids(c)).toEqual(["u2", "a2"]);
  });

  it("E11 recent cuts only at user-turn boundaries and keeps the newest turn whole", async () => {
    const c = conv(chat(3)); // s + 3 turns of 4
    const result = await c.compact({ maxMessages: 7 });
    expect(ids(c)).toEqual(["s", "u3", "c3", "o3", "a3"]);
    expect(result.removed).toBe(8);
    const tight = conv(chat(3));
    await tight.compact({ maxMessages: 2 });
    expect(ids(tight)).toEqual(["s", "u3", "c3", "o3", "a3"]);
  });

  it("E11 a tool result that arrived a turn late leaves with its call", async () => {
    const c = conv([
      mk.system("s"),
      mk.user("u1"),
      mk.call("c1", "k"),
      mk.user("u2"),
      mk.output("o1", "k"),
      mk.assistant("a2"),
    ]);
    await c.compact({ maxMessages: 4 });
    expect(ids(c)).toEqual(["s", "u2", "a2"]);
  });

  it("E11 summary folds a late tool result in with its call instead of orphaning it", async () => {
    const c = conv([
      mk.system("s"),
      mk.user("u1"),
      mk.call("c1", "k"),
      mk.user("u2"),
      mk.output("o1", "k"),
      mk.assistant("a2"),
    ]);
    const summarizer = scripted("recap");
    const result = await c.compact({ strategy: "summary", preserveRecent: 2 }, { summarizer });
    expect(ids(c).filter((id) => id !== c.items[1]?.id)).toEqual(["s", "u2", "a2"]);
    expect(result.removed).toBe(3);
    expect(summarizer.calls[0]?.transcript).toBe(
      "user: user u1\nassistant called tool({})\ntool returned: ok",
    );
  });

  it("E6/F20 handoffs and config updates survive compaction", async () => {
    const c = conv([
      mk.system("s"),
      mk.user("u1"),
      mk.config("k"),
      mk.assistant("a1"),
      mk.user("u2"),
      mk.assistant("a2"),
    ]);
    await c.compact({ maxMessages: 4 });
    expect(ids(c)).toEqual(["s", "k", "u2", "a2"]);
  });

  it("E7 tokens protects the newest preserveRecent, then adds older turns newest-first while they fit", async () => {
    // s(4+2) and turns of u(4+25) a(4+25): 58 tokens a turn.
    const items = [mk.system("s", "x".repeat(8))];
    for (let k = 1; k <= 5; k++)
      items.push(mk.user(`u${k}`, "x".repeat(100)), mk.assistant(`a${k}`, "y".repeat(100)));
    const c = conv(items);
    const result = await c.compact({
      strategy: "tokens",
      maxTokens: 6 + 58 * 3,
      preserveRecent: 2,
    });
    expect(ids(c)).toEqual(["s", "u3", "a3", "u4", "a4", "u5", "a5"]);
    expect(result).toMatchObject({
      strategy: "tokens",
      removed: 4,
      beforeTokens: 6 + 58 * 5,
      afterTokens: 6 + 58 * 3,
    });
    expect(result.afterTokens).toBeLessThanOrEqual(6 + 58 * 3);
  });

  it("E7 never drops system messages or the protected tail, even over budget", async () => {
    const c = conv([
      mk.system("s", "x".repeat(400)),
      mk.user("u1"),
      mk.assistant("a1"),
      mk.system("s2", "late rule"),
      mk.user("u2", "z".repeat(400)),
      mk.assistant("a2"),
    ]);
    const result = await c.compact({ strategy: "tokens", maxTokens: 10, preserveRecent: 2 });
    expect(ids(c)).toEqual(["s", "s2", "u2", "a2"]);
    expect(result.afterTokens).toBeGreaterThan(10);
  });

  it("E7 stops at the first older turn that does not fit", async () => {
    const c = conv([mk.user("u1", "x"), mk.user("u2", "x".repeat(400)), mk.user("u3", "x")]);
    await c.compact({ strategy: "tokens", maxTokens: 20, preserveRecent: 1 });
    expect(ids(c)).toEqual(["u3"]);
  });

  it("E8 summary: older items become one summary after the leading system message, one model call", async () => {
    const c = conv(chat(4));
    const summarizer = scripted("they asked four things");
    const result = await c.compact(
      { strategy: "summary", preserveRecent: 3, summaryMaxTokens: 99 },
      { summarizer },
    );
    expect(summarizer.calls).toHaveLength(1);
    expect(summarizer.calls[0]?.maxTokens).toBe(99);
    expect(summarizer.calls[0]?.transcript).toContain("user: question number 1");
    expect(summarizer.calls[0]?.transcript).not.toContain("question number 4");
    const [system, summary, ...rest] = c.items;
    expect(system?.id).toBe("s");
    expect(summary && isSummary(summary)).toBe(true);
    expect(summary).toMatchObject({ role: "assistant" });
    expect((summary as { content: string[] }).content[0]).toContain("they asked four things");
    expect(ids(rest)).toEqual(["u4", "c4", "o4", "a4"]);
    expect(result).toMatchObject({
      strategy: "summary",
      beforeMessages: 17,
      afterMessages: 6,
      removed: 12,
      summaryCreated: true,
    });
  });

  it("E8 is atomic: a provider error or an empty summary leaves the history unchanged", async () => {
    const c = conv(chat(4));
    const before = [...c.items];
    await expect(
      c.compact({ strategy: "summary" }, { summarizer: scripted(new Error("rate limited")) }),
    ).rejects.toThrow("rate limited");
    expect(c.items).toEqual(before);
    const empty = await c.compact(
      { strategy: "summary", preserveRecent: 2 },
      { summarizer: scripted("  ") },
    );
    expect(empty).toMatchObject({
      summaryCreated: false,
      removed: 0,
      afterMessages: before.length,
    });
    expect(c.items).toEqual(before);
    const aborted = new AbortController();
    aborted.abort(new Error("cancelled"));
    await expect(
      c.compact(
        { strategy: "summary", preserveRecent: 2 },
        { summarizer: scripted("s"), signal: aborted.signal },
      ),
    ).rejects.toThrow("cancelled");
    expect(c.items).toEqual(before);
  });

  it("E8 with nothing older than the protected tail makes no model call", async () => {
    const c = conv(chat(1));
    const summarizer = scripted("never");
    const result = await c.compact({ strategy: "summary", preserveRecent: 6 }, { summarizer });
    expect(summarizer.calls).toHaveLength(0);
    expect(result.summaryCreated).toBe(false);
  });

  it("E8 keeps items added while the summarizer was running", async () => {
    const c = conv(chat(3));
    let release: (text: string) => void = () => {};
    const pending = c.compact(
      { strategy: "summary", preserveRecent: 4 },
      { summarizer: () => new Promise<string>((resolve) => (release = resolve)) },
    );
    await Promise.resolve();
    const late = c.addMessage("user", "typed during the summary");
    release("summary");
    await pending;
    expect(c.items.at(-1)).toBe(late);
    expect(ids(c).slice(2)).toEqual(["u3", "c3", "o3", "a3", late.id]);
  });

  it("E9 reports before/after messages and tokens", async () => {
    const c = conv(chat(3));
    const beforeTokens = c.estimatedTokens();
    const result = await c.compact({ maxMessages: 5 });
    expect(result).toEqual({
      strategy: "recent",
      beforeMessages: 13,
      afterMessages: 5,
      removed: 8,
      beforeTokens,
      afterTokens: c.estimatedTokens(),
      summaryCreated: false,
    });
    const none = await c.compact({ maxMessages: 20 });
    expect(none).toMatchObject({ removed: 0, beforeMessages: 5, afterMessages: 5 });
  });

  it("E10 a compaction request is a control payload, never a conversation item", async () => {
    const c = conv(chat(3));
    await c.compact({ maxMessages: 5, sessionId: "sess", metadata: { by: "admin" } });
    expect(JSON.stringify(c.toJSON())).not.toMatch(/sess|admin|maxMessages/);
    expect(c.toLlmMessages().every((m) => !JSON.stringify(m).includes("sess"))).toBe(true);
  });

  const strategies = fc.oneof(
    fc.record({
      strategy: fc.constant("recent" as const),
      maxMessages: fc.integer({ min: 2, max: 12 }),
    }),
    fc.record({
      strategy: fc.constant("tokens" as const),
      maxTokens: fc.integer({ min: 1, max: 300 }),
      preserveRecent: fc.nat(5),
    }),
  );

  it("E11 compaction never cuts inside a user turn (property)", () => {
    fc.assert(
      fc.property(wellFormedItems, strategies, (items, request) => {
        const { kept, removed } = compactItems(items, CompactionRequest.parse(request));
        const keptIds = new Set(ids(kept));
        // Pinned items aside, what is kept is a suffix of the conversation starting at a user turn.
        const pinned = (item: Item, i: number) =>
          isStructural(item) ||
          (request.strategy === "tokens" ? isInstruction(item) : i === 0 && isInstruction(item));
        const cut = items.findIndex((item, i) => !pinned(item, i) && keptIds.has(item.id));
        if (removed.length > 0 && cut >= 0) {
          expect(isUserMessage(items[cut] as Item)).toBe(true);
          for (const item of items.slice(cut)) expect(keptIds.has(item.id)).toBe(true);
        }
        if (cut >= 0) {
          for (const item of items.slice(0, cut)) {
            if (!pinned(item, items.indexOf(item))) expect(keptIds.has(item.id)).toBe(false);
          }
        }
        // The newest user turn is never cut.
        const lastUser = items.findLastIndex(isUserMessage);
        if (request.strategy === "recent" && lastUser >= 0)
          expect(keptIds.has((items[lastUser] as Item).id)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it("E11 compaction never leaves a tool output without its call (property)", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(anyItems, wellFormedItems),
        fc.oneof(
          strategies,
          fc.record({ strategy: fc.constant("summary" as const), preserveRecent: fc.nat(6) }),
        ),
        async (items, request) => {
          const c = conv(items);
          await c.compact(request, { summarizer: scripted("summary") });
          const hadCall = (callId: string) =>
            items.some((i) => i.type === "function_call" && i.callId === callId);
          for (const item of c.items) {
            if (item.type === "function_call_output" && hadCall(item.callId)) {
              expect(
                c.items.some((i) => i.type === "function_call" && i.callId === item.callId),
              ).toBe(true);
            }
          }
          expect(estimateTokens(c.items)).toBe(c.estimatedTokens());
        },
      ),
      { numRuns: 200 },
    );
  });

  it("E6/E7 scale linearly: 100k items compact in well under a second", () => {
    const items: Item[] = [mk.system("s")];
    const createdAt = (items[0] as Item).createdAt;
    for (let i = 0; i < 50_000; i++) {
      items.push(
        {
          type: "message",
          id: `u${i}`,
          createdAt,
          role: "user",
          content: ["q"],
          interrupted: false,
          extra: {},
        },
        {
          type: "message",
          id: `a${i}`,
          createdAt,
          role: "assistant",
          content: ["a"],
          interrupted: false,
          extra: {},
        },
      );
    }
    const recent = compactItems(items, CompactionRequest.parse({ maxMessages: 21 }));
    const tokens = compactItems(
      items,
      CompactionRequest.parse({ strategy: "tokens", maxTokens: 500 }),
    );
    expect(recent.kept).toHaveLength(21);
    expect(estimateTokens(tokens.kept)).toBeLessThanOrEqual(500);
  });
});
