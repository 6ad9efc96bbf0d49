import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { keepRecentItems } from "../../src/history/compaction";
import {
  type Item,
  isInstruction,
  isStructural,
  isSummary,
  isUserMessage,
} from "../../src/history/items";
import { estimateItemTokens, estimateTokens } from "../../src/history/tokens";
import {
  awaitingCallIndexes,
  protectedIndexes,
  type TruncateLimits,
  truncateItems,
} from "../../src/history/truncate";
import { anyItems, wellFormedItems } from "./arbitraries";
import { chat, conv, ids, mk } from "./helpers";

/** A straightforward, quadratic statement of F8–F10 to compare the linear one against. */
function naiveTruncate(items: readonly Item[], limits: TruncateLimits): Item[] {
  const { maxItems, maxTokens } = limits;
  if (maxItems == null && maxTokens == null) return [...items];
  const awaiting = new Set([...awaitingCallIndexes(items)].map((i) => items[i] as Item));
  const keep = new Set<Item>([
    ...awaiting,
    ...[items.find(isInstruction), items.find(isSummary), items.findLast(isUserMessage)].filter(
      (item) => item !== undefined,
    ),
    ...items.filter(isStructural),
  ]);
  const dropOrphans = (list: Item[]) =>
    list.filter((item) => {
      if (item.type === "function_call") {
        return (
          awaiting.has(item) ||
          list.some((o) => o.type === "function_call_output" && o.callId === item.callId)
        );
      }
      if (item.type === "function_call_output") {
        return list.some((c) => c.type === "function_call" && c.callId === item.callId);
      }
      return true;
    });
  let list = dropOrphans([...items]);
  const over = () =>
    (maxItems != null && list.length > maxItems) ||
    (maxTokens != null && estimateTokens(list) > maxTokens);
  while (over()) {
    const victim = list.find((item) => !keep.has(item));
    if (!victim) break;
    if (victim.type === "function_call" || victim.type === "function_call_output") {
      list = list.filter(
        (item) =>
          keep.has(item) ||
          !(
            (item.type === "function_call" || item.type === "function_call_output") &&
            item.callId === victim.callId
          ),
      );
    } else list = list.filter((item) => item !== victim);
  }
  return dropOrphans(list);
}

