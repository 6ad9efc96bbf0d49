import { describe, expect, it } from "vitest";
import { claimHash } from "../../../src/memory/base/claim-hash";
import { renderMemoryBundle } from "../../../src/memory/base/render";
import type { MemoryFact } from "../../../src/protocol/memory";
import { inObject, storeMemory } from "../../harness/memory/helpers";

describe("the memory object's SQLite", () => {
  it("K3 has FTS5 in workerd: a full-text index answers MATCH with bm25", async () => {
    const memory = storeMemory();
    await memory.apply([{ op: "add_fact", claim: "Prefers green tea" }]);
    const rows = await inObject(memory, (sql) =>
      sql
        .exec<{ claim: string; bm: number }>(
          "SELECT f.claim, bm25(facts_fts) AS bm FROM facts_fts JOIN facts f ON f.rid = facts_fts.rowid WHERE facts_fts MATCH 'tea'",
        )
        .toArray(),
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]?.claim).toBe("Prefers green tea");
    expect(rows[0]?.bm).toBeLessThan(0);
  });

  it("K8 a read of a memory never written creates nothing and answers empty", async () => {
    const memory = storeMemory();
    const bundle = await memory.remember({ text: "anything" });
    expect(bundle).toMatchObject({ facts: [], entities: [], goals: [], strategies: [], tokens: 0 });
    expect(await memory.list({ kind: "fact" })).toEqual({ items: [], nextPageToken: "" });
    expect(await memory.get("fact", "mf_x")).toBeNull();
    expect(await memory.stats()).toEqual({
      facts: 0,
      entities: 0,
      goals: 0,
      strategies: 0,
      turns: 0,
      bytes: 0,
    });
    expect(await memory.apply([{ op: "delete_fact", id: "mf_x" }])).toEqual({
      results: [{ op: "delete_fact", status: "refused", id: "mf_x", reason: "no such item mf_x" }],
    });
    const tables = await inObject(memory, (sql) =>
      sql.exec("SELECT name FROM sqlite_master").toArray(),
    );
    expect(tables).toEqual([]);
  });
});

