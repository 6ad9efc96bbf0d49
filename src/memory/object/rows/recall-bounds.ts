/**
 * How much recall reads and answers, and the channels a query sees: shared by the memory
 * object's readers (facts and the bundle in ./memory-reader.ts, past turns in
 * ./memory-turn-reader.ts) and its vector search.
 */
import { GLOBAL_CHANNEL } from "../../../protocol/memory";

/** Facts the full-text index proposes for one query, best first. */
export const TEXT_CANDIDATES = 50;
/**
 * Text matches read to find those candidates: the newest this many facts that match (so
 * recall costs the same however large the memory), superseded facts and other channels'
 * among them dropped, the rest ranked by bm25.
 */
export const TEXT_SCAN = 100;
/** The newest facts also considered, so a query sharing no word still recalls the user's context. */
export const RECENT_CANDIDATES = 20;
/** Facts the vector index proposes for one query. */
export const VECTOR_CANDIDATES = 20;
/** Most entities, active goals and strategies in one bundle. */
export const BUNDLE_ENTITIES = 10;
export const BUNDLE_GOALS = 10;
export const BUNDLE_STRATEGIES = 3;
/** Most past turns in one bundle, and the candidates ranked to choose them. */
export const BUNDLE_TURNS = 5;
export const TURN_CANDIDATES = 20;
/**
 * Least cosine similarity of a turn found by vectors alone: a vector search answers its
 * nearest whatever they are, and an unrelated turn quoted back is noise in the prompt.
 */
export const MIN_TURN_SIMILARITY = 0.5;

/** A fact's or turn's similarity to the query, from the vector search (by id). */
export type VectorHits = Map<string, number>;

/** Vector hits of one kind (by the id's prefix: `mf_` facts, `mt_` turns). */
export function hitsOf(hits: VectorHits, prefix: "mf_" | "mt_"): VectorHits {
  const out: VectorHits = new Map();
  for (const [id, score] of hits) if (id.startsWith(prefix)) out.set(id, score);
  return out;
}

/** The channels a query sees as a JSON array, or null for all of them. */
export type Channels = string | null;

/** Matches a row `f` in the channels bound as parameter `n` (null: all). */
export const inChannels = (n: number) =>
  `(?${n} IS NULL OR f.channel IN (SELECT value FROM json_each(?${n})))`;

/** The channels a query sees: its own and the global one. */
export function channelsOf(channel: string | undefined): string {
  return JSON.stringify([...new Set([channel ?? GLOBAL_CHANNEL, GLOBAL_CHANNEL])]);
}
