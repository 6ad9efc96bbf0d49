import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { factLine, renderMemoryBundle } from "../../../../src/memory/base/render";
import { MemoryReader } from "../../../../src/memory/object/recall/memory-reader";
import type { MemoryBundle, MemoryKind, MemoryOp } from "../../../../src/protocol/memory";
import { storeMemory, type TestMemory } from "../../../harness/memory/helpers";
import { countingSql } from "../../../support/counting-sql";

const say = (content: string): MemoryOp => ({ op: "add_turn", role: "user", content });
const HELD = new Set<MemoryKind>(["fact", "turn"]);

/**
 * The reader's bundle for `text` within `budget` tokens, read inside the memory's object,
 * and every SQL statement it ran.
 */
async function bundleOf(
  memory: TestMemory,
  text: string,
  budget: number,
  held: ReadonlySet<MemoryKind> = HELD,
): Promise<{ bundle: MemoryBundle; section: string; statements: string[] }> {
  return runInDurableObject(memory.stub, (_instance, state) => {
    const { sql: counting, statements } = countingSql(state.storage.sql);
    const reader = new MemoryReader(counting);
    const { bundle, fitted } = reader.bundle(
      { text, contextId: "asking" },
      budget,
      new Map(),
      Date.now(),
      held,
    );
    return { bundle, section: fitted.text(), statements };
  });
}

const readsTurns = (statements: string[]) => statements.some((q) => q.includes("turns_fts"));
const ranksTurns = (statements: string[]) => statements.some((q) => q.includes("bm25(turns_fts)"));

describe("recall's reads", () => {
  it("K7 a section the facts already overflowed reads no past turns, and answers the same", async () => {
    const memory = storeMemory();
    await memory.apply(
      Array.from({ length: 30 }, (_, i) => ({
        op: "add_fact" as const,
        claim: `The user likes window seats on flight ${i}`,
      })),
    );
    await memory.apply(
      Array.from({ length: 40 }, (_, i) => say(`Book a window seat on flight ${i}`)),
      { contextId: "earlier" },
    );
    const small = await bundleOf(memory, "a window seat please", 100);
    expect(small.bundle.truncated).toBe(true);
    expect(small.bundle.facts.length).toBeGreaterThan(0);
    expect(small.bundle.turns).toEqual([]);
    expect(small.section).toBe(renderMemoryBundle(small.bundle));
    expect(readsTurns(small.statements)).toBe(false);
    // With room left, the same memory's turns are read and quoted.
    const large = await bundleOf(memory, "a window seat please", 32_000);
    expect(readsTurns(large.statements)).toBe(true);
    expect(large.bundle.turns.length).toBeGreaterThan(0);
  });

  it("K7 facts that fit exactly with no room for a turn rank no turns, yet the bundle says one was left out", async () => {
    const memory = storeMemory();
    await memory.apply([{ op: "add_fact", claim: "The user likes window seats" }]);
    await memory.apply([say("Book a window seat, as usual")], { contextId: "earlier" });
    const one = await bundleOf(memory, "window seat", 32_000);
    expect(one.bundle.turns).toHaveLength(1);
    expect(ranksTurns(one.statements)).toBe(true);
    // The heading, the facts' title and the one fact's line, and less than a token more.
    const fact = one.bundle.facts[0];
    if (!fact) throw new Error("the fact was not recalled");
    const chars = "## What you remember about this user".length + 2 + "Facts:".length + 1;
    const budget = Math.ceil((chars + factLine(fact).length) / 4);
    const tight = await bundleOf(memory, "window seat", budget);
    expect(tight.bundle.facts).toHaveLength(1);
    expect(tight.bundle.turns).toEqual([]);
    expect(tight.bundle.truncated).toBe(true);
    expect(readsTurns(tight.statements)).toBe(true);
    expect(ranksTurns(tight.statements)).toBe(false);
    expect(tight.section).toBe(renderMemoryBundle(tight.bundle));
  });

  it("K7 with no room for a turn, only a turn recall could quote counts as left out", async () => {
    const memory = storeMemory();
    await memory.apply([{ op: "add_fact", claim: "The user likes window seats" }]);
    // The asking conversation's own turn, and a corrected one: neither is recalled.
    await memory.apply([say("Book a window seat, as usual")], { contextId: "asking" });
    await memory.apply([say("A window seat, always")], { contextId: "earlier" });
    await runInDurableObject(memory.stub, (_instance, state) => {
      state.storage.sql.exec("UPDATE turns SET corrected_at = ? WHERE context_id = 'earlier'", "x");
    });
    const one = await bundleOf(memory, "window seat", 32_000);
    expect(one.bundle.turns).toEqual([]);
    const fact = one.bundle.facts[0];
    if (!fact) throw new Error("the fact was not recalled");
    const chars = "## What you remember about this user".length + 2 + "Facts:".length + 1;
    const tight = await bundleOf(
      memory,
      "window seat",
      Math.ceil((chars + factLine(fact).length) / 4),
    );
    expect(tight.bundle.facts).toHaveLength(1);
    expect(tight.bundle.truncated).toBe(false);
    expect(readsTurns(tight.statements)).toBe(true);
  });

  it("K7 at every budget, the bundle says something was left out exactly when the unbounded one holds more", async () => {
    const memory = storeMemory();
    await memory.apply(
      Array.from({ length: 4 }, (_, i) => ({
        op: "add_fact" as const,
        claim: `The user likes window seats${" on long flights".repeat(i)}`,
      })),
    );
    await memory.apply(
      Array.from({ length: 3 }, (_, i) => say(`A window seat, row ${i}`)),
      { contextId: "earlier" },
    );
    const all = await bundleOf(memory, "window seat", 32_000);
    expect(all.bundle.truncated).toBe(false);
    const count = (b: MemoryBundle) => b.facts.length + b.turns.length;
    expect(count(all.bundle)).toBe(7);
    let skipped = 0;
    for (let budget = 10; budget <= 120; budget++) {
      const { bundle, section, statements } = await bundleOf(memory, "window seat", budget);
      expect(section).toBe(renderMemoryBundle(bundle));
      expect(bundle.tokens).toBeLessThanOrEqual(budget);
      expect(bundle.truncated, `budget ${budget}`).toBe(count(bundle) < count(all.bundle));
      if (!ranksTurns(statements)) skipped++;
    }
    // Most of these budgets leave no room for a turn: those ranked none.
    expect(skipped).toBeGreaterThan(0);
  });
});

