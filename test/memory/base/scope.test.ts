import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { memoryObjectName } from "../../../src/memory/base/scope";
import type { MemoryOp } from "../../../src/protocol/memory";
import { inObject, storeMemory, unique } from "../../harness/memory/helpers";

describe("isolation and erasure", () => {
  it("K8 memories are isolated across owners and tenants: another owner or tenant recalls nothing", async () => {
    const tenant = unique("tenant");
    const alice = storeMemory({}, tenant, '["bearer","https://login.example.com/","alice"]');
    const bob = storeMemory({}, tenant, '["bearer","https://login.example.com/","bob"]');
    const aliceElsewhere = storeMemory({}, unique("tenant"), alice.key);
    await alice.apply([{ op: "add_fact", claim: "Alice's password hint is tortoise" }]);
    expect((await alice.remember({ text: "password hint" })).facts).toHaveLength(1);
    expect((await bob.remember({ text: "password hint" })).facts).toEqual([]);
    expect((await aliceElsewhere.remember({ text: "password hint" })).facts).toEqual([]);
    expect((await bob.list({ kind: "fact" })).items).toEqual([]);
    const id = (await alice.list({ kind: "fact" })).items[0]?.id as string;
    expect(await bob.get("fact", id)).toBeNull();
    expect(await bob.remove("fact", id)).toBe(false);
    expect(await alice.get("fact", id)).not.toBeNull();
  });

  it("K8 object names keep tenant and key apart, and anonymous callers have no memory", () => {
    expect(memoryObjectName("a/b", "c")).not.toBe(memoryObjectName("a", "b/c"));
    expect(memoryObjectName("t", "k")).toBe("m:t/k");
    expect(() => memoryObjectName("t", "")).toThrow(/anonymous/);
    // Never a conversation's or an index's name.
    expect(memoryObjectName("t", "k")).toMatch(/^m:/);
  });

  it("K8 erase() leaves nothing recallable: rows, indexes and storage are gone", async () => {
    const memory = storeMemory();
    await memory.apply([
      { op: "add_fact", claim: "Allergic to peanuts", entities: ["Peanuts"] },
      { op: "set_goal", title: "Run a marathon" },
      { op: "add_strategy", contextPattern: "allergy question", toolSequence: ["lookup"] },
      { op: "add_turn", role: "user", content: "I am allergic to peanuts" },
    ]);
    expect((await memory.stats()).facts).toBe(1);
    expect(await memory.erase()).toEqual({ erased: 5 });
    const bundle = await memory.remember({ text: "peanuts allergy marathon" });
    expect(bundle).toMatchObject({ facts: [], entities: [], goals: [], strategies: [], tokens: 0 });
    for (const kind of ["fact", "entity", "goal", "strategy", "turn"] as const) {
      expect((await memory.list({ kind })).items).toEqual([]);
    }
    expect(await memory.stats()).toMatchObject({ facts: 0, entities: 0, bytes: 0 });
    expect(
      await inObject(memory, (sql) => sql.exec("SELECT name FROM sqlite_master").toArray()),
    ).toEqual([]);
    // The memory starts again from nothing.
    await memory.apply([{ op: "add_fact", claim: "Likes figs" }]);
    expect((await memory.remember({ text: "figs" })).facts.map((f) => f.claim)).toEqual([
      "Likes figs",
    ]);
    expect((await memory.stats()).facts).toBe(1);
  });
});

