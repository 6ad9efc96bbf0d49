import { newId, nowIso } from "../protocol/json";
import {
  ID_PREFIX,
  type Item,
  isInstruction,
  isStructural,
  isSummary,
  isUserMessage,
  type MessageItem,
} from "./items";

/**
 * Writes a summary of a transcript. History code never talks to a provider itself: pass
 * a function that calls your model. Return "" when there is nothing worth keeping; throw
 * on failure. Either way the conversation is left unchanged.
 * @example
 * const summarizer: Summarizer = async (transcript, { maxTokens, signal }) =>
 *   (await callModel(`Summarize:\n${transcript}`, { maxTokens, signal })).text;
 */
export type Summarizer = (
  transcript: string,
  options: { maxTokens: number; signal?: AbortSignal },
) => Promise<string>;

/**
 * Default length budget handed to the summarizer (a compaction request's `summaryMaxTokens`).
 * @example
 * await conversation.summarize(summarizer, { maxTokens: DEFAULT_SUMMARY_MAX_TOKENS * 2 });
 */
export const DEFAULT_SUMMARY_MAX_TOKENS = 512;

/** Label in front of a conversation summary, so the model reads it as a recap. */
export const SUMMARY_LABEL = "Summary of the earlier conversation:";
/** Label in front of a sub-agent's summary merged back. */
export const SUB_AGENT_SUMMARY_LABEL = "Summary of a sub-agent's work:";

/**
 * Items that summarizing keeps instead of folding into the summary: instructions,
 * earlier summaries, handoffs and config updates.
 */
export function keepsOnSummary(item: Item): boolean {
  return isStructural(item) || isInstruction(item) || isSummary(item);
}

/**
 * Plain-text transcript of items for a summarizer: one line per message, call and
 * result; handoffs and config updates are left out (never shown to a model).
 * @example
 * renderTranscript(items); // "user: Hi\nassistant: Hello!"
 */
export function renderTranscript(items: readonly Item[]): string {
  const lines: string[] = [];
  for (const item of items) {
    switch (item.type) {
      case "message": {
        const text = item.content
          .map((part) => (typeof part === "string" ? part : "[image]"))
          .join(" ")
          .trim();
        if (text) lines.push(`${item.role}: ${text}`);
        break;
      }
      case "function_call":
        lines.push(`assistant called ${item.name}(${item.arguments})`);
        break;
      case "function_call_output":
        lines.push(
          `${item.name || "tool"} ${item.isError ? "failed" : "returned"}: ${item.output}`,
        );
        break;
    }
  }
  return lines.join("\n");
}

/** A summary message (decision 3): assistant role, flagged with `extra.summary`. */
export function summaryMessage(
  label: string,
  text: string,
  options: { createdAt?: string; agentId?: string } = {},
): MessageItem {
  const message: MessageItem = {
    type: "message",
    id: newId(ID_PREFIX.message),
    createdAt: options.createdAt ?? nowIso(),
    role: "assistant",
    content: [`${label}\n${text}`],
    interrupted: false,
    extra: { summary: true },
  };
  if (options.agentId !== undefined) message.agentId = options.agentId;
  return message;
}

/** What folding the items before `cut` into one summary would do. */
export interface SummaryPlan {
  /** Ids of every item before the cut (kept or summarized). */
  head: Set<string>;
  /** Ids of the items the summary replaces (all before the cut, except late outputs). */
  summarized: Set<string>;
  transcript: string;
  /** The newest time in the head: the summary sorts where the items it replaces were. */
  createdAt: string;
}

/**
 * Plans a summary of `items[0..cut)` (plus late outputs of calls in it); null when
 * nothing there can be summarized.
 */
export function planSummary(items: readonly Item[], cut: number): SummaryPlan | null {
  const head = new Set<string>();
  const summarized: Item[] = [];
  let newest = Number.NEGATIVE_INFINITY;
  let createdAt = "";
  for (let i = 0; i < cut; i++) {
    const item = items[i] as Item;
    head.add(item.id);
    if (!keepsOnSummary(item)) summarized.push(item);
    const time = Date.parse(item.createdAt);
    if (time >= newest) {
      newest = time;
      createdAt = item.createdAt;
    }
  }
  if (summarized.length === 0) return null;
  // A result that arrived after the cut goes with its call, or it would be left orphaned.
  const summarizedCalls = new Set<string>();
  for (const item of summarized)
    if (item.type === "function_call") summarizedCalls.add(item.callId);
  const keptCalls = new Set<string>();
  for (let i = cut; i < items.length; i++) {
    const item = items[i] as Item;
    if (item.type === "function_call") keptCalls.add(item.callId);
    else if (
      item.type === "function_call_output" &&
      summarizedCalls.has(item.callId) &&
      !keptCalls.has(item.callId)
    ) {
      summarized.push(item);
    }
  }
  const transcript = renderTranscript(summarized);
  if (!transcript.trim()) return null;
  return { head, summarized: new Set(summarized.map((item) => item.id)), transcript, createdAt };
}

/**
 * Applies a plan to the items as they are now. The summarizer is awaited in between, so
 * items may have been added or removed meanwhile: the plan is applied by id (drop the
 * summarized items, put the summary before the first item that was not in the head), which
 * keeps anything added during the call.
 */