describe("facts", () => {
  it("K3 a claim is hashed lower-cased, whitespace collapsed and trimmed (hex SHA-256)", async () => {
    const expected = [
      ...new Uint8Array(
        await crypto.subtle.digest("SHA-256", new TextEncoder().encode("likes green tea")),
      ),
    ]
      .map((b) => b.toString(16).padStart(2, "0"))
      .join("");
    expect(await claimHash("  Likes \n GREEN\ttea ")).toBe(expected);
  });

  it("K3 a duplicate by claim hash is never stored twice", async () => {
    const memory = storeMemory();
    const first = await memory.apply([
      { op: "add_fact", claim: "Lives in Lyon", source: "user_stated" },
    ]);
    const again = await memory.apply([
      { op: "add_fact", claim: "  lives   IN lyon " },
      { op: "add_fact", claim: "LIVES IN LYON" },
    ]);
    const id = first.results[0]?.id;
    expect(first.results[0]).toMatchObject({ status: "added" });
    expect(again.results).toEqual([
      { op: "add_fact", status: "duplicate", id },
      { op: "add_fact", status: "duplicate", id },
    ]);
    expect((await memory.stats()).facts).toBe(1);
    const fact = (await memory.get("fact", id as string)) as MemoryFact & { kind: "fact" };
    expect(fact).toMatchObject({
      kind: "fact",
      claim: "Lives in Lyon",
      claimHash: await claimHash("lives in lyon"),
      confidence: 0.8,
      source: "user_stated",
      channel: "_global",
      accessCount: 0,
    });
  });

  it("K4 a correction supersedes the old fact: both linked with the time, the old one never recalled", async () => {
    const memory = storeMemory();
    const [old] = (await memory.apply([{ op: "add_fact", claim: "Prefers green tea" }])).results;
    const [next] = (
      await memory.apply([
        { op: "supersede_fact", id: old?.id as string, claim: "Prefers black coffee" },
      ])
    ).results;
    expect(next).toMatchObject({ op: "supersede_fact", status: "updated" });
    const before = (await memory.get("fact", old?.id as string)) as MemoryFact;
    const after = (await memory.get("fact", next?.id as string)) as MemoryFact;
    expect(before.supersededBy).toBe(after.id);
    expect(after.supersedes).toBe(before.id);
    expect(Date.parse(before.supersededAt as string)).not.toBeNaN();
    expect(after.supersededAt).toBeUndefined();

    const bundle = await memory.remember({ text: "green tea coffee" });
    expect(bundle.facts.map((f) => f.claim)).toEqual(["Prefers black coffee"]);
    expect(renderMemoryBundle(bundle)).not.toContain("tea");
    // Listing hides it too, unless asked for the record.
    expect((await memory.list({ kind: "fact" })).items.map((i) => i.id)).toEqual([after.id]);
    expect((await memory.list({ kind: "fact", includeSuperseded: true })).items).toHaveLength(2);
    expect((await memory.neighbours(["green tea"], 5))[0]?.map((f) => f.id)).not.toContain(
      before.id,
    );
    // A superseded fact cannot be superseded again, and restating the old claim is a new live fact.
    const [twice] = (await memory.apply([{ op: "supersede_fact", id: before.id, claim: "x" }]))
      .results;
    expect(twice).toMatchObject({ status: "refused" });
    const [restated] = (await memory.apply([{ op: "add_fact", claim: "Prefers green tea" }]))
      .results;
    expect(restated).toMatchObject({ status: "added" });
    expect(restated?.id).not.toBe(before.id);
  });

  it("K4 superseded facts are kept for the configured retention, then deleted", async () => {
    const memory = storeMemory({ limits: { supersededRetentionDays: 2 } });
    const [old] = (await memory.apply([{ op: "add_fact", claim: "Works at Acme" }])).results;
    await memory.apply([{ op: "supersede_fact", id: old?.id as string, claim: "Works at Globex" }]);
    await memory.apply([{ op: "add_turn", role: "user", content: "hello" }]);
    expect(await memory.get("fact", old?.id as string)).not.toBeNull();
    // Three days pass for the superseded fact.
    await inObject(memory, (sql) =>
      sql.exec(
        "UPDATE facts SET superseded_at = ? WHERE id = ?",
        new Date(Date.now() - 3 * 86_400_000).toISOString(),
        old?.id as string,
      ),
    );
    await memory.apply([{ op: "add_turn", role: "user", content: "hello again" }]);
    expect(await memory.get("fact", old?.id as string)).toBeNull();
    expect((await memory.stats()).facts).toBe(1);
  });

  it("K3 temporal context: validFrom and validTo are kept, and a fact no longer valid ranks below a current one", async () => {
    const memory = storeMemory();
    const past = new Date(Date.now() - 86_400_000 * 400).toISOString();
    const ended = new Date(Date.now() - 86_400_000 * 30).toISOString();
    await memory.apply([
      { op: "add_fact", claim: "Lives in Paris", validFrom: past, validTo: ended },
      { op: "add_fact", claim: "Lives in Berlin", validFrom: ended },
    ]);
    const bundle = await memory.remember({ text: "Where does the user live?" });
    expect(bundle.facts.map((f) => f.claim)).toEqual(["Lives in Berlin", "Lives in Paris"]);
    expect(bundle.facts[1]).toMatchObject({ validFrom: past, validTo: ended });
    expect(renderMemoryBundle(bundle)).toContain(
      `Lives in Paris (noted from a conversation, from ${past.slice(0, 10)}, until ${ended.slice(0, 10)})`,
    );
  });
});