describe("truncate (F8–F10)", () => {
  it("F9 with no limits is a no-op, orphans included", () => {
    const c = conv([mk.output("o", "nobody"), mk.user("u")]);
    expect(c.truncate()).toEqual([]);
    expect(c.truncate({ maxItems: null, maxTokens: null })).toEqual([]);
    expect(ids(c)).toEqual(["o", "u"]);
  });

  it("F9 removes oldest unprotected first until items <= maxItems", () => {
    const c = conv([
      mk.system("s"),
      mk.user("u1"),
      mk.assistant("a1"),
      mk.user("u2"),
      mk.assistant("a2"),
    ]);
    const removed = c.truncate({ maxItems: 3 });
    expect(ids(removed)).toEqual(["u1", "a1"]);
    expect(ids(c)).toEqual(["s", "u2", "a2"]);
  });

  it("F9 removes until the token estimate fits, and both limits must hold", () => {
    const items = [
      mk.system("s", "x".repeat(40)),
      mk.user("u1", "x".repeat(400)),
      mk.assistant("a1", "x".repeat(40)),
      mk.user("u2", "y"),
    ];
    const c = conv(items);
    c.truncate({ maxTokens: 40 });
    expect(ids(c)).toEqual(["s", "a1", "u2"]);
    expect(c.estimatedTokens()).toBeLessThanOrEqual(40);
    const both = conv(items);
    both.truncate({ maxTokens: 10_000, maxItems: 2 });
    expect(ids(both)).toEqual(["s", "u2"]);
  });

  it("F9 a call goes together with its output", () => {
    const c = conv([
      mk.user("u1"),
      mk.call("c", "k"),
      mk.assistant("a"),
      mk.output("o", "k"),
      mk.user("u2"),
    ]);
    const removed = c.truncate({ maxItems: 4 });
    // u1 goes first (4 items now), fitting; then nothing else.
    expect(ids(removed)).toEqual(["u1"]);
    const tighter = conv([
      mk.call("c", "k"),
      mk.assistant("a"),
      mk.output("o", "k"),
      mk.user("u2"),
    ]);
    expect(ids(tighter.truncate({ maxItems: 3 }))).toEqual(["c", "o"]);
    expect(ids(tighter)).toEqual(["a", "u2"]);
  });

  it("F9 stops when only protected items remain, even over budget", () => {
    const c = conv([
      mk.system("s", "x".repeat(400)),
      mk.summary("sum"),
      mk.user("u1"),
      mk.handoff("h"),
      mk.config("k"),
      mk.user("u2"),
    ]);
    c.truncate({ maxItems: 1, maxTokens: 1 });
    expect(ids(c)).toEqual(["s", "sum", "h", "k", "u2"]);
  });

  it("F8 protects the first system/developer message, the first summary, the last user message, handoffs and config updates", () => {
    const items = [
      mk.assistant("a0"),
      mk.developer("d1"),
      mk.system("s2"),
      mk.summary("sum1"),
      mk.summary("sum2"),
      mk.handoff("h"),
      mk.user("u1"),
      mk.config("k"),
      mk.user("u2"),
      mk.assistant("a2"),
    ];
    const c = conv(items);
    c.truncate({ maxItems: 0 });
    expect(ids(c)).toEqual(["d1", "sum1", "h", "k", "u2"]);
    expect([...protectedIndexes(items)].sort((a, b) => a - b)).toEqual([1, 3, 5, 7, 8]);
  });

  it("F10 removes calls without outputs and outputs without calls", () => {
    const c = conv([
      mk.user("u1"),
      mk.call("c1", "lost"),
      mk.output("o2", "ghost"),
      mk.assistant("a1"),
      mk.user("u2"),
      mk.assistant("a2"),
    ]);
    c.truncate({ maxItems: 100 });
    expect(ids(c)).toEqual(["u1", "a1", "u2", "a2"]);
  });

  it("F10 keeps a trailing call still awaiting its output (better)", () => {
    const c = conv([
      mk.user("u1"),
      mk.assistant("a1"),
      mk.user("u2"),
      mk.call("c1", "k1"),
      mk.call("c2", "k2"),
      mk.output("o2", "k2"),
    ]);
    c.truncate({ maxItems: 100 });
    expect(ids(c)).toEqual(["u1", "a1", "u2", "c1", "c2", "o2"]);
    // ... and protects it from trimming too: its output is about to arrive.
    c.truncate({ maxItems: 0 });
    expect(ids(c)).toEqual(["u2", "c1"]);
    // Once a message follows, an unanswered call is an orphan again.
    c.addMessage("assistant", "gave up");
    c.truncate({ maxItems: 100 });
    expect(ids(c)).toEqual(["u2", c.items[1]?.id]);
    expect(c.items.some((i) => i.type === "function_call")).toBe(false);
  });

  it("F10 orphans go before trimming, so they never cost a real turn its place", () => {
    const c = conv([mk.user("u1"), mk.assistant("a1"), mk.output("o", "ghost"), mk.user("u2")]);
    c.truncate({ maxItems: 3 });
    expect(ids(c)).toEqual(["u1", "a1", "u2"]);
  });

  it("F9 rejects negative or fractional limits before changing anything", () => {
    const c = conv(chat(2));
    expect(() => c.truncate({ maxItems: -1 })).toThrow(RangeError);
    expect(() => c.truncate({ maxTokens: 1.5 })).toThrow(RangeError);
    expect(c.length).toBe(9);
  });

  it("F9 keeps ids of surviving items unchanged", () => {
    const c = conv(chat(5));
    const before = new Map(c.items.map((i) => [i.id, i]));
    c.truncate({ maxItems: 8 });
    for (const item of c.items) expect(before.get(item.id)).toBe(item);
  });

  it("F8–F10 matches a straightforward statement of the rules (property)", () => {
    fc.assert(
      fc.property(
        anyItems,
        fc.option(fc.nat(30), { nil: undefined }),
        fc.option(fc.nat(300), { nil: undefined }),
        (items, maxItems, maxTokens) => {
          const limits = { maxItems, maxTokens };
          expect(ids(truncateItems(items, limits).kept)).toEqual(ids(naiveTruncate(items, limits)));
        },
      ),
      { numRuns: 300 },
    );
  });

  it("F9/F10 never orphans a tool pair and never removes a protected item (property)", () => {
    fc.assert(
      fc.property(
        fc.oneof(anyItems, wellFormedItems),
        fc.nat(30),
        fc.nat(400),
        (items, maxItems, maxTokens) => {
          const protect = [...protectedIndexes(items)].map((i) => items[i] as Item);
          const awaiting = new Set(
            [...awaitingCallIndexes(items)].map((i) => (items[i] as Item).id),
          );
          const { kept } = truncateItems(items, { maxItems, maxTokens });
          const keptIds = new Set(ids(kept));
          for (const item of protect) expect(keptIds.has(item.id)).toBe(true);
          for (const item of kept) {
            if (item.type === "function_call_output") {
              expect(kept.some((c) => c.type === "function_call" && c.callId === item.callId)).toBe(
                true,
              );
            }
            if (item.type === "function_call" && !awaiting.has(item.id)) {
              expect(
                kept.some((o) => o.type === "function_call_output" && o.callId === item.callId),
              ).toBe(true);
            }
          }
          const over = kept.length > maxItems || estimateTokens(kept) > maxTokens;
          if (over)
            for (const item of kept) expect(protect.some((p) => p.id === item.id)).toBe(true);
          // Order is preserved.
          const order = ids(items).filter((id) => keptIds.has(id));
          expect(ids(kept)).toEqual(order);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("F9 scales linearly: 100k items truncate in well under a second", () => {
    const items: Item[] = [mk.system("s")];
    for (let i = 0; i < 25_000; i++) {
      items.push(
        {
          type: "message",
          id: `u${i}`,
          createdAt: items[0]?.createdAt as string,
          role: "user",
          content: ["question"],
          interrupted: false,
          extra: {},
        },
        {
          type: "function_call",
          id: `c${i}`,
          createdAt: items[0]?.createdAt as string,
          name: "f",
          arguments: "{}",
          callId: `k${i}`,
        },
        {
          type: "function_call_output",
          id: `o${i}`,
          createdAt: items[0]?.createdAt as string,
          name: "f",
          callId: `k${i}`,
          output: "r",
          isError: false,
        },
        {
          type: "message",
          id: `a${i}`,
          createdAt: items[0]?.createdAt as string,
          role: "assistant",
          content: ["answer"],
          interrupted: false,
          extra: {},
        },
      );
    }
    const { kept } = truncateItems(items, { maxItems: 50, maxTokens: 100_000 });
    const tokenFit = truncateItems(items, { maxTokens: 1000 });
    expect(kept).toHaveLength(50);
    expect(estimateTokens(tokenFit.kept)).toBeLessThanOrEqual(1000);
    expect(estimateItemTokens(items[1] as Item)).toBe(6);
  });
});

describe("keepRecent (E4)", () => {
  const plain = () => [
    mk.system("s"),
    mk.user("u1"),
    mk.assistant("a1"),
    mk.user("u2"),
    mk.assistant("a2"),
    mk.user("u3"),
    mk.assistant("a3"),
  ];

  it("E4 raises if maxMessages < 2, before changing anything", () => {
    const c = conv(plain());
    expect(() => c.keepRecent(1)).toThrow(RangeError);
    expect(() => c.keepRecent(2.5)).toThrow(RangeError);
    expect(c.length).toBe(7);
  });

  it("E4 keeps the first message plus the newest max-1 (item boundary: exactly)", () => {
    const c = conv(plain());
    c.keepRecent(4, { boundary: "item" });
    expect(ids(c)).toEqual(["s", "a2", "u3", "a3"]);
    const first = conv([mk.user("u0"), ...plain().slice(1)]);
    first.keepRecent(2, { boundary: "item" });
    expect(ids(first)).toEqual(["u0", "a3"]);
  });

  it("E4 by default cuts only between user turns (decision 4), keeping at most max", () => {
    const c = conv(plain());
    c.keepRecent(4);
    expect(ids(c)).toEqual(["s", "u3", "a3"]);
    const exact = conv(plain());
    exact.keepRecent(5);
    expect(ids(exact)).toEqual(["s", "u2", "a2", "u3", "a3"]);
  });

  it("E4 never leaves a tool output without its call, even at item boundaries", () => {
    const c = conv(chat(2)); // s u1 c1 o1 a1 u2 c2 o2 a2
    c.keepRecent(3, { boundary: "item" }); // newest 2 would be o2 a2
    expect(ids(c)).toEqual(["s", "a2"]);
  });

  it("E4 keeps the newest turn whole when it alone is longer than max", () => {
    const c = conv(chat(2));
    c.keepRecent(2);
    expect(ids(c)).toEqual(["s", "u2", "c2", "o2", "a2"]);
  });

  it("E4 keeps handoffs and config updates", () => {
    const c = conv([
      mk.system("s"),
      mk.user("u1"),
      mk.handoff("h"),
      mk.assistant("a1"),
      mk.user("u2"),
      mk.assistant("a2"),
    ]);
    c.keepRecent(4);
    expect(ids(c)).toEqual(["s", "h", "u2", "a2"]);
    expect(keepRecentItems([], 2).kept).toEqual([]);
  });
});