export function applySummary(
  current: readonly Item[],
  plan: SummaryPlan,
  summary: MessageItem,
): Item[] {
  const out: Item[] = [];
  let placed = false;
  for (const item of current) {
    if (plan.summarized.has(item.id)) continue;
    if (!placed && !plan.head.has(item.id)) {
      out.push(summary);
      placed = true;
    }
    out.push(item);
  }
  if (!placed) out.push(summary);
  return out;
}

/** Index of the user message that starts the `turns`-th newest user turn, or -1. */
export function recentTurnsStart(items: readonly Item[], turns: number): number {
  let seen = 0;
  for (let i = items.length - 1; i >= 0; i--) {
    if (isUserMessage(items[i] as Item) && ++seen === turns) return i;
  }
  return -1;
}

/** Calls the summarizer and returns its trimmed text; an aborted signal throws first. */
export async function runSummarizer(
  summarizer: Summarizer,
  transcript: string,
  maxTokens: number,
  signal: AbortSignal | undefined,
): Promise<string> {
  signal?.throwIfAborted();
  const text = await summarizer(transcript, signal ? { maxTokens, signal } : { maxTokens });
  signal?.throwIfAborted();
  if (typeof text !== "string") throw new TypeError("the summarizer must return a string");
  return text.trim();
}

/** Reads the live items and replaces them; a conversation implements it. */
export interface ItemHost {
  readonly items: readonly Item[];
  replaceItems(items: Item[]): void;
}

/**
 * Options of `summarize`.
 * @example
 * await conversation.summarize(summarizer, { keepRecentTurns: 2, signal });
 */
export interface SummarizeOptions {
  /** User turns kept verbatim (default 3, at least 1). */
  keepRecentTurns?: number;
  /** Length budget handed to the summarizer (default 512). */
  maxTokens?: number;
  signal?: AbortSignal;
}

/**
 * What `summarize` did; on every outcome but "summarized" nothing changed.
 * @example
 * const { outcome, summary } = await conversation.summarize(summarizer);
 */
export interface SummarizeResult {
  outcome: "summarized" | "too-few-turns" | "nothing-to-summarize" | "empty-summary";
  /** The summary message added, or null. */
  summary: MessageItem | null;
  /** Items the summary replaced. */
  removed: number;
}

/**
 * Folds everything before the `keepRecentTurns` newest user turns into one summary
 * message, keeping instructions, earlier summaries, handoffs and config updates in order.
 * One summarizer call; its error (or an abort) is rethrown with the items unchanged.
 */
export async function summarizeHost(
  host: ItemHost,
  summarizer: Summarizer,
  options: SummarizeOptions = {},
): Promise<SummarizeResult> {
  const keep = options.keepRecentTurns ?? 3;
  if (!Number.isInteger(keep) || keep < 1) {
    throw new RangeError(`summarize: keepRecentTurns must be an integer >= 1, got ${keep}`);
  }
  const maxTokens = options.maxTokens ?? DEFAULT_SUMMARY_MAX_TOKENS;
  if (!Number.isInteger(maxTokens) || maxTokens < 1) {
    throw new RangeError(`summarize: maxTokens must be a positive integer, got ${maxTokens}`);
  }
  const unchanged = (outcome: SummarizeResult["outcome"]): SummarizeResult => ({
    outcome,
    summary: null,
    removed: 0,
  });
  const items = host.items;
  const turns = items.reduce((count, item) => count + (isUserMessage(item) ? 1 : 0), 0);
  if (turns <= keep) return unchanged("too-few-turns");
  const plan = planSummary(items, recentTurnsStart(items, keep));
  if (!plan) return unchanged("nothing-to-summarize");
  const text = await runSummarizer(summarizer, plan.transcript, maxTokens, options.signal);
  if (!text) return unchanged("empty-summary");
  const summary = summaryMessage(SUMMARY_LABEL, text, { createdAt: plan.createdAt });
  const current = host.items;
  const next = applySummary(current, plan, summary);
  host.replaceItems(next);
  return { outcome: "summarized", summary, removed: current.length + 1 - next.length };
}

/**
 * Appends a flagged summary of another conversation's items, written by one
 * summarizer call. Nothing to summarize or an empty summary: no change, null.
 */
export async function mergeSummaryHost(
  host: ItemHost,
  theirs: readonly Item[],
  summarizer: Summarizer,
  options: { agentId?: string; maxTokens?: number; signal?: AbortSignal } = {},
): Promise<MessageItem | null> {
  const transcript = renderTranscript(theirs);
  if (!transcript.trim()) return null;
  const maxTokens = options.maxTokens ?? DEFAULT_SUMMARY_MAX_TOKENS;
  const text = await runSummarizer(summarizer, transcript, maxTokens, options.signal);
  if (!text) return null;
  const summary = summaryMessage(
    SUB_AGENT_SUMMARY_LABEL,
    text,
    options.agentId === undefined ? {} : { agentId: options.agentId },
  );
  host.replaceItems([...host.items, summary]);
  return summary;
}
