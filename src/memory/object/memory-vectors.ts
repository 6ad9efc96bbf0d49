import type { MemoryOp } from "../../protocol/memory";
import { logEvent } from "../../telemetry/log";
import { claimHash } from "../base/claim-hash";
import { type Embedder, type VectorIndex, vectorBlob } from "../base/embedder";
import type { Prepared } from "./memory-writer";
import { VECTOR_CANDIDATES, type VectorHits } from "./rows/recall-bounds";

/**
 * The memory object's asynchronous work around its SQLite transactions: hashing claims,
 * embedding texts, asking and updating an external vector index.
 */

/** Vector ids per call to the external index. */
export const VECTOR_BATCH = 100;

/** Claim hashes, and vectors when an embedder is configured (a failing one is skipped). */
export async function prepareOps(
  ops: readonly MemoryOp[],
  embedder: Embedder | undefined,
): Promise<Prepared> {
  const prepared: Prepared = { hashes: new Map(), vectors: new Map() };
  // What gets a vector: each fact's claim and each turn's content.
  const claims: Array<[number, string]> = [];
  for (const [i, op] of ops.entries()) {
    if (op.op === "add_fact" || op.op === "supersede_fact") {
      prepared.hashes.set(i, await claimHash(op.claim));
      claims.push([i, op.claim]);
    } else if (op.op === "add_turn") claims.push([i, op.content]);
  }
  if (embedder && claims.length) {
    try {
      const vectors = await embedder.embed(claims.map(([, claim]) => claim));
      claims.forEach(([i], n) => {
        const vector = vectors[n];
        if (vector?.length === embedder.dimensions) prepared.vectors.set(i, vectorBlob(vector));
      });
    } catch (error) {
      logEvent("warn", "edgelink: memory embedder failed; items stored without vectors", {
        error,
      });
    }
  }
  return prepared;
}

/** Where a search looks: the stored vectors (`scan`), else the external index. */
export interface VectorSearch {
  scan: ((vector: Float32Array) => VectorHits) | null;
  index: VectorIndex | null;
  namespace: string;
}

/** Each text's closest facts by vector; empty when the embedder or the index fails. */
export async function searchVectors(
  texts: string[],
  embedder: Embedder,
  where: VectorSearch,
): Promise<VectorHits[]> {
  let vectors: Float32Array[];
  try {
    vectors = await embedder.embed(texts);
  } catch (error) {
    logEvent("warn", "edgelink: memory embedder failed; recall by text alone", { error });
    return texts.map(() => new Map());
  }
  return Promise.all(
    vectors.map(async (vector) => {
      if (vector.length !== embedder.dimensions) return new Map();
      if (where.scan) return where.scan(vector);
      // Past the local size without an index: recall by text alone.
      if (!where.index) return new Map();
      try {
        const answer = await where.index.query(vector, {
          topK: VECTOR_CANDIDATES,
          namespace: where.namespace,
        });
        return new Map(answer.matches.map((m) => [m.id, m.score]));
      } catch (error) {
        logEvent("warn", "edgelink: memory vector index query failed; recall by text alone", {
          error,
        });
        return new Map();
      }
    }),
  );
}

/** Mirrors new and dropped vectors into the external index, when there is one. */
export async function mirrorVectors(
  index: VectorIndex | null,
  namespace: string,
  upsert: Array<{ id: string; index: number }>,
  remove: string[],
  prepared: Prepared | null,
): Promise<void> {
  if (!index || (upsert.length === 0 && remove.length === 0)) return;
  try {
    for (let i = 0; i < upsert.length; i += VECTOR_BATCH) {
      await index.upsert(
        upsert.slice(i, i + VECTOR_BATCH).map(({ id, index: n }) => ({
          id,
          values: new Float32Array(prepared?.vectors.get(n) as ArrayBuffer),
          namespace,
        })),
      );
    }
    for (let i = 0; i < remove.length; i += VECTOR_BATCH) {
      await index.deleteByIds(remove.slice(i, i + VECTOR_BATCH));
    }
  } catch (error) {
    // The rows are the truth: a vector missing from the index only loses a candidate,
    // and a stale one is dropped at recall (only live facts are read back).
    logEvent("warn", "edgelink: memory vector index update failed", { error });
  }
}
