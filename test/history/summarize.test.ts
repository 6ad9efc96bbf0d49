import { describe, expect, it } from "vitest";
import { Conversation } from "../../src/history/conversation";
import { isSummary, type MessageItem } from "../../src/history/items";
import { renderTranscript } from "../../src/history/summarize";
import { at, chat, conv, ids, mk, scripted } from "./helpers";

describe("summarize (F11), mergeWithSummary (F17), context window (F25)", () => {
  it("F11 is a no-op with no more user turns than keepRecentTurns", async () => {
    const c = conv(chat(3));
    const summarizer = scripted("s");
    const result = await c.summarize(summarizer, { keepRecentTurns: 3 });
    expect(result).toEqual({ outcome: "too-few-turns", summary: null, removed: 0 });
    expect(summarizer.calls).toHaveLength(0);
    expect(c.length).toBe(13);
  });

  it("F11 keeps structural items of the older part in order, then one flagged summary, then the recent part", async () => {
    const c = conv([
      mk.system("s", "rules", 0),
      mk.user("u1", "first question", 1),
      mk.handoff("h", 2),
      mk.assistant("a1", "first answer", 3),
      mk.developer("d", "more rules", 4),
      mk.summary("old", "earlier recap", 5),
      mk.config("k", { tools: ["x"] }, 6),
      mk.user("u2", "second", 7),
      mk.assistant("a2", "reply", 8),
      mk.user("u3", "third", 9),
      mk.assistant("a3", "reply", 10),
    ]);
    const summarizer = scripted("  they talked  ");
    const result = await c.summarize(summarizer, { keepRecentTurns: 2 });
    expect(result.outcome).toBe("summarized");
    expect(result.removed).toBe(2);
    const summary = result.summary as MessageItem;
    expect(ids(c)).toEqual(["s", "h", "d", "old", "k", summary.id, "u2", "a2", "u3", "a3"]);
    expect(isSummary(summary)).toBe(true);
    expect(summary.role).toBe("assistant");
    expect(summary.content[0]).toMatch(/they talked$/);
    expect(summary.createdAt).toBe(at(6)); // sorts where the items it replaced were
    expect(summarizer.calls[0]?.transcript).toBe("user: first question\nassistant: first answer");
    expect(summarizer.calls[0]?.maxTokens).toBe(512);
  });

  it("F11 defaults to keeping 3 turns and validates keepRecentTurns", async () => {
    const c = conv(chat(4));
    await c.summarize(scripted("recap"));
    expect(c.turnCount()).toBe(3);
    await expect(c.summarize(scripted("x"), { keepRecentTurns: 0 })).rejects.toThrow(RangeError);
  });

  it("F11 an empty summary or a summarizer error leaves the history unchanged", async () => {
    const c = conv(chat(5));
    const before = [...c.items];
    expect((await c.summarize(scripted(""), { keepRecentTurns: 1 })).outcome).toBe("empty-summary");
    expect(c.items).toEqual(before);
    await expect(
      c.summarize(scripted(new Error("provider down")), { keepRecentTurns: 1 }),
    ).rejects.toThrow("provider down");
    expect(c.items).toEqual(before);
  });

  it("F11 makes no model call when the older part has no text to summarize", async () => {
    const summarizer = scripted("x");
    const blank = conv([
      mk.system("s"),
      mk.handoff("h"),
      mk.user("u0", "   "),
      mk.user("u1"),
      mk.user("u2"),
    ]);
    const result = await blank.summarize(summarizer, { keepRecentTurns: 2 });
    expect(result.outcome).toBe("nothing-to-summarize");
    expect(summarizer.calls).toHaveLength(0);
    expect(ids(blank)).toEqual(["s", "h", "u0", "u1", "u2"]);
  });

  it("F11 the summarizer gets the abort signal", async () => {
    const c = conv(chat(4));
    const controller = new AbortController();
    const summarizer = scripted("ok");
    await c.summarize(summarizer, { keepRecentTurns: 1, signal: controller.signal, maxTokens: 64 });
    expect(summarizer.calls[0]?.signal).toBe(controller.signal);
    expect(summarizer.calls[0]?.maxTokens).toBe(64);
  });

  it("F11 renders calls and outputs for the summarizer, never structural items", () => {
    const text = renderTranscript([
      mk.user("u", "hi"),
      mk.call("c", "k", "search"),
      mk.output("o", "k", "search"),
      mk.handoff("h"),
      mk.config("k2", { instructions: "secret" }),
    ]);
    expect(text).toBe("user: hi\nassistant called search({})\nsearch returned: ok");
  });

  it("F17 mergeWithSummary appends a flagged sub-agent summary", async () => {
    const parent = conv([mk.system("s"), mk.user("u")]);
    const sub = parent.forkBrief({ instructions: "research", brief: "find X", agentId: "r" });
    sub.addMessage("assistant", "found X", { agentId: "r" });
    const summarizer = scripted("X was found");
    const added = await parent.mergeWithSummary(sub, { summarizer, agentId: "r", maxTokens: 100 });
    expect(parent.items.at(-1)).toBe(added);
    expect(added && isSummary(added)).toBe(true);
    expect(added).toMatchObject({ role: "assistant", agentId: "r" });
    expect(added?.content[0]).toContain("X was found");
    expect(summarizer.calls[0]?.transcript).toContain("assistant: found X");
    expect(summarizer.calls[0]?.maxTokens).toBe(100);
  });

  it("F17 is a no-op for an empty sub-agent or an empty summary", async () => {
    const parent = conv([mk.user("u")]);
    const summarizer = scripted("");
    expect(await parent.mergeWithSummary(new Conversation(), { summarizer })).toBeNull();
    expect(summarizer.calls).toHaveLength(0);
    expect(await parent.mergeWithSummary(conv([mk.assistant("a")]), { summarizer })).toBeNull();
    expect(summarizer.calls).toHaveLength(1);
    expect(ids(parent)).toEqual(["u"]);
    await expect(
      parent.mergeWithSummary(conv([mk.assistant("a")]), { summarizer: scripted(new Error("x")) }),
    ).rejects.toThrow();
    expect(ids(parent)).toEqual(["u"]);
  });

  it("F25 summarizes only when over budget and turns > keep + 1, then truncates", async () => {
    const summarizer = scripted("recap");
    const within = conv(chat(6));
    const fit = await within.fitContextWindow({
      maxTokens: 100_000,
      summarizer,
      keepRecentTurns: 2,
    });
    expect(fit).toMatchObject({ summarized: false, truncated: 0 });
    expect(summarizer.calls).toHaveLength(0);

    const fewTurns = conv(chat(3)); // 3 turns, keep 2: not > 3
    await fewTurns.fitContextWindow({ maxTokens: 10, summarizer, keepRecentTurns: 2 });
    expect(summarizer.calls).toHaveLength(0);
    expect(fewTurns.estimatedTokens()).toBeLessThan(conv(chat(3)).estimatedTokens());

    const over = conv(chat(4));
    const result = await over.fitContextWindow({ maxTokens: 60, summarizer, keepRecentTurns: 2 });
    expect(summarizer.calls).toHaveLength(1);
    expect(result.summarized).toBe(true);
    expect(result.afterTokens).toBeLessThanOrEqual(60);
    expect(result.beforeItems).toBe(17);
    expect(over.items.some(isSummary)).toBe(true); // the first summary is protected by truncate
  });

  it("F25 a failing summarizer is reported and truncation still runs", async () => {
    const c = conv(chat(6));
    const result = await c.fitContextWindow({
      maxTokens: 40,
      maxItems: 6,
      summarizer: scripted(new Error("down")),
    });
    expect(result.summarized).toBe(false);
    expect(result.summaryError).toBeInstanceOf(Error);
    expect(c.length).toBeLessThanOrEqual(6);
    expect(result.truncated).toBeGreaterThan(0);
  });

  it("F25 without a summarizer only truncates; bad budgets are rejected first", async () => {
    const c = conv(chat(6));
    await c.fitContextWindow({ maxTokens: 1000, maxItems: 5 });
    expect(c.length).toBeLessThanOrEqual(5);
    const d = conv(chat(6));
    await expect(d.fitContextWindow({ maxTokens: -5, summarizer: scripted("s") })).rejects.toThrow(
      RangeError,
    );
    expect(d.length).toBe(25);
  });
});