describe("limits", () => {
  it("K8 a full memory refuses a new item with MemoryFull, and applies nothing of the batch", async () => {
    const memory = storeMemory({ limits: { maxItems: 3 } });
    await memory.apply([
      { op: "add_fact", claim: "one" },
      { op: "add_fact", claim: "two" },
    ]);
    const error = await memory
      .apply([
        { op: "add_fact", claim: "three" },
        { op: "add_fact", claim: "four" },
      ])
      .catch((e: unknown) => e);
    expect(error).toMatchObject({
      kind: "MemoryFull",
      code: -32054,
      httpStatus: 409,
      metadata: { maxItems: "3" },
    });
    expect((await memory.stats()).facts).toBe(2);
    // A duplicate needs no room.
    expect((await memory.apply([{ op: "add_fact", claim: "ONE" }])).results[0]?.status).toBe(
      "duplicate",
    );
    expect((await memory.apply([{ op: "add_fact", claim: "three" }])).results[0]?.status).toBe(
      "added",
    );
    await expect(
      memory.apply([{ op: "add_turn", role: "user", content: "hi" }]),
    ).rejects.toMatchObject({
      kind: "MemoryFull",
    });
  });

  it("K8 configured to evict, a full memory deletes its least valuable items: superseded facts, turns, then the least salient", async () => {
    const memory = storeMemory({ limits: { maxItems: 4, whenFull: "evict" } });
    const [old] = (
      await memory.apply([{ op: "add_fact", claim: "Drives a Fiat", confidence: 0.9 }])
    ).results;
    await memory.apply([
      { op: "supersede_fact", id: old?.id as string, claim: "Drives a Volvo", confidence: 0.9 },
      { op: "add_turn", role: "user", content: "hello" },
      { op: "add_fact", claim: "Might like opera", confidence: 0.2 },
    ]);
    expect(await memory.stats()).toMatchObject({ facts: 3, turns: 1 });
    await memory.apply([{ op: "add_fact", claim: "Has two cats", confidence: 0.9 }]);
    expect(await memory.get("fact", old?.id as string)).toBeNull();
    await memory.apply([{ op: "add_fact", claim: "Speaks Dutch", confidence: 0.9 }]);
    expect(await memory.stats()).toMatchObject({ facts: 4, turns: 0 });
    await memory.apply([{ op: "add_fact", claim: "Reads sci-fi", confidence: 0.9 }]);
    const claims = (await memory.list({ kind: "fact" })).items.map(
      (i) => (i as { claim: string }).claim,
    );
    expect(claims.sort()).toEqual([
      "Drives a Volvo",
      "Has two cats",
      "Reads sci-fi",
      "Speaks Dutch",
    ]);
  });

  it("K8 an item over maxItemBytes is refused naming its field", async () => {
    const memory = storeMemory({ limits: { maxItemBytes: 100 } });
    await expect(
      memory.apply([
        { op: "add_fact", claim: "fine" },
        { op: "add_fact", claim: "é".repeat(60) },
      ]),
    ).rejects.toMatchObject({
      kind: "InvalidParams",
      fieldViolations: [
        { field: "ops.1.claim", description: expect.stringContaining("maxItemBytes (100)") },
      ],
    });
    expect((await memory.stats()).facts).toBe(0);
    await expect(
      memory.apply([{ op: "add_turn", role: "user", content: "x".repeat(101) }]),
    ).rejects.toMatchObject({
      fieldViolations: [{ field: "ops.0.content" }],
    });
  });

  it("K8 limits are checked when configured: a wrong value names the setting", async () => {
    const { resolveMemoryLimits, DEFAULT_MEMORY_LIMITS } = await import(
      "../../../src/memory/base/limits"
    );
    expect(resolveMemoryLimits()).toEqual(DEFAULT_MEMORY_LIMITS);
    expect(resolveMemoryLimits({ maxItems: 10 })).toMatchObject({
      maxItems: 10,
      maxItemBytes: 4096,
    });
    expect(() => resolveMemoryLimits({ maxItems: 0 })).toThrow(/memory\.limits\.maxItems/);
    expect(() => resolveMemoryLimits({ whenFull: "drop" as "evict" })).toThrow(
      /memory\.limits\.whenFull/,
    );
  });

  it("K8 extraction calls are counted per hour, durably", async () => {
    const memory = storeMemory({ limits: { extractionCallsPerHour: 2 } });
    expect(await memory.reserveExtraction()).toBe(true);
    expect(await memory.reserveExtraction()).toBe(true);
    expect(await memory.reserveExtraction()).toBe(false);
    // The next hour starts again.
    await inObject(memory, (sql) => sql.exec("UPDATE extraction_window SET hour = hour - 1"));
    expect(await memory.reserveExtraction()).toBe(true);
  });
});

