import { describe, expect, it } from "vitest";
import { FactRows, KEPT_FACTS } from "../../../src/memory/object/memory-fact-rows";
import type { MemoryOp } from "../../../src/protocol/memory";
import { inObjectCounting, storeMemory, type TestMemory } from "../../harness/memory/helpers";

const fact = (claim: string, entities?: string[]): MemoryOp => ({
  op: "add_fact",
  claim,
  ...(entities ? { entities } : {}),
});

const ids = (memory: TestMemory) =>
  inObjectCounting(memory, (sql) =>
    sql
      .exec<{ id: string }>("SELECT id FROM facts ORDER BY rid")
      .toArray()
      .map((r) => r.id),
  );

describe("facts kept between recalls", () => {
  it("K7 reads each fact in full once until it is forgotten, and only facts that exist", async () => {
    const memory = storeMemory();
    await memory.apply([fact("The user likes green tea"), fact("The user lives in Porto")]);
    const [tea, porto] = await ids(memory);
    if (!tea || !porto) throw new Error("the facts were not stored");
    await inObjectCounting(memory, (sql, statements) => {
      const rows = new FactRows(sql);
      const first = rows.byId([tea, "mf_missing"]);
      expect([...first.keys()]).toEqual([tea]);
      expect(first.get(tea)?.claim).toBe("The user likes green tea");
      expect(statements).toHaveLength(1);
      const second = rows.byId([porto, tea]);
      expect([...second.keys()].sort()).toEqual([porto, tea].sort());
      // Only Porto was read: the statement asked for it alone.
      expect(statements).toHaveLength(2);
      expect(rows.byId([tea, porto]).size).toBe(2);
      expect(statements).toHaveLength(2);
      rows.forget();
      rows.byId([tea]);
      expect(statements).toHaveLength(3);
    });
  });

  it("K7 keeps at most KEPT_FACTS", async () => {
    const memory = storeMemory();
    // At most 100 operations per call.
    for (let from = 0; from <= KEPT_FACTS; from += 100) {
      const to = Math.min(from + 100, KEPT_FACTS + 1);
      await memory.apply(Array.from({ length: to - from }, (_, i) => fact(`Fact ${from + i}`)));
    }
    const all = await ids(memory);
    await inObjectCounting(memory, (sql, statements) => {
      const rows = new FactRows(sql);
      expect(rows.byId(all).size).toBe(KEPT_FACTS + 1);
      expect(rows.size).toBe(KEPT_FACTS);
      // One was not kept: asking for all again reads (only) it, and still keeps KEPT_FACTS.
      expect(rows.byId(all).size).toBe(KEPT_FACTS + 1);
      expect(statements).toHaveLength(2);
      expect(rows.size).toBe(KEPT_FACTS);
    });
  });

  it("K7 a recall's access counts are counted on the kept facts as they are written", async () => {
    const memory = storeMemory();
    await memory.apply([fact("The user likes green tea")]);
    const recalled = async () => {
      const bundle = await memory.remember({ text: "green tea" });
      const [tea] = bundle.facts;
      if (!tea) throw new Error("the fact was not recalled");
      // `get` writes the counts waiting first, so each recall's count is written.
      const stored = await memory.get("fact", tea.id);
      return { recalled: tea, stored: stored as { accessCount: number; lastAccessedAt?: string } };
    };
    for (let n = 1; n <= 3; n++) {
      const { recalled: tea, stored } = await recalled();
      expect(tea.accessCount).toBe(n);
      expect(stored.accessCount).toBe(n);
      expect(tea.lastAccessedAt).toBe(stored.lastAccessedAt);
    }
  });

  it("K7 a write is seen by the next recall: a removed entity leaves the facts it named", async () => {
    const memory = storeMemory();
    await memory.apply([fact("The user lives in Porto", ["Porto"])]);
    // Recalled twice, its counts written after each (`get` writes them): the second read
    // is kept and counted in place from then on.
    let before = await memory.remember({ text: "Where does the user live? Porto" });
    for (let i = 0; i < 2; i++) {
      await memory.get("fact", before.facts[0]?.id ?? "");
      before = await memory.remember({ text: "Where does the user live? Porto" });
    }
    const [porto] = before.facts;
    expect(porto?.accessCount).toBe(3);
    expect(porto?.entityIds).toHaveLength(1);
    const entity = porto?.entityIds[0];
    if (!entity) throw new Error("the fact has no entity");
    expect(await memory.remove("entity", entity)).toBe(true);
    const after = await memory.remember({ text: "Where does the user live? Porto" });
    expect(after.facts.map((f) => [f.claim, f.entityIds])).toEqual([
      ["The user lives in Porto", []],
    ]);
  });
});
