import * as z from "zod";
import { JsonObject } from "../protocol/json";
import { type Item, isInstruction, isStructural, isUserMessage } from "./items";
import {
  applySummary,
  DEFAULT_SUMMARY_MAX_TOKENS,
  type ItemHost,
  planSummary,
  runSummarizer,
  SUMMARY_LABEL,
  type Summarizer,
  summaryMessage,
} from "./summarize";
import { estimateItemTokens, estimateTokens } from "./tokens";
import type { Partition } from "./truncate";

/**
 * How a compaction shortens the history.
 * @example
 * CompactionStrategy.parse("tokens");
 */
export const CompactionStrategy = z.enum(["recent", "tokens", "summary"]);
export type CompactionStrategy = z.infer<typeof CompactionStrategy>;

/**
 * A request to compact a conversation. A control call, not a conversation item: it
 * is never stored in the history nor shown to a model. Parsing rejects bad values
 * before anything changes.
 * @example
 * CompactionRequest.parse({}); // { strategy: "recent", maxMessages: 20, maxTokens: 4000, ... }
 */
export const CompactionRequest = z.object({
  strategy: CompactionStrategy.default("recent"),
  /** "recent": items kept, leading instruction included. Below 2 nothing but it could stay. */
  maxMessages: z.int().min(2).default(20),
  /** "tokens": estimated-token budget. */
  maxTokens: z.int().min(1).default(4000),
  /** "tokens" and "summary": newest non-instruction items always kept. */
  preserveRecent: z.int().min(0).default(6),
  /** "summary": length budget handed to the summarizer. */
  summaryMaxTokens: z.int().min(1).default(DEFAULT_SUMMARY_MAX_TOKENS),
  sessionId: z.string().optional(),
  metadata: JsonObject.optional(),
});
export type CompactionRequest = z.output<typeof CompactionRequest>;
export type CompactionRequestInput = z.input<typeof CompactionRequest>;

/**
 * What a compaction did.
 * @example
 * const { removed, afterTokens } = await conversation.compact({ strategy: "tokens" });
 */
export interface CompactionResult {
  strategy: CompactionStrategy;
  beforeMessages: number;
  afterMessages: number;
  /** Items taken out; a summary that replaced them is not subtracted. */
  removed: number;
  beforeTokens: number;
  afterTokens: number;
  summaryCreated: boolean;
}

/**
 * Where compaction may cut: between whole user turns only, or (for `maxMessages` alone) anywhere.
 * @example
 * conversation.keepRecent(10, { boundary: "item" });
 */
export type CutBoundary = "turn" | "item";

/**
 * Splits items into kept and removed, then also removes kept tool outputs whose call was
 * removed: a result without its call is rejected by providers. Cutting at user-turn
 * boundaries already keeps pairs together; this catches outputs that arrived a turn late.
 */
function partition(items: readonly Item[], removed: boolean[]): Partition {
  const removedCalls = new Set<string>();
  items.forEach((item, i) => {
    if (removed[i] && item.type === "function_call") removedCalls.add(item.callId);
  });
  const keptCalls = new Set<string>();
  const result: Partition = { kept: [], removed: [] };
  items.forEach((item, i) => {
    if (item.type === "function_call" && !removed[i]) keptCalls.add(item.callId);
    const stranded =
      item.type === "function_call_output" &&
      removedCalls.has(item.callId) &&
      !keptCalls.has(item.callId);
    (removed[i] || stranded ? result.removed : result.kept).push(item);
  });
  return result;
}

/**
 * The smallest allowed cut keeping at most `max` items: the head (`start` items), every
 * handoff and config update, and everything from the cut on. keptAt(cut) only shrinks as
 * the cut moves later, so the first cut that fits is the one keeping most.
 */
function recentCut(
  items: readonly Item[],
  max: number,
  start: number,
  boundary: CutBoundary,
): boolean[] {
  const n = items.length;
  const removed: boolean[] = new Array(n).fill(false);
  let pinnedBefore = 0;
  let cut = -1;
  let lastAllowed = start;
  for (let c = start; c <= n; c++) {
    const allowed =
      boundary === "item" || c === start || (c < n && isUserMessage(items[c] as Item));
    if (allowed) {
      lastAllowed = c;
      if (start + pinnedBefore + (n - c) <= max) {
        cut = c;
        break;
      }
    }
    if (c < n && isStructural(items[c] as Item)) pinnedBefore++;
  }
  // Nothing fits: at turn boundaries keep the newest turn whole rather than cut into it.
  if (cut < 0) cut = lastAllowed;
  for (let i = start; i < cut; i++) if (!isStructural(items[i] as Item)) removed[i] = true;
  return removed;
}

/**
 * Keeps the first item plus the newest `maxMessages - 1`, by default moving the cut
 * forward to the next user-turn boundary (decision 4) so no turn is split; with
 * `boundary: "item"` it cuts exactly there. Handoffs and config updates are kept. Either
 * way no tool output is kept without its call.
 * @example
 * const { kept } = keepRecentItems(items, 10);
 */
