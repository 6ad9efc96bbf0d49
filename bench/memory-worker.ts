/**
 * The memory benchmark's worker (bench/memory.mjs serves it on workerd): one SQLite
 * Durable Object, Edgelink's MemoryObject (src/memory/object/memory-object.ts) with room for the
 * largest size, filled with facts or with conversation turns through its own `apply` and
 * recalled through its own `remember`,
 * each bundle rendered as the agent renders it. `GET /<method>?name=…&…` calls the
 * object's method and answers JSON; loopback only.
 */

import { renderMemoryBundle } from "../src/memory/base/render";
import { MemoryObject, type MemoryObjectOptions } from "../src/memory/object/memory-object";
import type { MemoryOp } from "../src/protocol/memory";
import { unwrap } from "../src/storage/rpc-result";

interface Env {
  MEMORY_BENCH: DurableObjectNamespace<MemoryBench>;
}

/**
 * Pseudo-words from syllables, the same on every run. Few enough that every query matches
 * enough facts to fill its bundle at every size (about 30 at 1k, 3,000 at 100k): each size
 * then does the same recall work, and the ratio shows what the memory's size costs.
 */
const VOCABULARY_SIZE = 500;
const SYLLABLES = "ka lo mi nu pe ra si to vu ze ba do fi gu he ja ko li mo ny".split(" ");
export const VOCABULARY = Array.from({ length: VOCABULARY_SIZE }, (_, i) => {
  let word = "";
  let n = i + 20;
  while (n > 0) {
    word += SYLLABLES[n % SYLLABLES.length];
    n = Math.floor(n / SYLLABLES.length);
  }
  return word;
});

/** A deterministic generator (mulberry32), so every run stores the same facts. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const word = (next: () => number) => VOCABULARY[Math.floor(next() * VOCABULARY.length)] as string;

/** Fact `i`: a sentence of five vocabulary words, like a short extracted claim. */
function factOp(i: number): MemoryOp {
  const next = random(i + 1);
  const words = Array.from({ length: 5 }, () => word(next));
  return {
    op: "add_fact",
    claim: `The user said ${words[0]} ${words[1]} goes with ${words[2]}, ${words[3]} and ${words[4]} (${i})`,
    confidence: 0.5 + next() / 2,
    source: "extraction",
  };
}

/** Turn `i`: the same kind of sentence, said in conversations of 20 turns each. */
function turnOp(i: number): MemoryOp {
  const next = random(i + 1);
  const words = Array.from({ length: 5 }, () => word(next));
  return {
    op: "add_turn",
    role: i % 2 ? "assistant" : "user",
    content: `I think ${words[0]} ${words[1]} goes with ${words[2]}, ${words[3]} and ${words[4]} (${i})`,
    contextId: `conversation-${Math.floor(i / 20)}`,
  };
}

export class MemoryBench extends MemoryObject<Env> {
  protected override get memoryOptions(): MemoryObjectOptions {
    return { limits: { maxItems: 200_000 } };
  }

  /**
   * Adds facts (or turns) until the memory holds `target` of them, 100 per `apply` (one
   * transaction each).
   */
  async fill(target: number, kind: "fact" | "turn" = "fact") {
    const start = performance.now();
    const stats = unwrap(await this.stats());
    let count = kind === "turn" ? stats.turns : stats.facts;
    while (count < target) {
      const end = Math.min(target, count + 100);
      const ops: MemoryOp[] = [];
      for (let i = count; i < end; i++) ops.push(kind === "turn" ? turnOp(i) : factOp(i));
      unwrap(await this.apply(ops));
      count = end;
    }
    return { count, ms: performance.now() - start };
  }

  /**
   * `reps` rounds of the queries: each a `remember` (ranked bundle within `budget`), its
   * rendering and the write of its access counts. Median ms per recall, and what the last bundles held.
   */
  async recallRounds(queries: string[], budget: number, reps: number) {
    const times: number[] = [];
    let facts = 0;
    let turns = 0;
    let tokens = 0;
    let chars = 0;
    for (let r = 0; r < reps; r++) {
      for (const text of queries) {
        const start = performance.now();
        // Asked from a conversation of its own, as a model turn asks.
        const bundle = unwrap(
          await this.remember({ text, tokenBudget: budget, contextId: "bench-asking" }),
        );
        const rendered = renderMemoryBundle(bundle);
        // Its access counts, written after the answer in a deployment, count here too.
        this.flushAccess();
        times.push(performance.now() - start);
        facts = bundle.facts.length;
        turns = bundle.turns.length;
        tokens = bundle.tokens;
        chars = rendered.length;
      }
    }
    times.sort((a, b) => a - b);
    return {
      ms: times[Math.floor(times.length / 2)] ?? Number.NaN,
      calls: times.length,
      facts,
      turns,
      tokens,
      chars,
    };
  }
}

/** Queries of three vocabulary words in a question, as a user turn would ask. */
export function benchQueries(count: number): string[] {
  const next = random(424242);
  return Array.from(
    { length: count },
    () => `What do you remember about ${word(next)} and ${word(next)}, or maybe ${word(next)}?`,
  );
}

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const url = new URL(request.url);
    const name = url.searchParams.get("name") ?? "memory";
    const stub = env.MEMORY_BENCH.get(env.MEMORY_BENCH.idFromName(name));
    try {
      if (url.pathname === "/fill") {
        const kind = url.searchParams.get("kind") === "turn" ? "turn" : "fact";
        return Response.json(await stub.fill(Number(url.searchParams.get("target")), kind));
      }
      if (url.pathname === "/recall") {
        const queries = benchQueries(Number(url.searchParams.get("queries") ?? "20"));
        const budget = Number(url.searchParams.get("budget") ?? "1000");
        const reps = Number(url.searchParams.get("reps") ?? "5");
        return Response.json(await stub.recallRounds(queries, budget, reps));
      }
      return Response.json({ error: "unknown path" }, { status: 404 });
    } catch (error) {
      return Response.json({ error: String(error) }, { status: 500 });
    }
  },
};
