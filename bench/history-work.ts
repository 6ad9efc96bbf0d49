/**
 * The CPU part of the history benchmark, shared by the Durable Object (history-worker.ts,
 * on workerd) and the Node child (history-node.ts), so both runtimes run the same code
 * on the same items: Edgelink's truncation and "tokens" compaction, and the reference's
 * O(n^2) truncation (naive-truncate.ts), each cutting a long history to a context window.
 */
import { CompactionRequest, compactItems } from "../src/history/compaction";
import type { Item } from "../src/history/items";
import { estimateTokens } from "../src/history/tokens";
import { truncateItems } from "../src/history/truncate";
import { makeItems } from "./history-items";
import { naiveTruncate } from "./naive-truncate";

/** The budget both truncations cut to: a typical model context window. */
export const MAX_TOKENS = 8000;
/** The "tokens" compaction request (E7): same budget, the 6 newest items always kept. */
export const COMPACTION = { strategy: "tokens", maxTokens: MAX_TOKENS, preserveRecent: 6 } as const;

/** "scan" is a reference, not an algorithm: one pass reading each item's type. */
export type Kind = "truncate" | "compact" | "naive" | "scan";

let sink = 0;

const request = CompactionRequest.parse(COMPACTION);

/** One run of `kind` over `items`; returns the kept items. */
export function runKind(kind: Kind, items: readonly Item[]): Item[] {
  switch (kind) {
    case "truncate":
      return truncateItems(items, { maxTokens: MAX_TOKENS }).kept;
    case "compact":
      return compactItems(items, request).kept;
    case "naive":
      return naiveTruncate(items, { maxTokens: MAX_TOKENS });
    case "scan":
      for (const item of items) if (item.type === "message") sink++;
      return sink < 0 ? [...items] : [];
  }
}

const cache = new Map<number, Item[]>();
/**
 * The benchmark's items of length n, built once per runtime (history-items.ts) and passed
 * through JSON once, so they are objects and flat strings as HistoryStore.read gives them.
 */
export function itemsOf(n: number): Item[] {
  let items = cache.get(n);
  if (!items) {
    items = JSON.parse(JSON.stringify(makeItems(n))) as Item[];
    cache.set(n, items);
  }
  return items;
}

/** Forgets the built lists. */
export function clearItems(): void {
  cache.clear();
}

export interface PlanEntry {
  kind: Kind;
  n: number;
  /** Measured samples. */
  reps: number;
  /** Runs per sample: workerd's clock has 1 ms resolution, so short runs are timed in batches. */
  batch: number;
  /** Unmeasured runs first. */
  warmup: number;
}

export interface Timing {
  kind: Kind;
  n: number;
  /** Milliseconds per run of each sample. */
  runs: number[];
  median: number;
  min: number;
  kept: number;
  keptTokens: number;
  /** FNV-1a of the kept ids, to compare two algorithms' results. */
  keptHash: string;
  jsonBytesPerItem: number;
}

function fnv(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return (h >>> 0).toString(16);
}

/**
 * Runs the plan in `rounds` rounds, each taking every entry in turn with its share of the
 * samples, so a burst of load from elsewhere on the machine spreads over all sizes
 * instead of falsifying one; a single-sample entry runs in the last round only.
 */
export function runPlan(plan: readonly PlanEntry[], rounds: number): Timing[] {
  for (const { n } of plan) itemsOf(n);
  const samples = plan.map(() => [] as number[]);
  const kept = plan.map(() => [] as Item[]);
  plan.forEach((entry, e) => {
    for (let i = 0; i < entry.warmup; i++) kept[e] = runKind(entry.kind, itemsOf(entry.n));
  });
  for (let round = 0; round < rounds; round++) {
    plan.forEach((entry, e) => {
      const share =
        Math.floor(entry.reps / rounds) + (round >= rounds - (entry.reps % rounds) ? 1 : 0);
      const items = itemsOf(entry.n);
      for (let r = 0; r < share; r++) {
        const start = performance.now();
        for (let b = 0; b < entry.batch; b++) kept[e] = runKind(entry.kind, items);
        (samples[e] as number[]).push((performance.now() - start) / entry.batch);
      }
    });
  }
  return plan.map((entry, e) => {
    const runs = samples[e] as number[];
    const sorted = [...runs].sort((a, b) => a - b);
    const items = itemsOf(entry.n);
    const list = kept[e] as Item[];
    let bytes = 0;
    const sampled = Math.min(items.length, 2000);
    for (let i = 0; i < sampled; i++) bytes += JSON.stringify(items[i]).length;
    return {
      kind: entry.kind,
      n: entry.n,
      runs,
      median: sorted[Math.floor(sorted.length / 2)] as number,
      min: sorted[0] as number,
      kept: list.length,
      keptTokens: estimateTokens(list),
      keptHash: fnv(list.map((item) => item.id).join(",")),
      jsonBytesPerItem: bytes / sampled,
    };
  });
}
