import { describe, expect, it } from "vitest";
import { FactRanker } from "../../../../src/memory/object/recall/fact-ranker";
import { FactRows } from "../../../../src/memory/object/rows/memory-fact-rows";
import { IndexedTerms } from "../../../../src/memory/object/rows/memory-terms";
import { channelsOf } from "../../../../src/memory/object/rows/recall-bounds";
import { inObject, storeMemory, type TestMemory } from "../../../harness/memory/helpers";

/** The claims ranked for `text`, best first, read inside the memory's object. */
function ranked(memory: TestMemory, text: string, channel?: string, withRecent = true) {
  return inObject(memory, (sql) =>
    new FactRanker(sql, new IndexedTerms(sql), new FactRows(sql))
      .rank(text, channelsOf(channel), new Map(), Date.now(), withRecent)
      .map(({ fact, score }) => ({ claim: fact.claim, score })),
  );
}

describe("live facts ranked for a query", () => {
  it("K7 a text match comes before the newest facts, which come without one", async () => {
    const memory = storeMemory();
    await memory.apply([{ op: "add_fact", claim: "Prefers window seats on flights" }]);
    await memory.apply([{ op: "add_fact", claim: "Lives in Porto" }]);
    const both = await ranked(memory, "a window seat please");
    expect(both.map((r) => r.claim)).toEqual(["Prefers window seats on flights", "Lives in Porto"]);
    expect(both[0]?.score).toBeGreaterThan(both[1]?.score ?? 1);
    // Neighbours of a claim are its matches alone.
    const matched = await ranked(memory, "a window seat please", undefined, false);
    expect(matched.map((r) => r.claim)).toEqual(["Prefers window seats on flights"]);
  });

  it("K8 a fact of another channel is not ranked; the global ones are", async () => {
    const memory = storeMemory();
    await memory.apply([
      { op: "add_fact", claim: "Works on the billing team", channel: "work" },
      { op: "add_fact", claim: "Has a sister called Ana" },
    ]);
    expect((await ranked(memory, "team", "home")).map((r) => r.claim)).toEqual([
      "Has a sister called Ana",
    ]);
    expect((await ranked(memory, "team", "work")).map((r) => r.claim)).toEqual([
      "Works on the billing team",
      "Has a sister called Ana",
    ]);
  });

  it("K7 a superseded fact is never ranked", async () => {
    const memory = storeMemory();
    const [old] = (await memory.apply([{ op: "add_fact", claim: "Lives in Paris" }])).results;
    await memory.apply([{ op: "supersede_fact", id: old?.id ?? "", claim: "Lives in Lyon" }]);
    expect((await ranked(memory, "lives")).map((r) => r.claim)).toEqual(["Lives in Lyon"]);
  });
});
