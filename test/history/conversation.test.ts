import { describe, expect, it } from "vitest";
import { Conversation } from "../../src/history/conversation";
import { type Item, Item as ItemSchema, type MessageItem } from "../../src/history/items";
import { estimateItemTokens } from "../../src/history/tokens";
import { at, conv, ids, mk } from "./helpers";

describe("Conversation basics (E2, E3, F3, F5, F6, F7, F19)", () => {
  it("E2 an empty system prompt adds nothing; a non-empty one becomes the first message", () => {
    expect(new Conversation({ systemPrompt: "" }).length).toBe(0);
    const c = new Conversation({ systemPrompt: "be terse" });
    expect(c.items).toHaveLength(1);
    expect(c.items[0]).toMatchObject({ role: "system", content: ["be terse"] });
    expect(c.addSystem("")).toBeNull();
    expect(c.length).toBe(1);
  });

  it("E2 addSystem appends a system message", () => {
    const c = conv([mk.system("s"), mk.user("u")]);
    const added = c.addSystem("later rule");
    expect(c.items.at(-1)).toBe(added);
    expect(added?.role).toBe("system");
  });

  it("E2 setSystem replaces a leading system message in place (same id) and keeps later turns", () => {
    const c = conv([mk.system("s", "old"), mk.user("u"), mk.assistant("a")]);
    const replaced = c.setSystem("new");
    expect(ids(c)).toEqual(["s", "u", "a"]);
    expect(replaced?.content).toEqual(["new"]);
    expect(c.items[0]).toBe(replaced);
    // Modality variants of the old prompt must not outlive it (F24).
    const voiced = conv([{ ...mk.system("s", "old"), audioInstructions: "old, spoken" } as never]);
    expect(voiced.setSystem("new")).not.toHaveProperty("audioInstructions");
  });

  it("E2 setSystem prepends when there is no leading system message, never newer than the first item", () => {
    const c = conv([mk.user("u", "hi", 5), mk.system("late", "x", 6)]);
    const added = c.setSystem("rules") as MessageItem;
    expect(ids(c)).toEqual([added.id, "u", "late"]);
    expect(added.createdAt).toBe(at(5));
    const dev = conv([mk.developer("d")]);
    dev.setSystem("sys");
    expect(dev.items.map((i) => (i as MessageItem).role)).toEqual(["system", "developer"]);
  });

  it("E2 setSystem with an empty prompt removes the leading system message", () => {
    const c = conv([mk.system("s"), mk.user("u")]);
    expect(c.setSystem("")).toBeNull();
    expect(ids(c)).toEqual(["u"]);
  });

  it("E2 resetToSystem clears everything and starts with the new prompt", () => {
    const c = conv([mk.system("s"), mk.user("u"), mk.assistant("a")]);
    c.resetToSystem("fresh");
    expect(c.items).toHaveLength(1);
    expect(c.items[0]).toMatchObject({ role: "system", content: ["fresh"] });
    c.resetToSystem("");
    expect(c.length).toBe(0);
  });

  it("E3 toJSON/fromJSON persist the history; replace keeps identity", () => {
    const c = conv([mk.system("s"), mk.user("u"), mk.assistant("a")]);
    const restored = Conversation.fromJSON(JSON.parse(JSON.stringify(c)));
    expect(restored.items).toEqual(c.items);
    const target = conv([mk.user("x")]);
    const view = target.readonly();
    target.replace(c.toJSON());
    expect(ids(target)).toEqual(["s", "u", "a"]);
    expect(ids(view)).toEqual(["s", "u", "a"]); // same object: views see the new items
    target.replace([mk.user("y")]);
    expect(ids(target)).toEqual(["y"]);
  });

  it("E3 replace is atomic: bad input throws and leaves the history untouched", () => {
    const c = conv([mk.user("u")]);
    expect(() =>
      c.replace({ items: [mk.user("ok"), { type: "message", role: "bogus", content: "x" }] }),
    ).toThrow();
    expect(() => c.replace({ items: [mk.user("d"), mk.user("d")] })).toThrow(/duplicate/);
    expect(() => c.replace({} as never)).toThrow();
    expect(ids(c)).toEqual(["u"]);
  });

  it("F3 addMessage turns a string into [string] and keeps options", () => {
    const c = new Conversation();
    const m = c.addMessage("user", "hi", { id: "mine", createdAt: at(3), agentId: "a1" });
    expect(m).toMatchObject({ id: "mine", content: ["hi"], createdAt: at(3), agentId: "a1" });
    expect(c.addMessage("assistant", ["a", "b"]).content).toEqual(["a", "b"]);
    expect(() => c.addMessage("user", "again", { id: "mine" })).toThrow(/already used/);
    expect(() => c.addMessage("user", "bad", { createdAt: "noon" })).toThrow();
    expect(c.length).toBe(2);
  });

  it("F3 replace=true with system removes every system message (not developer) and appends", () => {
    const c = conv([mk.system("s1"), mk.developer("d"), mk.user("u"), mk.system("s2")]);
    const m = c.addMessage("system", "only rules", { replace: true });
    expect(ids(c)).toEqual(["d", "u", m.id]);
    const other = conv([mk.system("s1"), mk.user("u")]);
    other.addMessage("user", "x", { replace: true }); // replace only matters for system
    expect(other.length).toBe(3);
  });

  it("F5 insert goes before the first strictly later item; equal times go after", () => {
    const c = conv([
      mk.user("a", "", 1),
      mk.user("b", "", 2),
      mk.user("c", "", 2),
      mk.user("d", "", 3),
    ]);
    c.insert(mk.user("x", "", 2));
    expect(ids(c)).toEqual(["a", "b", "c", "x", "d"]);
    c.insert(mk.user("first", "", 0));
    c.insert(mk.user("last", "", 9));
    expect(ids(c)).toEqual(["first", "a", "b", "c", "x", "d", "last"]);
    expect(() => c.insert(mk.user("a", "", 5))).toThrow(/already used/);
  });

  it("F5 insertMany sorts by time first and matches inserting one by one", () => {
    const base = [
      mk.user("a", "", 1),
      mk.user("b", "", 5),
      mk.user("c", "", 3),
      mk.user("d", "", 7),
    ]; // not sorted
    const incoming = [
      mk.user("y", "", 6),
      mk.user("x", "", 2),
      mk.user("z", "", 5),
      mk.user("w", "", 2),
    ];
    const many = conv(base);
    many.insertMany(incoming);
    const oneByOne = conv(base);
    for (const item of [...incoming].sort(
      (p, q) => Date.parse(p.createdAt) - Date.parse(q.createdAt),
    )) {
      oneByOne.insert(item);
    }
    expect(ids(many)).toEqual(ids(oneByOne));
    expect(ids(many)).toEqual(["a", "x", "w", "b", "c", "z", "y", "d"]);
  });

  it("F6 messages() lists only chat messages; turnCount counts user messages", () => {
    const c = conv([
      mk.system("s"),
      mk.user("u1"),
      mk.call("c", "k"),
      mk.output("o", "k"),
      mk.assistant("a"),
      mk.handoff("h"),
      mk.user("u2"),
    ]);
    expect(c.messages().map((m) => m.id)).toEqual(["s", "u1", "a", "u2"]);
    expect(c.turnCount()).toBe(2);
    expect(new Conversation().turnCount()).toBe(0);
  });

  it("F6 getById finds an item or returns null, also right after changes", () => {
    const c = conv([mk.user("u"), mk.assistant("a")]);
    expect(c.getById("a")?.id).toBe("a");
    expect(c.getById("nope")).toBeNull();
    const added = c.addMessage("user", "more");
    expect(c.getById(added.id)).toBe(added);
    c.truncate({ maxItems: 1 });
    expect(c.getById("u")).toBeNull();
  });

  it("F7 estimatedTokens: 4 per item, floor(len/4) per text part, 300 per image, tools name/4 + 5 + payload/4", () => {
    const msg = ItemSchema.parse({
      type: "message",
      role: "user",
      content: ["abcdefg", "abcd", { type: "image", url: "u" }],
    });
    expect(estimateItemTokens(msg)).toBe(4 + 1 + 1 + 300);
    const call = ItemSchema.parse({
      type: "function_call",
      name: "search",
      arguments: '{"q":"abc"}',
      callId: "k",
    });
    expect(estimateItemTokens(call)).toBe(4 + 1 + 5 + 2);
    const out = ItemSchema.parse({
      type: "function_call_output",
      name: "ab",
      callId: "k",
      output: "x".repeat(40),
    });
    expect(estimateItemTokens(out)).toBe(4 + 0 + 5 + 10);
    expect(estimateItemTokens(mk.handoff("h"))).toBe(4);
    expect(estimateItemTokens(mk.config("k", { instructions: "long text here" }))).toBe(4);
    expect(conv([msg, call, out]).estimatedTokens()).toBe(306 + 12 + 19);
    expect(new Conversation().estimatedTokens()).toBe(0);
  });

  it("F19 activeConfigAt: last instruction text, overridden by config updates; tools only from updates", () => {
    const items: Item[] = [
      mk.system("s", "first"),
      mk.user("u1"),
      mk.config("k1", { instructions: "second", tools: ["a", "b"] }),
      mk.developer("d", "third"),
      mk.config("k2", { tools: ["c"] }),
      mk.user("u2"),
    ];
    const c = conv(items);
    expect(c.activeConfigAt()).toEqual({ instructions: "third", tools: ["c"] });
    expect(c.activeConfigAt(null)).toEqual({ instructions: "third", tools: ["c"] });
    expect(c.activeConfigAt(0)).toEqual({ instructions: "first", tools: null });
    expect(c.activeConfigAt(2)).toEqual({ instructions: "second", tools: ["a", "b"] });
    expect(c.activeConfigAt("d")).toEqual({ instructions: "third", tools: ["a", "b"] });
    expect(c.activeConfigAt("k1")).toEqual({ instructions: "second", tools: ["a", "b"] });
    expect(c.activeConfigAt("unknown")).toEqual({ instructions: "third", tools: ["c"] });
    expect(c.activeConfigAt(99)).toEqual({ instructions: "third", tools: ["c"] });
    expect(() => c.activeConfigAt(-1)).toThrow(RangeError);
    expect(new Conversation().activeConfigAt()).toEqual({ instructions: null, tools: null });
    const result = c.activeConfigAt();
    result.tools?.push("mutated");
    expect(c.activeConfigAt().tools).toEqual(["c"]);
  });

  it("F19 an empty-string instructions update still overrides", () => {
    const c = conv([mk.system("s", "rules"), mk.config("k", { instructions: "" })]);
    expect(c.activeConfigAt().instructions).toBe("");
  });

  it("F20 handoffs are recorded with from, to and reason", () => {
    const c = new Conversation();
    const h = c.addHandoff({ toAgent: "billing", fromAgent: "triage", reason: "refund" });
    expect(h).toMatchObject({
      type: "agent_handoff",
      toAgent: "billing",
      fromAgent: "triage",
      reason: "refund",
    });
    expect(() => c.addHandoff({ toAgent: "" })).toThrow();
  });

  it("items is live until the list is swapped; copies make snapshots", () => {
    const c = conv([mk.user("u")]);
    const snapshot = [...c.items];
    c.addMessage("assistant", "a");
    expect(snapshot).toHaveLength(1);
    expect(c.items).toHaveLength(2);
  });
});
