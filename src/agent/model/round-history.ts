import type { Item } from "../../history/items";
import { estimateTokens } from "../../history/tokens";
import type { WindowPolicy } from "../../history/window-reader";
import { logEvent } from "../../telemetry/log";
import type { RunContext } from "../run-context";

/**
 * The window of a turn's next model call after a tool round (the history window, applied within a turn), or
 * null when the request as it stands still fits the budget (nothing is read then).
 * Over budget, the window is read again under the policy of the turn's start: the
 * running summary and pinned instructions kept, the older part summarized when a
 * summarizer is configured, then the oldest items (earlier rounds of this turn included)
 * left out, a call never without its output. The turn's user message and the round just
 * ended are always sent; when they alone do not fit, the round's tool outputs are cut
 * with a marker. The stored history keeps everything; only the request is fitted.
 * @example
 * const fitted = await roundWindow(ctx, items, recorded, windowPolicy(agent, model, settings, signal));
 */
export async function roundWindow<Env>(
  ctx: RunContext<Env>,
  items: readonly Item[],
  round: readonly Item[],
  policy: WindowPolicy,
): Promise<Item[] | null> {
  const overItems = policy.maxItems !== undefined && items.length > policy.maxItems;
  if (!overItems && estimateTokens(items) <= policy.maxTokens) return null;
  // The turn's question is kept by the context itself (every window of a run keeps it).
  const keep = new Set(round.map((item) => item.id));
  const window = await ctx.conversationWindow({ ...policy, keep });
  if (window.summaryError !== undefined) {
    logEvent("error", "edgelink: summarizing the conversation failed", {
      taskId: ctx.taskId,
      contextId: ctx.contextId,
      error: window.summaryError,
    });
  }
  return window.items;
}