describe("hostile input", () => {
  const bad: Array<[string, unknown, string]> = [
    ["not an array", "ops", "ops"],
    ["an unknown op", [{ op: "drop_table" }], "ops.0.op"],
    ["an unknown field", [{ op: "add_fact", claim: "x", sql: "1" }], "ops.0.sql"],
    ["an empty claim", [{ op: "add_fact", claim: "   " }], "ops.0.claim"],
    ["a claim too long", [{ op: "add_fact", claim: "x".repeat(20_000) }], "ops.0.claim"],
    ["confidence past 1", [{ op: "add_fact", claim: "x", confidence: 2 }], "ops.0.confidence"],
    ["a bad source", [{ op: "add_fact", claim: "x", source: "rumour" }], "ops.0.source"],
    ["a bad date", [{ op: "add_fact", claim: "x", validFrom: "yesterday" }], "ops.0.validFrom"],
    [
      "too many aliases",
      [{ op: "upsert_entity", name: "x", aliases: Array(40).fill("a") }],
      "ops.0.aliases",
    ],
    ["a goal status", [{ op: "update_goal", id: "mg_1", status: "done" }], "ops.0.status"],
    ["too many ops", Array(101).fill({ op: "add_turn", role: "user", content: "x" }), "ops"],
  ];

  it.each(bad)(
    "K8 %s is InvalidParams naming the field, never an internal error",
    async (_what, ops, field) => {
      const memory = storeMemory();
      const result = await memory.raw.apply(ops as MemoryOp[]);
      expect(result.ok).toBe(false);
      if (result.ok) return;
      expect(result.error.kind).toBe("InvalidParams");
      expect(result.error.fieldViolations?.map((v) => v.field)).toContain(field);
    },
  );

  it("K8 hostile queries, pages and ids are refused or answered, never an internal error", async () => {
    const memory = storeMemory();
    await memory.apply([{ op: "add_fact", claim: 'Likes "quoted" things AND NEAR(x y) stars*' }]);
    for (const text of [
      '"',
      "NEAR(",
      "a OR",
      "*",
      "col:x",
      "\u0000",
      "😀 tea",
      "x".repeat(16_000),
    ]) {
      const answer = await memory.raw.remember({ text });
      expect(answer.ok).toBe(true);
    }
    expect((await memory.remember({ text: 'NEAR(x y) "quoted"' })).facts).toHaveLength(1);
    const checks: Array<
      [
        Promise<{
          ok: boolean;
          error?: { kind: string; fieldViolations?: Array<{ field: string }> };
        }>,
        string,
      ]
    > = [
      [memory.raw.remember({ text: "x", tokenBudget: 0 }), "tokenBudget"],
      [memory.raw.remember({ text: 1 } as never), "text"],
      [memory.raw.list({ kind: "fact", pageToken: "forged" }), "pageToken"],
      [
        memory.raw.list({ kind: "fact", pageToken: btoa(JSON.stringify(["goal", 5])) }),
        "pageToken",
      ],
      [memory.raw.list({ kind: "secrets" } as never), "kind"],
      [memory.raw.list({ kind: "fact", pageSize: 1000 }), "pageSize"],
      [memory.raw.get("fact", "x".repeat(600)), "id"],
      [memory.raw.remove("table" as never, "x"), "kind"],
      [memory.raw.neighbours(["x"], 1000), "k"],
      [memory.raw.neighbours(Array(33).fill("x"), 1), "claims"],
    ];
    for (const [call, field] of checks) {
      const answer = await call;
      expect(answer.ok).toBe(false);
      expect(answer.error?.kind).toBe("InvalidParams");
      expect(answer.error?.fieldViolations?.map((v) => v.field)).toContain(field);
    }
  });

  it("K7 listing pages through every item once, newest first", async () => {
    const memory = storeMemory();
    await memory.apply(
      Array.from({ length: 7 }, (_, i) => ({ op: "add_fact" as const, claim: `fact number ${i}` })),
    );
    const seen: string[] = [];
    let pageToken: string | undefined;
    do {
      const page = await memory.list({ kind: "fact", pageSize: 3, pageToken });
      seen.push(...page.items.map((i) => (i as { claim: string }).claim));
      pageToken = page.nextPageToken || undefined;
    } while (pageToken);
    expect(seen).toEqual(Array.from({ length: 7 }, (_, i) => `fact number ${6 - i}`));
    expect(env.STORE_MEMORY).toBeDefined();
  });
});
