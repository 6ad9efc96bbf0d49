import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { openAiEmbedder, workersAiEmbedder } from "../../../src/memory/base/embedder";
import { estimateTokens, renderMemoryBundle } from "../../../src/memory/base/render";
import type { MemoryRpc } from "../../../src/memory/object/memory-object";
import { inObject, storeMemory } from "../../harness/memory/helpers";
import { FakeVectorIndex, storeHarness } from "../../harness/memory/store-worker";

describe("recall ranking", () => {
  it("K7 text match ranks first (bm25), then confidence; unrelated recent facts come after as context", async () => {
    const memory = storeMemory();
    await memory.apply([
      { op: "add_fact", claim: "Owns a red bicycle", confidence: 1 },
      { op: "add_fact", claim: "Drinks tea sometimes", confidence: 0.3 },
      // The shorter claim matches better by bm25; confidence decides between the two.
      { op: "add_fact", claim: "Likes green tea", confidence: 0.1 },
      { op: "add_fact", claim: "Prefers green tea from Japan", confidence: 1 },
    ]);
    const bundle = await memory.remember({ text: "Which green tea should I buy?" });
    expect(bundle.facts.map((f) => f.claim)).toEqual([
      "Prefers green tea from Japan",
      "Likes green tea",
      "Drinks tea sometimes",
      "Owns a red bicycle",
    ]);
    const scores = bundle.facts.map((f) => f.score);
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);
  });

  it("K7 recency and salience break ties between equal matches", async () => {
    const memory = storeMemory();
    const { results } = await memory.apply([
      { op: "add_fact", claim: "Visited Rome in spring" },
      { op: "add_fact", claim: "Visited Oslo in spring" },
    ]);
    // The Rome fact was last touched 200 days ago.
    const old = new Date(Date.now() - 200 * 86_400_000).toISOString();
    await inObject(memory, (sql) =>
      sql.exec(
        "UPDATE facts SET updated_at = ?, created_at = ? WHERE id = ?",
        old,
        old,
        results[0]?.id as string,
      ),
    );
    expect((await memory.remember({ text: "visited spring" })).facts[0]?.claim).toBe(
      "Visited Oslo in spring",
    );
    // With equal matches and ages, the fact about the more salient entity comes first.
    const other = storeMemory();
    await other.apply([
      { op: "add_fact", claim: "Visited Rome in spring", entities: ["Rome"] },
      { op: "add_fact", claim: "Visited Oslo in spring", entities: ["Oslo"] },
      { op: "upsert_entity", name: "Rome", salience: 1 },
      { op: "upsert_entity", name: "Oslo", salience: 0 },
    ]);
    expect((await other.remember({ text: "visited spring" })).facts[0]?.claim).toBe(
      "Visited Rome in spring",
    );
    await other.apply([
      { op: "upsert_entity", name: "Rome", salience: 0 },
      { op: "upsert_entity", name: "Oslo", salience: 1 },
    ]);
    expect((await other.remember({ text: "visited spring" })).facts[0]?.claim).toBe(
      "Visited Oslo in spring",
    );
  });

  it("K3 neighbours: the closest live facts per claim, at most k, in any channel, without counting an access", async () => {
    const memory = storeMemory();
    await memory.apply([
      { op: "add_fact", claim: "Prefers green tea" },
      { op: "add_fact", claim: "Prefers tea with milk", channel: "home" },
      { op: "add_fact", claim: "Owns a bicycle" },
    ]);
    const [tea, bike, none] = await memory.neighbours(
      ["likes green tea", "a new bicycle", "opera"],
      2,
    );
    expect(tea?.map((f) => f.claim)).toEqual(["Prefers green tea", "Prefers tea with milk"]);
    expect(bike?.map((f) => f.claim)).toEqual(["Owns a bicycle"]);
    expect(none).toEqual([]);
    const stored = (await memory.list({ kind: "fact" })).items as Array<{ accessCount: number }>;
    expect(stored.map((f) => f.accessCount)).toEqual([0, 0, 0]);
  });

  it("K7 recall counts each access in its answer and writes the counts just after, not before answering", async () => {
    const memory = storeMemory();
    await memory.apply([{ op: "add_fact", claim: "Collects vinyl records", entities: ["Vinyl"] }]);
    const stored = () =>
      inObject(
        memory,
        (sql) => sql.exec<{ n: number }>("SELECT access_count AS n FROM facts").one().n,
      );
    // Two answers and the stored count read in one turn of the object, before any timer can
    // run (over RPC, a loaded machine let the write's timer fire before the count was read).
    const inOneTurn = await runInDurableObject(memory.stub, async (instance, state) => {
      const object = instance as unknown as MemoryRpc;
      const counts = [];
      for (let i = 0; i < 2; i++) {
        const answer = await object.remember({ text: "vinyl" });
        counts.push(answer.ok ? answer.value.facts[0]?.accessCount : answer.error);
      }
      const count = state.storage.sql.exec<{ n: number }>("SELECT access_count AS n FROM facts");
      return { counts, stored: count.one().n };
    });
    expect(inOneTurn).toEqual({ counts: [1, 2], stored: 0 });
    // Written by a timer after the answer: waited for, not slept on (a loaded machine ran it
    // later than a fixed 400 ms).
    await vi.waitFor(async () => expect(await stored()).toBe(2), { timeout: 10_000, interval: 50 });
    expect(
      await memory.get("entity", (await memory.list({ kind: "entity" })).items[0]?.id as string),
    ).toMatchObject({
      accessCount: 2,
    });
    // Any other read sees counts still waiting.
    await memory.remember({ text: "vinyl" });
    expect((await memory.list({ kind: "fact" })).items[0]).toMatchObject({ accessCount: 3 });
  });

  it("K7 the bundle stays within its token budget and says when it left memories out", async () => {
    const memory = storeMemory();
    await memory.apply(
      Array.from({ length: 60 }, (_, i) => ({
        op: "add_fact" as const,
        claim: `The user's project number ${i} is about gardening and compost`,
      })),
    );
    await memory.apply([{ op: "set_goal", title: "Finish the compost bin", priority: 1 }]);
    const small = await memory.remember({ text: "gardening compost", tokenBudget: 80 });
    const text = renderMemoryBundle(small);
    expect(small.truncated).toBe(true);
    expect(small.tokens).toBe(estimateTokens(text));
    expect(small.tokens).toBeLessThanOrEqual(80);
    expect(small.facts.length).toBeGreaterThan(0);
    const large = await memory.remember({ text: "gardening compost", tokenBudget: 32_000 });
    expect(large.tokens).toBe(estimateTokens(renderMemoryBundle(large)));
    // At most 50 text candidates (equal matches: the newest), the 20 newest among them.
    expect(large.facts.length).toBe(50);
    expect(large.goals.map((g) => g.title)).toEqual(["Finish the compost bin"]);
    expect(
      renderMemoryBundle({ ...large, facts: [], goals: [], entities: [], strategies: [] }),
    ).toBe("");
    expect(text.startsWith("## What you remember about this user\n\nFacts:\n- ")).toBe(true);
  });

  it("K7 recall answers a model turn's section: remember's bundle rendered in the object, the same budget, the access counted alike", async () => {
    const memory = storeMemory();
    expect(await memory.recall({ text: "camping trip" })).toEqual({
      section: "",
      tokens: 0,
      truncated: false,
    });
    await memory.apply([
      { op: "add_fact", claim: "Goes camping in the Alps", entities: ["Alps"] },
      { op: "add_fact", claim: "Plans a camping trip with Maria", entities: ["Maria"] },
      { op: "set_goal", title: "Book the camping trip", priority: 2 },
      { op: "add_strategy", contextPattern: "camping trip", toolSequence: ["weather", "book"] },
    ]);
    for (const tokenBudget of [1_000, 60]) {
      const query = { text: "Where does my camping trip go?", tokenBudget };
      const bundle = await memory.remember(query);
      const recalled = await memory.recall(query);
      expect(recalled).toEqual({
        section: renderMemoryBundle(bundle),
        tokens: bundle.tokens,
        truncated: bundle.truncated,
      });
      expect(recalled.tokens).toBeLessThanOrEqual(tokenBudget);
    }
    const full = (await memory.recall({ text: "Where does my camping trip go?" })).section;
    for (const title of ["Facts:", "People and things:", "Active goals:", "Approaches that"]) {
      expect(full).toContain(`\n\n${title}`);
    }
    // Two remembers and three recalls named each fact (the small budget left none out).
    const facts = (await memory.list({ kind: "fact" })).items as Array<{ accessCount: number }>;
    expect(facts.map((f) => f.accessCount)).toEqual([5, 5]);
  });

  it("K7 recall skips the kinds a memory holds none of, and sees them once written", async () => {
    const memory = storeMemory();
    await memory.apply([{ op: "add_fact", claim: "Sails on Lake Geneva" }]);
    const query = { text: "Who sails with me on Lake Geneva?" };
    expect((await memory.recall(query)).section).not.toContain("People and things:");
    await memory.apply([{ op: "upsert_entity", name: "Geneva", aliases: ["Lake Geneva"] }]);
    expect((await memory.recall(query)).section).toContain("People and things:\n- Geneva");
    await memory.apply([{ op: "set_goal", title: "Sail across the lake", priority: 1 }]);
    expect((await memory.recall(query)).section).toContain("Active goals:\n- Sail across");
  });
});