describe("entities", () => {
  it("K2 aliases merge case-insensitively: one entity per name or alias", async () => {
    const memory = storeMemory();
    const [a] = (
      await memory.apply([{ op: "upsert_entity", name: "Robert Smith", type: "Person" }])
    ).results;
    const [b] = (await memory.apply([{ op: "upsert_entity", name: "bob", aliases: ["Bobby"] }]))
      .results;
    expect(a?.id).not.toBe(b?.id);
    // Naming both entities at once makes them one: the oldest keeps its id and name.
    const [merged] = (
      await memory.apply([
        { op: "upsert_entity", name: "ROBERT SMITH", aliases: ["BOBBY"], salience: 0.9 },
      ])
    ).results;
    expect(merged).toMatchObject({ status: "updated", id: a?.id });
    expect(await memory.get("entity", b?.id as string)).toBeNull();
    expect(await memory.get("entity", a?.id as string)).toMatchObject({
      name: "Robert Smith",
      type: "Person",
      aliases: ["bob", "Bobby"],
      salience: 0.9,
    });
    expect((await memory.stats()).entities).toBe(1);
    const [same] = (await memory.apply([{ op: "upsert_entity", name: "BoB" }])).results;
    expect(same).toMatchObject({ status: "unchanged", id: a?.id });
  });

  it("K2 facts link to their entities, merged ones included; recall counts the access", async () => {
    const memory = storeMemory();
    await memory.apply([
      { op: "add_fact", claim: "Bob is the user's brother", entities: ["Bob"] },
      { op: "add_fact", claim: "Robert plays chess", entities: ["Robert"] },
      { op: "upsert_entity", name: "Robert", aliases: ["Bob"], salience: 0.8 },
    ]);
    const list = await memory.list({ kind: "entity" });
    expect(list.items).toHaveLength(1);
    const entity = list.items[0] as { id: string };
    const facts = (await memory.list({ kind: "fact" })).items as MemoryFact[];
    expect(facts.map((f) => f.entityIds)).toEqual([[entity.id], [entity.id]]);
    const bundle = await memory.remember({ text: "Does Bob play chess?" });
    expect(bundle.entities.map((e) => e.id)).toEqual([entity.id]);
    expect(bundle.entities[0]?.accessCount).toBe(1);
    expect(await memory.get("entity", entity.id)).toMatchObject({ accessCount: 1 });
    expect(bundle.facts[0]).toMatchObject({ claim: "Robert plays chess", accessCount: 1 });
    const stored = (await memory.get("fact", bundle.facts[0]?.id as string)) as MemoryFact;
    expect(stored.accessCount).toBe(1);
    expect(stored.lastAccessedAt).toBeDefined();
  });

  it("K2 salience is 0..1 (default 0.5) and checked", async () => {
    const memory = storeMemory();
    const [e] = (await memory.apply([{ op: "upsert_entity", name: "Acme" }])).results;
    expect(await memory.get("entity", e?.id as string)).toMatchObject({ salience: 0.5 });
    await expect(
      memory.apply([{ op: "upsert_entity", name: "Acme", salience: 1.5 }]),
    ).rejects.toMatchObject({
      kind: "InvalidParams",
      fieldViolations: [{ field: "ops.0.salience" }],
    });
  });
});

describe("goals", () => {
  it("K5 goals have status, priority 1-5 (default 3), deadline and a hierarchy without cycles", async () => {
    const memory = storeMemory();
    const deadline = new Date(Date.now() + 86_400_000 * 10).toISOString();
    const [root] = (await memory.apply([{ op: "set_goal", title: "Move to Lyon", deadline }]))
      .results;
    const [child] = (
      await memory.apply([
        { op: "set_goal", title: "Find a flat", priority: 1, parentId: root?.id },
      ])
    ).results;
    const [grandchild] = (
      await memory.apply([{ op: "set_goal", title: "Visit three flats", parentId: child?.id }])
    ).results;
    expect(await memory.get("goal", root?.id as string)).toMatchObject({
      status: "active",
      priority: 3,
      deadline,
    });
    expect(await memory.get("goal", child?.id as string)).toMatchObject({
      parentId: root?.id,
      priority: 1,
    });
    // A goal cannot move under its own descendant, nor under itself.
    const cycles = await memory.apply([
      { op: "update_goal", id: root?.id as string, parentId: grandchild?.id as string },
      { op: "update_goal", id: child?.id as string, parentId: child?.id as string },
    ]);
    expect(cycles.results.map((r) => r.status)).toEqual(["refused", "refused"]);
    expect(await memory.get("goal", root?.id as string)).not.toHaveProperty("parentId");
    const [orphan] = (await memory.apply([{ op: "set_goal", title: "x", parentId: "mg_none" }]))
      .results;
    expect(orphan).toMatchObject({ status: "refused" });
    // Only active goals are recalled, highest priority first.
    await memory.apply([{ op: "update_goal", id: grandchild?.id as string, status: "completed" }]);
    const bundle = await memory.remember({ text: "" });
    expect(bundle.goals.map((g) => g.title)).toEqual(["Find a flat", "Move to Lyon"]);
    // Removing a goal moves its subgoals up to its parent.
    expect(await memory.remove("goal", child?.id as string)).toBe(true);
    expect(await memory.get("goal", grandchild?.id as string)).toMatchObject({
      parentId: root?.id,
    });
  });

  it("K5 priority outside 1..5 and a bad deadline are refused naming the field", async () => {
    const memory = storeMemory();
    await expect(memory.apply([{ op: "set_goal", title: "x", priority: 6 }])).rejects.toMatchObject(
      {
        kind: "InvalidParams",
        fieldViolations: [{ field: "ops.0.priority" }],
      },
    );
    await expect(
      memory.apply([{ op: "set_goal", title: "x", deadline: "tomorrow" }]),
    ).rejects.toMatchObject({
      fieldViolations: [{ field: "ops.0.deadline" }],
    });
  });
});

