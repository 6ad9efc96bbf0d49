import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Conversation } from "../../src/history/conversation";
import { applyItemDiff, diffItems, itemJsonBytes } from "../../src/history/diff";
import type { Item } from "../../src/history/items";
import { anyItems } from "./arbitraries";
import { chat, conv, ids, mk, scripted } from "./helpers";

describe("diffItems and itemJsonBytes (store helpers)", () => {
  it("reports removed ids, added items with their anchor, and changed items", () => {
    const before = [mk.system("s", "old"), mk.user("u1"), mk.assistant("a1"), mk.user("u2")];
    const after = [
      mk.system("s", "new"),
      mk.user("n0"),
      mk.user("u1"),
      mk.user("u2"),
      mk.assistant("n1"),
      mk.assistant("n2"),
    ];
    const diff = diffItems(before, after);
    expect(diff.removed).toEqual(["a1"]);
    expect(diff.added.map(({ item, afterId }) => [item.id, afterId])).toEqual([
      ["n0", "s"],
      ["n1", "u2"],
      ["n2", "u2"],
    ]);
    expect(ids(diff.changed)).toEqual(["s"]);
    expect(applyItemDiff(before, diff)).toEqual(after);
  });

  it("anchors at the front with null and reports nothing for equal lists", () => {
    const items = [mk.user("u")];
    expect(diffItems(items, [mk.user("x"), ...items]).added).toEqual([
      { item: mk.user("x"), afterId: null },
    ]);
    expect(
      diffItems(
        items,
        items.map((i) => structuredClone(i)),
      ),
    ).toEqual({ removed: [], added: [], changed: [] });
  });

  it("reports the fewest moves when items were reordered", () => {
    const [a, b, c, d] = [mk.user("a"), mk.user("b"), mk.user("c"), mk.user("d")];
    const diff = diffItems([a, b, c, d] as Item[], [b, c, d, a] as Item[]);
    expect(diff.removed).toEqual(["a"]);
    expect(diff.added).toEqual([{ item: a, afterId: "d" }]);
  });

  it("refuses duplicate ids", () => {
    expect(() => diffItems([mk.user("a"), mk.user("a")], [])).toThrow(/duplicate/);
  });

  it("keeps surviving ids and gives new items fresh ids across every operation", async () => {
    const c = conv(chat(5));
    let before = [...c.items];
    const check = () => {
      const after = [...c.items];
      const diff = diffItems(before, after);
      expect(applyItemDiff(before, diff)).toEqual(after);
      const beforeIds = new Set(ids(before));
      for (const { item } of diff.added)
        if (!diff.removed.includes(item.id)) expect(beforeIds.has(item.id)).toBe(false);
      before = after;
      return diff;
    };
    c.setSystem("new rules");
    expect(check()).toMatchObject({ removed: [], added: [], changed: [{ id: "s" }] });
    await c.summarize(scripted("recap"), { keepRecentTurns: 2 });
    const summarized = check();
    expect(summarized.added).toHaveLength(1);
    expect(summarized.added[0]?.afterId).toBe("s");
    c.truncate({ maxItems: 6 });
    expect(check().added).toEqual([]);
    c.addMessage("user", "more");
    expect(check().added).toHaveLength(1);
  });

  it("applying diffItems(before, after) to before reproduces after (property)", async () => {
    const op = fc.constantFrom(
      "truncate",
      "keepRecent",
      "compact",
      "summarize",
      "merge",
      "setSystem",
      "insert",
      "shuffle",
      "edit",
    );
    await fc.assert(
      fc.asyncProperty(
        anyItems,
        fc.array(op, { maxLength: 4 }),
        fc.nat(20),
        async (items, ops, n) => {
          const c = new Conversation({ items });
          let inserted = 0;
          for (const name of ops) {
            const before = [...c.items];
            switch (name) {
              case "truncate":
                c.truncate({ maxItems: n });
                break;
              case "keepRecent":
                c.keepRecent(n + 2);
                break;
              case "compact":
                await c.compact(
                  {
                    strategy: n % 2 ? "tokens" : "summary",
                    maxTokens: n * 10 + 1,
                    preserveRecent: n % 4,
                  },
                  { summarizer: scripted("s") },
                );
                break;
              case "summarize":
                await c.summarize(scripted("s"), { keepRecentTurns: (n % 3) + 1 });
                break;
              case "merge":
                c.merge(conv([mk.user("m1", "x", n), mk.user("m2", "x", 0)]));
                break;
              case "setSystem":
                c.setSystem(`rules ${n}`);
                break;
              case "insert":
                c.insert(mk.assistant(`ins${inserted++}`, "x", n));
                break;
              case "shuffle": {
                const shuffled = [...c.items].reverse().filter((_, i) => i % 3 !== 1);
                c.replace(shuffled);
                break;
              }
              case "edit":
                if (c.items[0])
                  c.replace([{ ...c.items[0], agentId: `edited${n}` }, ...c.items.slice(1)]);
                break;
            }
            const after = [...c.items];
            expect(applyItemDiff(before, diffItems(before, after))).toEqual(after);
          }
        },
      ),
      { numRuns: 150 },
    );
  });

  it("itemJsonBytes counts UTF-8 bytes of the stored JSON", () => {
    const item = mk.user("u", "é");
    expect(itemJsonBytes(item)).toBe(new TextEncoder().encode(JSON.stringify(item)).length);
    expect(itemJsonBytes(mk.user("u", "éé")) - itemJsonBytes(mk.user("u", "ee"))).toBe(2);
  });

  it("diff scales: 100k items in well under a second", () => {
    const items: Item[] = [];
    const createdAt = mk.user("x").createdAt;
    for (let i = 0; i < 100_000; i++) {
      items.push({
        type: "message",
        id: `m${i}`,
        createdAt,
        role: "user",
        content: ["q"],
        interrupted: false,
        extra: {},
      });
    }
    const after = items.filter((_, i) => i % 10 !== 0);
    after.splice(500, 0, {
      type: "message",
      id: "new",
      createdAt,
      role: "user",
      content: ["n"],
      interrupted: false,
      extra: {},
    });
    const diff = diffItems(items, after);
    expect(diff.removed).toHaveLength(10_000);
    expect(diff.added).toHaveLength(1);
  });
});