/**
 * An embedding model at the HTTP wire: each text becomes a vector of concepts, so
 * "espresso" and "coffee" are close though they share no word.
 */
const CONCEPTS = [
  ["coffee", "espresso", "latte", "caffeine"],
  ["tea", "matcha", "oolong"],
  ["dog", "puppy", "canine"],
  ["bicycle", "bike", "cycling"],
];
function conceptVector(text: string): number[] {
  const words = text.toLowerCase().split(/\W+/);
  const v = CONCEPTS.map((group) => words.filter((w) => group.includes(w)).length);
  return [...v, 0.01];
}

function fakeEmbeddingsEndpoint() {
  const requests: Array<{
    url: string;
    auth: string | null;
    body: { model: string; input: string[] };
  }> = [];
  const fetcher = async (input: RequestInfo | URL, init?: RequestInit) => {
    const request = new Request(input, init);
    const body = (await request.json()) as { model: string; input: string[] };
    requests.push({ url: request.url, auth: request.headers.get("authorization"), body });
    // Answered out of order, as the API allows: `index` says which is which.
    const data = body.input
      .map((text, index) => ({ object: "embedding", index, embedding: conceptVector(text) }))
      .reverse();
    return new Response(JSON.stringify({ object: "list", data, model: body.model }), {
      headers: { "content-type": "application/json" },
    });
  };
  const embedder = openAiEmbedder({
    baseURL: "https://embeddings.example.com/v1/",
    apiKey: "sk-test",
    model: "concepts-1",
    dimensions: CONCEPTS.length + 1,
    fetch: fetcher as typeof fetch,
  });
  return { embedder, requests };
}

