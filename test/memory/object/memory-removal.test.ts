import { describe, expect, it } from "vitest";
import { embeddedIds, removeItem } from "../../../src/memory/object/memory-removal";
import { inObject, storeMemory } from "../../harness/memory/helpers";

const idOf = (result: { results: Array<{ id?: string }> }, i = 0) => result.results[i]?.id ?? "";

describe("removing one item", () => {
  it("K3 a fact goes with its entity links; an unknown id removes nothing", async () => {
    const memory = storeMemory();
    const fact = idOf(
      await memory.apply([{ op: "add_fact", claim: "Ana lives in Porto", entities: ["Ana"] }]),
    );
    const [gone, again, links] = await inObject(memory, (sql) => [
      removeItem(sql, "fact", fact, new Date().toISOString()),
      removeItem(sql, "fact", fact, new Date().toISOString()),
      sql.exec("SELECT count(*) AS n FROM fact_entities").one().n,
    ]);
    expect([gone, again, links]).toEqual([true, false, 0]);
  });

  it("K5 a goal's subgoals move up to its parent", async () => {
    const memory = storeMemory();
    const top = idOf(await memory.apply([{ op: "set_goal", title: "Move to Lyon" }]));
    const middle = idOf(
      await memory.apply([{ op: "set_goal", title: "Find a flat", parentId: top }]),
    );
    const leaf = idOf(
      await memory.apply([{ op: "set_goal", title: "Visit three flats", parentId: middle }]),
    );
    const parent = await inObject(memory, (sql) => {
      removeItem(sql, "goal", middle, new Date().toISOString());
      return sql.exec("SELECT parent_id FROM goals WHERE id = ?", leaf).one().parent_id;
    });
    expect(parent).toBe(top);
  });

  it("K3 an erase's vector ids are every fact's and turn's with a vector, and no other", async () => {
    const memory = storeMemory();
    await memory.apply([{ op: "add_fact", claim: "No vector here" }]);
    const ids = await inObject(memory, (sql) => {
      sql.exec("UPDATE facts SET embedding = ?", new Float32Array([1, 0]).buffer);
      return embeddedIds(sql);
    });
    expect(ids).toHaveLength(1);
    expect(ids[0]).toMatch(/^mf_/);
  });
});
