import { describe, expect, it } from "vitest";
import { ftsQuery } from "../../../../src/memory/base/rank";
import { IndexedTerms, KNOWN_TERMS } from "../../../../src/memory/object/rows/memory-terms";
import type { MemoryOp } from "../../../../src/protocol/memory";
import { inObjectCounting, storeMemory } from "../../../harness/memory/helpers";

const fact = (claim: string): MemoryOp => ({ op: "add_fact", claim });

describe("the terms an index holds", () => {
  it("K7 answers the terms some row holds, in the query's order, and looks each up once", async () => {
    const memory = storeMemory();
    await memory.apply([fact("The user likes green tea"), fact("Café near the station")]);
    await inObjectCounting(memory, (sql, statements) => {
      const terms = new IndexedTerms(sql);
      // "cafe" finds "Café" as the recall query does (diacritics removed).
      expect(terms.present("facts_fts", ["book", "tea", "seat", "cafe", "green"])).toEqual([
        "tea",
        "cafe",
        "green",
      ]);
      expect(statements).toHaveLength(1);
      expect(terms.present("facts_fts", ["green", "book", "tea"])).toEqual(["green", "tea"]);
      expect(statements).toHaveLength(1);
      // Another index is asked on its own.
      expect(terms.present("turns_fts", ["tea"])).toEqual([]);
      expect(statements).toHaveLength(2);
      expect(terms.present("facts_fts", [])).toEqual([]);
      expect(statements).toHaveLength(2);
    });
  });

  it("K7 past its limit it starts over and still answers every term right", async () => {
    const memory = storeMemory();
    await memory.apply([fact("The user likes green tea")]);
    await inObjectCounting(memory, (sql) => {
      const terms = new IndexedTerms(sql);
      expect(terms.present("facts_fts", ["tea", "coffee"])).toEqual(["tea"]);
      // Full to the limit, then one term more: it starts over with a known term asked too.
      const filler = Array.from({ length: KNOWN_TERMS - 2 }, (_, i) => `w${i}`);
      expect(terms.present("facts_fts", filler)).toEqual([]);
      expect(terms.present("facts_fts", ["tea", "espresso"])).toEqual(["tea"]);
      expect(terms.present("facts_fts", ["coffee", "green", "tea"])).toEqual(["green", "tea"]);
    });
  });

  it("K7 a word written after a recall is found by the next recall, and not after its removal", async () => {
    const memory = storeMemory();
    await memory.apply([fact("The user likes green tea")]);
    // Recall learns that no fact and no turn holds "espresso" (neighbours rank text
    // matches alone; recall quotes a past turn only when it matches).
    expect(await memory.neighbours(["espresso"], 5)).toEqual([[]]);
    expect((await memory.remember({ text: "espresso" })).turns).toEqual([]);
    await memory.apply([fact("The user drinks espresso after lunch")]);
    await memory.apply([{ op: "add_turn", role: "user", content: "An espresso, please" }], {
      contextId: "earlier",
    });
    const [found] = await memory.neighbours(["espresso"], 5);
    expect(found?.map((f) => f.claim)).toEqual(["The user drinks espresso after lunch"]);
    const after = await memory.remember({ text: "espresso" });
    expect(after.turns.map((t) => t.content)).toEqual(["An espresso, please"]);
    const espresso = found?.[0];
    if (!espresso) throw new Error("the new fact was not found");
    await memory.remove("fact", espresso.id);
    expect(await memory.neighbours(["espresso"], 5)).toEqual([[]]);
  });

  it("K7 leaving out the terms no row holds ranks the same rows with the same bm25", async () => {
    const memory = storeMemory();
    await memory.apply(
      Array.from({ length: 30 }, (_, i) =>
        fact(
          `The user likes window seats on flight ${i} to city ${i % 7}${" again".repeat(i % 3)}`,
        ),
      ),
    );
    const ranked = await inObjectCounting(memory, (sql) => {
      const query = ["book", "window", "seat", "city", "usual", "again"];
      const held = new IndexedTerms(sql).present("facts_fts", query);
      expect(held).toEqual(["window", "city", "again"]);
      const rank = (terms: string[]) =>
        sql
          .exec<{ rowid: number; bm: number }>(
            "SELECT rowid, bm25(facts_fts) AS bm FROM facts_fts WHERE facts_fts MATCH ? ORDER BY rowid DESC",
            ftsQuery(terms),
          )
          .toArray();
      return { all: rank(query), held: rank(held) };
    });
    expect(ranked.all).toHaveLength(30);
    expect(ranked.held).toEqual(ranked.all);
  });
});
