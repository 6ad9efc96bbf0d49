/**
 * A memory object the store tests configure one by one: each test registers the options
 * of the object it names (by id) before its first call. Objects run in the tests' isolate,
 * so they read the same map.
 */

import type { VectorIndex } from "../../../src/memory/base/embedder";
import { MemoryObject, type MemoryObjectOptions } from "../../../src/memory/object/memory-object";

export const storeHarness = {
  options: new Map<string, MemoryObjectOptions>(),
  indexes: new Map<string, VectorIndex>(),
};

export class StoreTestMemory extends MemoryObject {
  protected override get memoryOptions(): MemoryObjectOptions {
    return storeHarness.options.get(this.ctx.id.toString()) ?? {};
  }

  protected override vectorIndex(): VectorIndex | null {
    return storeHarness.indexes.get(this.ctx.id.toString()) ?? null;
  }
}

/** A Vectorize index in memory: namespaces kept apart, cosine similarity, and every call recorded. */
export class FakeVectorIndex implements VectorIndex {
  readonly vectors = new Map<string, { values: number[]; namespace: string }>();
  readonly calls: string[] = [];

  async upsert(
    vectors: Array<{ id: string; values: number[] | Float32Array; namespace?: string }>,
  ) {
    this.calls.push(`upsert ${vectors.length}`);
    for (const v of vectors) {
      this.vectors.set(v.id, { values: [...v.values], namespace: v.namespace ?? "" });
    }
    return { ids: vectors.map((v) => v.id), count: vectors.length };
  }

  async query(vector: number[] | Float32Array, options: { topK: number; namespace?: string }) {
    this.calls.push(`query ${options.topK}`);
    const q = [...vector];
    const matches = [...this.vectors.entries()]
      .filter(([, v]) => v.namespace === (options.namespace ?? ""))
      .map(([id, v]) => ({ id, score: cos(q, v.values) }))
      .sort((a, b) => b.score - a.score)
      .slice(0, options.topK);
    return { matches, count: matches.length };
  }

  async deleteByIds(ids: string[]) {
    this.calls.push(`delete ${ids.length}`);
    for (const id of ids) this.vectors.delete(id);
    return { ids, count: ids.length };
  }
}

function cos(a: number[], b: number[]): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += (a[i] ?? 0) * (b[i] ?? 0);
    na += (a[i] ?? 0) ** 2;
    nb += (b[i] ?? 0) ** 2;
  }
  return na && nb ? dot / Math.sqrt(na * nb) : 0;
}