describe("recall's order", () => {
  it("K7 two memories of the same content list the people and things of equal salience in the same order", async () => {
    // Ids are random: an order that falls back on them differs from one memory to the next.
    const names = ["Zoe", "Mia", "Ana", "Kai", "Bea", "Tom", "Lea", "Ida"];
    const held = new Set<MemoryKind>(["fact", "entity"]);
    const orders: string[][] = [];
    for (let i = 0; i < 2; i++) {
      const memory = storeMemory();
      await memory.apply([
        { op: "add_fact", claim: "The team runs the Paris office", entities: names },
      ]);
      const { bundle } = await bundleOf(memory, "Paris office", 32_000, held);
      orders.push(bundle.entities.map((e) => e.name));
      // Named by the query rather than linked to a recalled fact: the same order.
      const named = await bundleOf(memory, names.join(" "), 32_000, held);
      orders.push(named.bundle.entities.map((e) => e.name));
    }
    // Recorded together: by name.
    expect(orders[0]).toEqual([...names].sort());
    for (const order of orders) expect(order).toEqual(orders[0]);
  });

  it("K7 of people and things of equal salience, the one recorded first is listed first", async () => {
    const memory = storeMemory();
    await memory.apply([{ op: "upsert_entity", name: "Zoe" }]);
    // A later write has a later time, even within the same millisecond's clock reading.
    await new Promise((resolve) => setTimeout(resolve, 5));
    await memory.apply([
      { op: "add_fact", claim: "Zoe and Ana run the Paris office", entities: ["Zoe", "Ana"] },
    ]);
    const { bundle } = await bundleOf(
      memory,
      "Paris office",
      32_000,
      new Set<MemoryKind>(["fact", "entity"]),
    );
    expect(bundle.entities.map((e) => e.name)).toEqual(["Zoe", "Ana"]);
  });
});
