import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Conversation } from "../../src/history/conversation";
import type { Item, MessageItem } from "../../src/history/items";
import { anyItems } from "./arbitraries";
import { at, chat, conv, ids, mk } from "./helpers";

describe("fork, merge and copy (F12–F18)", () => {
  it("F12 fork is a deep copy, independent both ways", () => {
    const parent = conv([mk.system("s"), mk.user("u"), mk.config("k", { tools: ["a"] })]);
    const child = parent.fork();
    expect(child.items).toEqual(parent.items);
    expect(child.items[0]).not.toBe(parent.items[0]);
    child.addMessage("assistant", "child only");
    parent.addMessage("assistant", "parent only");
    (child.items[0] as MessageItem).content.push("edited in child");
    (child.items[2] as { tools: string[] }).tools.push("b");
    expect(parent.items[0]).toMatchObject({ content: ["sys s"] });
    expect(parent.activeConfigAt().tools).toEqual(["a"]);
    expect(parent.length).toBe(4);
    expect(child.length).toBe(4);
    expect(child.items.at(-1)?.id).not.toBe(parent.items.at(-1)?.id);
  });

  it("F13 forkFiltered keeps instructions first, then from the recentTurns-th last user message on", () => {
    const c = conv([
      mk.system("s"),
      mk.user("u1"),
      mk.assistant("a1"),
      mk.developer("d"),
      mk.user("u2"),
      mk.call("c2", "k2", "search"),
      mk.output("o2", "k2", "search"),
      mk.call("c3", "k3", "calc"),
      mk.output("o3", "k3", "calc"),
      mk.user("u3"),
    ]);
    expect(ids(c.forkFiltered({ recentTurns: 2 }))).toEqual([
      "s",
      "d",
      "u2",
      "c2",
      "o2",
      "c3",
      "o3",
      "u3",
    ]);
    expect(ids(c.forkFiltered({ recentTurns: 2, tools: ["calc"] }))).toEqual([
      "s",
      "d",
      "u2",
      "c3",
      "o3",
      "u3",
    ]);
    expect(ids(c.forkFiltered({ recentTurns: 1, tools: [] }))).toEqual(["s", "d", "u3"]);
    expect(ids(c.forkFiltered())).toEqual(ids(c.forkFiltered({ recentTurns: 3 })));
    // Up to recentTurns user turns keeps everything.
    expect(ids(c.forkFiltered({ recentTurns: 3 }))).toEqual([
      "s",
      "d",
      "u1",
      "a1",
      "u2",
      "c2",
      "o2",
      "c3",
      "o3",
      "u3",
    ]);
    const fork = c.forkFiltered({ recentTurns: 1 });
    (fork.items[0] as MessageItem).content.push("x");
    expect(c.items[0]).toMatchObject({ content: ["sys s"] });
  });

  it("F13 recentTurns < 1 raises", () => {
    const c = conv(chat(2));
    expect(() => c.forkFiltered({ recentTurns: 0 })).toThrow(RangeError);
    expect(() => c.forkFiltered({ recentTurns: -2 })).toThrow(RangeError);
  });

  it("F14 forkBrief: a system message plus an optional user brief, stamped with agentId", () => {
    const c = conv(chat(3));
    const brief = c.forkBrief({
      instructions: "You research.",
      brief: "Find prices",
      agentId: "researcher",
    });
    expect(
      brief.items.map((i) => [(i as MessageItem).role, (i as MessageItem).content[0], i.agentId]),
    ).toEqual([
      ["system", "You research.", "researcher"],
      ["user", "Find prices", "researcher"],
    ]);
    expect(c.forkBrief({ instructions: "x" }).items).toHaveLength(1);
    expect(c.forkBrief({ instructions: "x" }).items[0]).not.toHaveProperty("agentId");
    expect(() => c.forkBrief({ instructions: "" })).toThrow(/instructions/);
  });

  it("F15 merge adds unseen items, stable-sorted by createdAt, and is idempotent", () => {
    const parent = conv([mk.user("p1", "", 1), mk.assistant("p2", "", 3)]);
    const sub = parent.fork();
    sub.addMessage("assistant", "sub work", { id: "s1", createdAt: at(2) });
    sub.addMessage("assistant", "same time", { id: "s2", createdAt: at(3) });
    parent.addMessage("user", "meanwhile", { id: "p3", createdAt: at(4) });
    const added = parent.merge(sub);
    expect(ids(added)).toEqual(["s1", "s2"]);
    expect(ids(parent)).toEqual(["p1", "s1", "p2", "s2", "p3"]);
    expect(parent.merge(sub)).toEqual([]);
    expect(ids(parent)).toEqual(["p1", "s1", "p2", "s2", "p3"]);
    (sub.getById("s1") as MessageItem).content.push("later edit");
    expect(parent.getById("s1")).toMatchObject({ content: ["sub work"] });
  });

  it("F16 mergeResult appends only the other's last assistant message", () => {
    const parent = conv([mk.user("u")]);
    const sub = conv([
      mk.user("x"),
      mk.assistant("first"),
      mk.assistant("final"),
      mk.user("trailing"),
    ]);
    const merged = parent.mergeResult(sub, { agentId: "helper" });
    expect(ids(parent)).toEqual(["u", "final"]);
    expect(merged).toMatchObject({ id: "final", agentId: "helper", content: ["assistant final"] });
    expect(merged).not.toBe(sub.items[2]);
    // Taken id: the copy gets a fresh one.
    const again = parent.mergeResult(sub);
    expect(again?.id).not.toBe("final");
    expect(again?.agentId).toBeUndefined();
    expect(parent.mergeResult(conv([mk.user("only")]))).toBeNull();
    expect(parent.length).toBe(3);
  });

  it("F18 copy filters: system, instructions, empty, handoffs, config updates", () => {
    const c = conv([
      mk.system("s"),
      mk.developer("d"),
      mk.user("u"),
      mk.assistant("empty", "   "),
      { type: "message", id: "img", role: "user", content: [{ type: "image", url: "https://x" }] },
      mk.handoff("h"),
      mk.config("k"),
    ]);
    expect(ids(c.copy())).toEqual(["s", "d", "u", "empty", "img", "h", "k"]);
    expect(ids(c.copy({ excludeSystem: true }))).toEqual(["d", "u", "empty", "img", "h", "k"]);
    expect(ids(c.copy({ excludeInstructions: true }))).toEqual(["u", "empty", "img", "h", "k"]);
    expect(ids(c.copy({ excludeEmpty: true }))).toEqual(["s", "d", "u", "img", "h", "k"]);
    expect(ids(c.copy({ excludeHandoffs: true }))).toEqual(["s", "d", "u", "empty", "img", "k"]);
    expect(ids(c.copy({ excludeConfigUpdates: true }))).toEqual([
      "s",
      "d",
      "u",
      "empty",
      "img",
      "h",
    ]);
  });

  it("F18 tools: null keeps all calls, [] drops all, a list keeps the named ones", () => {
    const c = conv([
      mk.user("u"),
      mk.call("c1", "k1", "a"),
      mk.output("o1", "k1", "a"),
      mk.call("c2", "k2", "b"),
      mk.output("o2", "k2", "b"),
    ]);
    expect(ids(c.copy({ tools: null }))).toEqual(["u", "c1", "o1", "c2", "o2"]);
    expect(ids(c.copy({ tools: [] }))).toEqual(["u"]);
    expect(ids(c.copy({ tools: ["b"] }))).toEqual(["u", "c2", "o2"]);
  });

  it("F18 filtering by agentId keeps that agent's items plus structural items and instructions", () => {
    const c = conv([
      { ...mk.system("s"), agentId: "other" },
      { ...mk.user("u1"), agentId: "a" },
      { ...mk.user("u2"), agentId: "b" },
      mk.assistant("none"),
      { ...mk.handoff("h"), agentId: "b" },
      mk.config("k"),
      { ...mk.developer("d"), agentId: "b" },
    ]);
    expect(ids(c.copy({ agentId: "a" }))).toEqual(["s", "u1", "h", "k", "d"]);
  });

  it("F18 copy returns an editable deep copy", () => {
    const c = conv([mk.user("u")]);
    const copy = c.readonly().copy();
    copy.addMessage("assistant", "ok");
    (copy.items[0] as MessageItem).content.push("x");
    expect(ids(c)).toEqual(["u"]);
    expect(c.items[0]).toMatchObject({ content: ["user u"] });
  });

  it("F12/F15 fork then merge back preserves every item of both (property)", () => {
    fc.assert(
      fc.property(
        anyItems,
        fc.array(fc.constantFrom("user", "assistant"), { maxLength: 5 }),
        fc.nat(5),
        (items, extra, parentExtra) => {
          const parent = conv(items);
          const snapshot = JSON.stringify(parent.items);
          const child = parent.fork();
          for (const [i, role] of extra.entries()) {
            child.addMessage(role as "user" | "assistant", `c${i}`, { createdAt: at(i * 3) });
          }
          expect(JSON.stringify(parent.items)).toBe(snapshot); // the fork never reaches back
          for (let i = 0; i < parentExtra; i++)
            parent.addMessage("user", `p${i}`, { createdAt: at(i * 2) });
          const before = new Map(parent.items.map((item) => [item.id, item]));
          parent.merge(child);
          const merged = new Map(parent.items.map((item) => [item.id, item]));
          expect(merged.size).toBe(parent.length); // no duplicates
          for (const item of [...before.values(), ...child.items])
            expect(merged.get(item.id)).toEqual(item);
          expect(parent.length).toBe(before.size + extra.length);
          const times = parent.items.map((item: Item) => Date.parse(item.createdAt));
          expect(times).toEqual([...times].sort((a, b) => a - b));
          const again = JSON.stringify(parent.items);
          parent.merge(child);
          expect(JSON.stringify(parent.items)).toBe(again); // idempotent
          expect(Conversation.fromJSON(JSON.parse(JSON.stringify(parent))).items).toEqual(
            parent.items,
          );
        },
      ),
      { numRuns: 150 },
    );
  });
});
