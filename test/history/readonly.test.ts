import { describe, expect, it } from "vitest";
import { Conversation } from "../../src/history/conversation";
import { MUTATORS, ReadonlyConversationError } from "../../src/history/readonly";
import { chat, conv, ids, mk, scripted } from "./helpers";

/** Every method that only reads; with MUTATORS it must cover the whole class. */
const READERS = [
  "constructor",
  "messages",
  "turnCount",
  "getById",
  "estimatedTokens",
  "activeConfigAt",
  "providerItems",
  "toJSON",
  "toLlmMessages",
  "copy",
  "fork",
  "forkFiltered",
  "forkBrief",
  "readonly",
  "items",
  "length",
  "isReadonly",
  "itemIndex",
];

/** A call of each mutator with valid arguments, so only read-only-ness can make it fail. */
const calls: Record<(typeof MUTATORS)[number], (c: Conversation) => unknown> = {
  addMessage: (c) => c.addMessage("user", "x"),
  addSystem: (c) => c.addSystem("x"),
  setSystem: (c) => c.setSystem("x"),
  resetToSystem: (c) => c.resetToSystem("x"),
  addFunctionCall: (c) => c.addFunctionCall({ name: "f" }),
  addFunctionOutput: (c) => c.addFunctionOutput({ name: "f", callId: "k", output: "o" }),
  addHandoff: (c) => c.addHandoff({ toAgent: "b" }),
  addConfigUpdate: (c) => c.addConfigUpdate({ tools: [] }),
  insert: (c) => c.insert(mk.user("new")),
  insertMany: (c) => c.insertMany([mk.user("new")]),
  replace: (c) => c.replace([]),
  clear: (c) => c.clear(),
  truncate: (c) => c.truncate({ maxItems: 1 }),
  keepRecent: (c) => c.keepRecent(2),
  summarize: (c) => c.summarize(scripted("s"), { keepRecentTurns: 1 }),
  compact: (c) => c.compact({ maxMessages: 2 }),
  merge: (c) => c.merge(conv([mk.user("other")])),
  mergeResult: (c) => c.mergeResult(conv([mk.assistant("other")])),
  mergeWithSummary: (c) =>
    c.mergeWithSummary(conv([mk.assistant("other")]), { summarizer: scripted("s") }),
  fitContextWindow: (c) => c.fitContextWindow({ maxTokens: 1 }),
};

describe("read-only view (F22)", () => {
  it("F22 every method is classified as a mutator or a reader", () => {
    // Along the whole chain: the reader base class's methods are the conversation's too.
    const names: string[] = [];
    for (let p = Conversation.prototype; p !== Object.prototype; p = Object.getPrototypeOf(p)) {
      names.push(...Object.getOwnPropertyNames(p));
    }
    for (const name of names) expect([...MUTATORS, ...READERS]).toContain(name);
    for (const name of MUTATORS) expect(names).toContain(name);
  });

  it("F22 every mutator throws a clear error on the view (async ones reject) and changes nothing", async () => {
    for (const name of MUTATORS) {
      const source = conv(chat(3));
      const view = source.readonly() as unknown as Conversation;
      const before = JSON.stringify(source);
      let error: unknown;
      try {
        await calls[name](view);
      } catch (caught) {
        error = caught;
      }
      expect(error, name).toBeInstanceOf(ReadonlyConversationError);
      expect((error as Error).message).toContain(`${name}()`);
      expect((error as Error).message).toMatch(/read-only/);
      expect(JSON.stringify(source), name).toBe(before);
      // The same call works on the editable conversation.
      await calls[name](source);
    }
  });

  it("F22 async mutators reject rather than throw synchronously", () => {
    const view = conv(chat(2)).readonly() as unknown as Conversation;
    const pending = view.compact();
    expect(pending).toBeInstanceOf(Promise);
    return expect(pending).rejects.toBeInstanceOf(ReadonlyConversationError);
  });

  it("F22 the view is live: it sees every later change, including swapped lists", () => {
    const source = conv([mk.user("u1")]);
    const view = source.readonly();
    source.addMessage("assistant", "a", { id: "a" });
    expect(ids(view)).toEqual(["u1", "a"]);
    expect(view.getById("a")).not.toBeNull();
    source.truncate({ maxItems: 1 });
    expect(ids(view)).toEqual(["u1"]);
    expect(view.isReadonly).toBe(true);
    expect(source.isReadonly).toBe(false);
    expect(view.readonly().isReadonly).toBe(true);
  });

  it("F22 reads work and copy/fork return editable conversations", () => {
    const source = conv(chat(3));
    const view = source.readonly();
    expect(view.turnCount()).toBe(3);
    expect(view.estimatedTokens()).toBe(source.estimatedTokens());
    expect(view.toJSON()).toEqual(source.toJSON());
    for (const editable of [
      view.fork(),
      view.copy(),
      view.forkFiltered({ recentTurns: 1 }),
      view.forkBrief({ instructions: "x" }),
    ]) {
      expect(editable.isReadonly).toBe(false);
      editable.addMessage("user", "mine");
    }
    expect(source.length).toBe(13);
  });
});