describe("strategies", () => {
  it("K6 a finished task whose tools followed a strategy counts a success or a failure; recall prefers what worked", async () => {
    const memory = storeMemory();
    const added = await memory.apply([
      {
        op: "add_strategy",
        contextPattern: "book a flight",
        toolSequence: ["search_flights", "book"],
      },
      { op: "add_strategy", contextPattern: "book a flight cheaply", toolSequence: ["ask_agent"] },
      {
        op: "add_strategy",
        contextPattern: "book a flight",
        toolSequence: ["search_flights", "book"],
      },
    ]);
    expect(added.results.map((r) => r.status)).toEqual(["added", "added", "duplicate"]);
    const [search, ask] = added.results.map((r) => r.id as string);
    const outcomes = await memory.apply([
      {
        op: "strategy_outcome",
        text: "Book me a flight to Rome",
        toolSequence: ["search_flights", "weather", "book"],
        success: true,
      },
      {
        op: "strategy_outcome",
        text: "Book a flight to Oslo",
        toolSequence: ["search_flights", "book"],
        success: true,
      },
      {
        op: "strategy_outcome",
        text: "a flight to Nice",
        toolSequence: ["ask_agent"],
        success: false,
      },
      // Tools in another order, or another request: nothing counted.
      {
        op: "strategy_outcome",
        text: "flight",
        toolSequence: ["book", "search_flights"],
        success: false,
      },
      {
        op: "strategy_outcome",
        text: "bake bread",
        toolSequence: ["search_flights", "book"],
        success: false,
      },
    ]);
    expect(outcomes.results.map((r) => r.status)).toEqual([
      "updated",
      "updated",
      "updated",
      "unchanged",
      "unchanged",
    ]);
    expect(await memory.get("strategy", search as string)).toMatchObject({
      successCount: 2,
      failureCount: 0,
    });
    expect(await memory.get("strategy", ask as string)).toMatchObject({
      successCount: 0,
      failureCount: 1,
    });
    const bundle = await memory.remember({ text: "Please book a flight cheaply" });
    expect(bundle.strategies.map((s) => s.id)).toEqual([search]);
    expect(renderMemoryBundle(bundle)).toContain("search_flights → book, worked 2 of 2 times");
    // Once it works more than it fails, it is recalled, after the one that worked more.
    await memory.apply([
      {
        op: "strategy_outcome",
        text: "flight cheaply",
        toolSequence: ["ask_agent"],
        success: true,
      },
      {
        op: "strategy_outcome",
        text: "flight cheaply",
        toolSequence: ["ask_agent"],
        success: true,
      },
    ]);
    const again = await memory.remember({ text: "Please book a flight cheaply" });
    expect(again.strategies.map((s) => s.id)).toEqual([search, ask]);
  });
});

describe("channels and turns", () => {
  it("K8 a memory in a channel is recalled in that channel (with _global), not in another", async () => {
    const memory = storeMemory();
    await memory.apply([
      { op: "add_fact", claim: "Global likes jazz" },
      { op: "add_fact", claim: "Work prefers email", channel: "work" },
      { op: "add_fact", claim: "Home prefers calls", channel: "home" },
    ]);
    const claims = async (channel?: string) =>
      (await memory.remember({ text: "prefers likes", channel })).facts.map((f) => f.claim).sort();
    expect(await claims()).toEqual(["Global likes jazz"]);
    expect(await claims("work")).toEqual(["Global likes jazz", "Work prefers email"]);
    expect(await claims("home")).toEqual(["Global likes jazz", "Home prefers calls"]);
    // An entity of one channel is not recalled by name in another.
    await memory.apply([{ op: "upsert_entity", name: "Globex", channel: "work" }]);
    expect((await memory.remember({ text: "Globex", channel: "work" })).entities).toHaveLength(1);
    expect((await memory.remember({ text: "Globex", channel: "home" })).entities).toEqual([]);
    await expect(memory.remember({ text: "x", channel: "bad channel!" })).rejects.toMatchObject({
      fieldViolations: [{ field: "channel" }],
    });
  });

  it("K1 turns are kept with their task and context, listed newest first and searchable", async () => {
    const memory = storeMemory();
    await memory.apply(
      [
        { op: "add_turn", role: "user", content: "I need a vegetarian recipe" },
        { op: "add_turn", role: "assistant", content: "Here is a lentil curry" },
      ],
      { taskId: "task-1", contextId: "ctx-1" },
    );
    const page = await memory.list({ kind: "turn" });
    expect(page.items).toMatchObject([
      {
        kind: "turn",
        role: "assistant",
        content: "Here is a lentil curry",
        taskId: "task-1",
        contextId: "ctx-1",
      },
      { kind: "turn", role: "user", content: "I need a vegetarian recipe" },
    ]);
    expect((await memory.list({ kind: "turn", query: "vegetarian" })).items).toHaveLength(1);
  });
});
