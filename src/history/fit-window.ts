import type { Conversation } from "./conversation";
import type { Summarizer } from "./summarize";

/**
 * How much history a model call may carry, and how to get there.
 * @example
 * const policy: ContextWindowPolicy = { maxTokens: 8000, keepRecentTurns: 4, summarizer };
 */
export interface ContextWindowPolicy {
  /** Estimated-token budget. */
  maxTokens: number;
  /** Item budget; absent is no limit. */
  maxItems?: number;
  /** User turns a summary keeps verbatim (default 3). */
  keepRecentTurns?: number;
  /** Without one, the policy only truncates. */
  summarizer?: Summarizer;
  /** Length budget handed to the summarizer (default 512). */
  summaryMaxTokens?: number;
  signal?: AbortSignal;
}

/**
 * What fitting a conversation into its window did.
 * @example
 * const { summarized, truncated } = await conversation.fitContextWindow(policy);
 */
export interface ContextWindowResult {
  summarized: boolean;
  /** Why summarizing failed, when it was tried and threw; truncation still ran. */
  summaryError?: unknown;
  /** Items removed by truncation. */
  truncated: number;
  beforeItems: number;
  afterItems: number;
  beforeTokens: number;
  afterTokens: number;
}

/**
 * Summarize only when the conversation is over budget and has more than
 * `keepRecentTurns + 1` user turns (so there is an older part worth folding), then
 * truncate to the budget. A failing summarizer costs the summary, not the fit: the error
 * is reported and truncation still runs. An abort is rethrown with nothing changed.
 */
export async function fitContextWindow(
  conversation: Conversation,
  policy: ContextWindowPolicy,
): Promise<ContextWindowResult> {
  const keep = policy.keepRecentTurns ?? 3;
  // Checked up front: a bad value must not surface after a summary was already written.
  for (const [name, value, min] of [
    ["maxTokens", policy.maxTokens, 0],
    ["maxItems", policy.maxItems ?? 0, 0],
    ["keepRecentTurns", keep, 1],
  ] as const) {
    if (!Number.isInteger(value) || value < min) {
      throw new RangeError(`fitContextWindow: ${name} must be an integer >= ${min}, got ${value}`);
    }
  }
  const limits = { maxTokens: policy.maxTokens, maxItems: policy.maxItems ?? null };
  const result: ContextWindowResult = {
    summarized: false,
    truncated: 0,
    beforeItems: conversation.length,
    afterItems: 0,
    beforeTokens: conversation.estimatedTokens(),
    afterTokens: 0,
  };
  const over =
    result.beforeTokens > policy.maxTokens ||
    (policy.maxItems !== undefined && result.beforeItems > policy.maxItems);
  if (policy.summarizer && over && conversation.turnCount() > keep + 1) {
    try {
      const outcome = await conversation.summarize(policy.summarizer, {
        keepRecentTurns: keep,
        ...(policy.summaryMaxTokens === undefined ? {} : { maxTokens: policy.summaryMaxTokens }),
        ...(policy.signal ? { signal: policy.signal } : {}),
      });
      result.summarized = outcome.summary !== null;
    } catch (error) {
      if (policy.signal?.aborted) throw error;
      result.summaryError = error;
    }
  }
  result.truncated = conversation.truncate(limits).length;
  result.afterItems = conversation.length;
  result.afterTokens = conversation.estimatedTokens();
  return result;
}
