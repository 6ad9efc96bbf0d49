import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { FactRows, KEPT_FACTS } from "../../../../src/memory/object/rows/memory-fact-rows";
import type { MemoryOp } from "../../../../src/protocol/memory";
import { inObjectCounting, storeMemory, type TestMemory } from "../../../harness/memory/helpers";

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

  it("K7 recording past turns keeps the facts read; a write that touches facts forgets them", async () => {
    const turn = (content: string): MemoryOp => ({ op: "add_turn", role: "user", content });
    // The object's own reader, as a recall left it (how many facts it keeps).
    const kept = (memory: TestMemory) =>
      runInDurableObject(
        memory.stub,
        (instance) => (instance as unknown as { reader: { facts: FactRows } }).reader.facts.size,
      );
    const memory = storeMemory();
    await memory.apply([fact("The user likes green tea"), fact("The user lives in Porto")]);
    const query = { text: "green tea in Porto" };
    // Recalled, its counts written (`get` writes them), recalled again: a
    // fact's first count drops it, to be read again with its new field.
    await memory.recall(query);
    await memory.get("fact", "mf_none");
    const before = await memory.recall(query);
    expect(await kept(memory)).toBe(2);
    await memory.apply([turn("Which tea do I like?"), turn("Green tea, as ever.")]);
    expect(await kept(memory)).toBe(2);
    // The same facts, and the turns just written (their kind and terms were forgotten).
    const after = (await memory.recall(query)).section;
    expect(after.startsWith(`${before.section}\n\nFrom past conversations`)).toBe(true);
    expect(after).toContain("Green tea, as ever.");
    await memory.apply([fact("The user likes oolong tea")]);
    expect(await kept(memory)).toBe(0);
    expect((await memory.recall(query)).section).toContain("oolong");

    // A batch of turns that makes room by evicting a fact forgets too.
    const full = storeMemory({ limits: { maxItems: 2, whenFull: "evict" } });
    await full.apply([fact("The user likes green tea"), fact("The user lives in Porto")]);
    await full.recall(query);
    await full.get("fact", "mf_none");
    await full.recall(query);
    expect(await kept(full)).toBe(2);
    await full.apply([turn("Which tea do I like?")]);
    expect(await kept(full)).toBe(0);
    // The oldest of the least confident went (the green tea): recall no longer has it.
    const left = (await full.recall(query)).section;
    expect(left).not.toContain("likes green tea");
    expect(left).toContain("lives in Porto");
  });

  it("K7 a recall answered as a section counts its facts without changing the kept ones", async () => {
    const memory = storeMemory();
    await memory.apply([fact("The user likes green tea")]);
    const [tea] = await ids(memory);
    if (!tea) throw new Error("the fact was not stored");
    for (let i = 0; i < 3; i++) {
      expect((await memory.recall({ text: "green tea" })).section).toContain("green tea");
      // `get` writes the counts waiting.
      await memory.get("fact", "mf_none");
    }
    const [kept, stored] = await runInDurableObject(memory.stub, (instance, state) => [
      (instance as unknown as { reader: { facts: FactRows } }).reader.facts.byId([tea]).get(tea)
        ?.accessCount,
      state.storage.sql
        .exec<{ n: number }>("SELECT access_count AS n FROM facts WHERE id = ?", tea)
        .one().n,
    ]);
    expect(stored).toBe(3);
    expect(kept).toBe(3);
    const bundle = await memory.remember({ text: "green tea" });
    expect(bundle.facts[0]?.accessCount).toBe(4);
  });
});