export function keepRecentItems(
  items: readonly Item[],
  maxMessages: number,
  options: { boundary?: CutBoundary } = {},
): Partition {
  if (!Number.isInteger(maxMessages) || maxMessages < 2) {
    throw new RangeError(`keepRecent: maxMessages must be an integer >= 2, got ${maxMessages}`);
  }
  const start = items.length > 0 ? 1 : 0;
  return partition(items, recentCut(items, maxMessages, start, options.boundary ?? "turn"));
}

/**
 * Start of the protected tail: the `preserveRecent` newest non-instruction, non-structural
 * items, widened back to the start of their user turn.
 */
function protectedTailStart(items: readonly Item[], preserveRecent: number): number {
  if (preserveRecent === 0) return items.length;
  let seen = 0;
  let at = -1;
  for (let i = items.length - 1; i >= 0; i--) {
    const item = items[i] as Item;
    if (!isInstruction(item) && !isStructural(item) && ++seen === preserveRecent) {
      at = i;
      break;
    }
  }
  if (at < 0) return 0;
  for (let i = at; i >= 0; i--) if (isUserMessage(items[i] as Item)) return i;
  return 0;
}

/**
 * Instructions, structural items and the protected tail stay; older turns are added
 * back newest first while they fit.
 */
function tokensCut(items: readonly Item[], maxTokens: number, preserveRecent: number): boolean[] {
  const n = items.length;
  const droppable = items.map((item) => !isInstruction(item) && !isStructural(item));
  const tokens = items.map(estimateItemTokens);
  let cut = protectedTailStart(items, preserveRecent);
  let total = 0;
  items.forEach((_, i) => {
    if (!droppable[i] || i >= cut) total += tokens[i] as number;
  });
  // Walk whole turns backwards from the protected tail; stop at the first that does not fit.
  let segmentTokens = 0;
  for (let i = cut - 1; i >= 0; i--) {
    if (droppable[i]) segmentTokens += tokens[i] as number;
    if (i === 0 || isUserMessage(items[i] as Item)) {
      if (total + segmentTokens > maxTokens) break;
      total += segmentTokens;
      segmentTokens = 0;
      cut = i;
    }
  }
  const removed: boolean[] = new Array(n).fill(false);
  for (let i = 0; i < cut; i++) removed[i] = droppable[i] as boolean;
  return removed;
}

/**
 * The synchronous strategies: "recent" keeps a leading system/developer message, every
 * handoff and config update, and the newest items starting at a user turn, at most
 * `maxMessages` in all unless the newest turn alone is longer; "tokens" never drops
 * instructions, handoffs, config updates or the protected tail.
 */
export function compactItems(items: readonly Item[], request: CompactionRequest): Partition {
  if (request.strategy === "recent") {
    const start = items[0] && isInstruction(items[0]) ? 1 : 0;
    return partition(items, recentCut(items, request.maxMessages, start, "turn"));
  }
  if (request.strategy === "tokens") {
    return partition(items, tokensCut(items, request.maxTokens, request.preserveRecent));
  }
  throw new Error(`compactItems: strategy "${request.strategy}" needs a summarizer`);
}

/**
 * Runs a compaction request against a conversation. "summary" folds the
 * items before the protected tail into one summary message with one summarizer call,
 * keeping instructions, earlier summaries, handoffs and config updates; a summarizer
 * error, an abort or an empty summary leave the conversation unchanged (errors rethrown).
 */
export async function compactHost(
  host: ItemHost,
  input: CompactionRequestInput,
  options: { summarizer?: Summarizer; signal?: AbortSignal } = {},
): Promise<CompactionResult> {
  const request = CompactionRequest.parse(input);
  if (request.strategy === "summary" && !options.summarizer) {
    throw new Error('compact: the "summary" strategy needs a summarizer');
  }
  const before = host.items;
  const result: CompactionResult = {
    strategy: request.strategy,
    beforeMessages: before.length,
    afterMessages: before.length,
    removed: 0,
    beforeTokens: estimateTokens(before),
    afterTokens: 0,
    summaryCreated: false,
  };
  if (request.strategy !== "summary") {
    const { kept, removed } = compactItems(before, request);
    if (removed.length > 0) host.replaceItems(kept);
    result.removed = removed.length;
  } else {
    const plan = planSummary(before, protectedTailStart(before, request.preserveRecent));
    if (plan) {
      const text = await runSummarizer(
        options.summarizer as Summarizer,
        plan.transcript,
        request.summaryMaxTokens,
        options.signal,
      );
      if (text) {
        const summary = summaryMessage(SUMMARY_LABEL, text, { createdAt: plan.createdAt });
        const current = host.items;
        result.beforeMessages = current.length;
        result.beforeTokens = estimateTokens(current);
        const next = applySummary(current, plan, summary);
        host.replaceItems(next);
        result.removed = current.length + 1 - next.length;
        result.summaryCreated = true;
      }
    }
  }
  result.afterMessages = host.items.length;
  result.afterTokens = estimateTokens(host.items);
  return result;
}
