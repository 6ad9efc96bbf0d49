import type { Item } from "../../history/items";
import type { WindowPolicy } from "../../history/window-reader";
import type { Model, ModelRequest } from "../../providers/base/types";
import { logEvent } from "../../telemetry/log";
import { type ContextWindowSettings, DEFAULT_RESERVED_OUTPUT } from "../context-window-option";
import type { Agent } from "../definition";
import type { RunContext } from "../run-context";

/**
 * The history budget of one call: what the model's window leaves once the answer, the
 * system prompt and the tool schemas (estimated at four characters a token) have theirs.
 */
export function historyBudget(
  model: Model,
  request: Pick<ModelRequest, "system" | "tools" | "maxTokens">,
  settings: ContextWindowSettings,
  /** Tokens the system prompt will grow by (a memory section not yet recalled). */
  reservedTokens = 0,
): number {
  if (settings.maxTokens !== null) return settings.maxTokens;
  const window = model.capabilities.contextWindow ?? settings.fallbackContextWindow;
  const output =
    settings.reserveOutputTokens ??
    request.maxTokens ??
    Math.min(model.capabilities.maxOutputTokens ?? DEFAULT_RESERVED_OUTPUT, Math.floor(window / 4));
  const fixed =
    Math.ceil((request.system?.length ?? 0) / 4) +
    Math.ceil(JSON.stringify(request.tools ?? []).length / 4) +
    reservedTokens;
  return Math.max(0, window - output - fixed);
}

/** The window policy of an agent's model calls: one policy for every call of a turn. */
export function windowPolicy<Env>(
  agent: Agent<Env>,
  model: Model,
  request: Pick<ModelRequest, "system" | "tools" | "maxTokens">,
  signal: AbortSignal,
  reservedTokens = 0,
): WindowPolicy {
  const settings = agent.contextWindow;
  return {
    maxTokens: historyBudget(model, request, settings, reservedTokens),
    ...(settings.maxItems === null ? {} : { maxItems: settings.maxItems }),
    keepRecentTurns: settings.keepRecentTurns,
    summarizer: settings.summarize ? agent.summarizer : null,
    summaryMaxTokens: settings.summaryMaxTokens,
    pageSize: settings.pageSize,
    signal,
  };
}

/** The items a model turn sends: the window of the context's conversation. */
export async function turnWindow<Env>(
  ctx: RunContext<Env>,
  agent: Agent<Env>,
  model: Model,
  request: Pick<ModelRequest, "system" | "tools" | "maxTokens">,
  signal: AbortSignal,
  /** Tokens the system prompt will grow by before the call (see `historyBudget`). */
  reservedTokens = 0,
): Promise<Item[]> {
  const window = await ctx.conversationWindow(
    windowPolicy(agent, model, request, signal, reservedTokens),
  );
  if (window.summaryError !== undefined) {
    // The turn goes on truncated; the operator needs to know their summarizer fails.
    logEvent("error", "edgelink: summarizing the conversation failed", {
      taskId: ctx.taskId,
      contextId: ctx.contextId,
      error: window.summaryError,
    });
  }
  return window.items;
}