describe("embeddings", () => {
  it("K7 the OpenAI-compatible embedder posts to /embeddings with the key and reads vectors by index", async () => {
    const { embedder, requests } = fakeEmbeddingsEndpoint();
    const vectors = await embedder.embed(["espresso please", "a puppy"]);
    expect(requests).toEqual([
      {
        url: "https://embeddings.example.com/v1/embeddings",
        auth: "Bearer sk-test",
        body: {
          model: "concepts-1",
          input: ["espresso please", "a puppy"],
          encoding_format: "float",
        },
      },
    ]);
    expect([...(vectors[0] as Float32Array)].map((x) => Math.round(x))).toEqual([1, 0, 0, 0, 0]);
    expect([...(vectors[1] as Float32Array)].map((x) => Math.round(x))).toEqual([0, 0, 1, 0, 0]);
    const failing = openAiEmbedder({
      baseURL: "https://e.example.com",
      apiKey: "k",
      model: "m",
      dimensions: 2,
      fetch: (async () => new Response("nope", { status: 500 })) as typeof fetch,
    });
    await expect(failing.embed(["x"])).rejects.toThrow(/HTTP 500/);
    const wrongSize = openAiEmbedder({
      baseURL: "https://e.example.com",
      apiKey: "k",
      model: "m",
      dimensions: 3,
      fetch: (async () =>
        Response.json({ data: [{ index: 0, embedding: [1, 2] }] })) as typeof fetch,
    });
    await expect(wrongSize.embed(["x"])).rejects.toThrow(/3 finite numbers/);
  });

  it("K7 the Workers AI embedder runs the model on the binding", async () => {
    const calls: unknown[] = [];
    const embedder = workersAiEmbedder(
      {
        run: async (model, input) => {
          calls.push([model, input]);
          return { shape: [input.text.length, 2], data: input.text.map(() => [0.5, 0.25]) };
        },
      },
      "@cf/baai/bge-small-en-v1.5",
      2,
    );
    expect(embedder.id).toBe("workers-ai:@cf/baai/bge-small-en-v1.5");
    const vectors = await embedder.embed(["a", "b"]);
    expect(vectors.map((v) => [...v])).toEqual([
      [0.5, 0.25],
      [0.5, 0.25],
    ]);
    expect(calls).toEqual([["@cf/baai/bge-small-en-v1.5", { text: ["a", "b"] }]]);
  });

  it("K7 vectors are stored as Float32 blobs, and recall finds a fact by meaning (cosine in the object)", async () => {
    const { embedder } = fakeEmbeddingsEndpoint();
    const memory = storeMemory({ embedder });
    await memory.apply([
      { op: "add_fact", claim: "Drinks coffee every morning" },
      { op: "add_fact", claim: "Has a puppy named Rex" },
      { op: "add_fact", claim: "Commutes by bike" },
    ]);
    const blobs = await inObject(memory, (sql) =>
      sql
        .exec<{ t: string; n: number }>(
          "SELECT typeof(embedding) AS t, length(embedding) AS n FROM facts",
        )
        .toArray(),
    );
    expect(blobs).toEqual(Array(3).fill({ t: "blob", n: (CONCEPTS.length + 1) * 4 }));
    // No word in common with any fact: only the vectors can tell.
    const bundle = await memory.remember({ text: "Should I order an espresso?" });
    expect(bundle.facts[0]?.claim).toBe("Drinks coffee every morning");
    const neighbours = await memory.neighbours(["my canine friend"], 1);
    expect(neighbours[0]?.map((f) => f.claim)).toEqual(["Has a puppy named Rex"]);
  });

  it("K7 hybrid ranking: a fact matched by text and by meaning ranks above one matched by either alone", async () => {
    const { embedder } = fakeEmbeddingsEndpoint();
    const memory = storeMemory({ embedder });
    await memory.apply([
      { op: "add_fact", claim: "Likes latte art" }, // meaning only (coffee)
      { op: "add_fact", claim: "Morning routine includes a walk" }, // text only (morning)
      { op: "add_fact", claim: "Morning coffee is a must" }, // both
      { op: "add_fact", claim: "Owns a bicycle" }, // neither
    ]);
    const bundle = await memory.remember({ text: "morning espresso" });
    const claims = bundle.facts.map((f) => f.claim);
    expect(claims[0]).toBe("Morning coffee is a must");
    expect(claims.slice(1, 3).sort()).toEqual([
      "Likes latte art",
      "Morning routine includes a walk",
    ]);
    expect(claims[3]).toBe("Owns a bicycle");
    const [both, one] = bundle.facts;
    expect((both?.score ?? 0) - (one?.score ?? 0)).toBeGreaterThan(0.1);
  });

  it("K7 past the local size, vectors go to the Vectorize index, in the memory's own namespace", async () => {
    const { embedder } = fakeEmbeddingsEndpoint();
    const memory = storeMemory({ embedder, vectorize: "MEMORY_VECTORS", localVectorLimit: 2 });
    const other = storeMemory({ embedder, vectorize: "MEMORY_VECTORS", localVectorLimit: 2 });
    const index = new FakeVectorIndex();
    storeHarness.indexes.set(memory.id.toString(), index);
    storeHarness.indexes.set(other.id.toString(), index);
    const { results } = await memory.apply([
      { op: "add_fact", claim: "Drinks coffee every morning" },
      { op: "add_fact", claim: "Has a puppy named Rex" },
      { op: "add_fact", claim: "Commutes by bike" },
    ]);
    await other.apply([{ op: "add_fact", claim: "Loves espresso" }]);
    expect(index.vectors.size).toBe(4);
    expect(new Set([...index.vectors.values()].map((v) => v.namespace)).size).toBe(2);
    index.calls.length = 0;
    const bundle = await memory.remember({ text: "an espresso?" });
    expect(index.calls).toEqual(["query 20"]);
    expect(bundle.facts[0]?.claim).toBe("Drinks coffee every morning");
    expect(bundle.facts.map((f) => f.claim)).not.toContain("Loves espresso");
    // A superseded or removed fact leaves the index; erasure empties the memory's namespace.
    await memory.apply([
      { op: "supersede_fact", id: results[1]?.id as string, claim: "Has a dog named Rex" },
    ]);
    expect(index.vectors.has(results[1]?.id as string)).toBe(false);
    await memory.remove("fact", results[2]?.id as string);
    expect(index.vectors.has(results[2]?.id as string)).toBe(false);
    await memory.erase();
    expect([...index.vectors.values()].map((v) => v.namespace)).toEqual([other.id.toString()]);
  });

  it("K7 an embedder that fails leaves recall to the text index", async () => {
    const memory = storeMemory({
      embedder: {
        id: "broken",
        dimensions: 3,
        embed: async () => Promise.reject(new Error("down")),
      },
    });
    await memory.apply([{ op: "add_fact", claim: "Prefers window seats" }]);
    expect((await memory.remember({ text: "window seats" })).facts.map((f) => f.claim)).toEqual([
      "Prefers window seats",
    ]);
  });
});
