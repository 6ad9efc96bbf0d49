import { describe, expect, it } from "vitest";
import { itemCounts, kindsHeld, statsOf } from "../../../src/memory/object/item-counts";
import { inObject, storeMemory } from "../../harness/memory/helpers";

describe("a memory's item counts", () => {
  it("K7 count each kind with its bytes; the kinds held are those with items", async () => {
    const memory = storeMemory();
    await memory.apply([
      { op: "add_fact", claim: "Prefers green tea", entities: ["Ana"] },
      { op: "add_fact", claim: "Lives in Porto" },
    ]);
    const counts = await inObject(memory, itemCounts);
    expect(counts.total).toBe(3);
    expect(counts.byKind.fact?.n).toBe(2);
    expect(counts.byKind.entity?.n).toBe(1);
    expect([...kindsHeld(counts)].sort()).toEqual(["entity", "fact"]);
    const stats = statsOf(counts);
    expect(stats).toMatchObject({ facts: 2, entities: 1, goals: 0, strategies: 0, turns: 0 });
    expect(stats.bytes).toBe((counts.byKind.fact?.bytes ?? 0) + (counts.byKind.entity?.bytes ?? 0));
    expect(stats.bytes).toBeGreaterThan(0);
  });

  it("K7 a kind whose items were all removed is not held", () => {
    const counts = { total: 1, byKind: { fact: { n: 0, bytes: 0 }, goal: { n: 1, bytes: 9 } } };
    expect([...kindsHeld(counts)]).toEqual(["goal"]);
    expect(statsOf({ total: 0, byKind: {} })).toEqual({
      facts: 0,
      entities: 0,
      goals: 0,
      strategies: 0,
      turns: 0,
      bytes: 0,
    });
  });
});
