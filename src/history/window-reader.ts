import { providerItems } from "./config";
import { type Item, isSummary, isUserMessage, type MessageItem } from "./items";
import { shortenOutputs } from "./shorten";
import {
  DEFAULT_SUMMARY_MAX_TOKENS,
  planSummary,
  recentTurnsStart,
  runSummarizer,
  SUMMARY_LABEL,
  type Summarizer,
  summaryMessage,
} from "./summarize";
import { estimateItemTokens, estimateTokens } from "./tokens";
import { truncateItems } from "./truncate";

/** An item with its position in the stored conversation. */
export interface PositionedItem {
  seq: number;
  item: Item;
}

/**
 * The running summary of a conversation: what the items up to `through` said, so a turn
 * reads only the items after it.
 */
export interface RunningSummary {
  /** Position of the newest item the summary stands for. */
  through: number;
  summary: MessageItem;
}

/**
 * Where a window is read from: a stored conversation that can be read back from its end
 * in pages (the context object's SQLite, or anything else that can).
 */
export interface WindowSource {
  /** The stored running summary, or null. */
  runningSummary(): RunningSummary | null;
  /** Items with positions strictly between `after` and `before` (null: no bound), newest first. */
  newest(after: number | null, before: number | null, limit: number): PositionedItem[];
  /**
   * Instruction messages (system, developer), config updates and summary messages before
   * `before`: the first one and the newest `limit`, oldest first. Instructions stay in
   * force however old, and a summary stands for what it replaced.
   */
  pinned(before: number, limit: number): PositionedItem[];
  /**
   * Stores `next` unless the running summary changed since `expected` was read (another
   * turn summarized meanwhile); true if stored.
   */
  saveRunningSummary(expected: RunningSummary | null, next: RunningSummary): boolean;
}

/**
 * How much history one model call carries, and how it gets there (over a stored
 * conversation).
 * @example
 * const policy: WindowPolicy = { maxTokens: 100_000, keepRecentTurns: 3, summarizer };
 */
export interface WindowPolicy {
  /** Estimated-token budget of the items sent: summary and pinned instructions included. */
  maxTokens: number;
  /** Item budget; absent is no limit. */
  maxItems?: number;
  /** User turns kept verbatim when the older part is summarized (default 3). */
  keepRecentTurns?: number;
  /** Without one the window is only truncated. */
  summarizer?: Summarizer | null;
  /** Length budget handed to the summarizer (default 512). */
  summaryMaxTokens?: number;
  /** Estimated tokens of older items one summary may fold in (default `maxTokens`). */
  foldMaxTokens?: number;
  /** Rows read per page, newest first (default 64). */
  pageSize?: number;
  /**
   * Ids of stored items the call must carry whatever the budget: a turn's user message
   * and its current tool round. They are read even past the budget (up to
   * `KEEP_SEEK_ROWS` more rows), never truncated, and when they alone do not fit, their
   * tool outputs are cut with a marker (`shortenOutputs`).
   */
  keep?: ReadonlySet<string>;
  signal?: AbortSignal;
}

/**
 * What a turn sends and how it got there.
 * @example
 * const { items, summarized, truncated } = await ctx.conversationWindow(policy);
 */
export interface ConversationWindow {
  /** The items for the model (handoffs and config updates resolved away). */
  items: Item[];
  /** A new running summary was written for this window. */
  summarized: boolean;
  /** Why summarizing failed, when it was tried and threw; truncation still ran. */
  summaryError?: unknown;
  /** Items read but left out by truncation. */
  truncated: number;
  /** Tool outputs among `keep` cut to fit the budget. */
  shortened: number;
  /** Older items dropped without being summarized (more than one summary may fold in). */
  unsummarized: boolean;
  /** Stored rows read to build the window. */
  rowsRead: number;
  /** Estimated tokens of `items`. */
  tokens: number;
}

/** Pinned instructions and config updates carried however old the conversation is. */
export const PINNED_LIMIT = 16;
const DEFAULT_PAGE = 64;
/** Rows read past the budget, at most, looking for the items a window must keep. */
export const KEEP_SEEK_ROWS = 1024;

function check(name: string, value: number, min: number): number {
  if (!Number.isInteger(value) || value < min) {
    throw new RangeError(`conversation window: ${name} must be an integer >= ${min}, got ${value}`);
  }
  return value;
}

/**
 * Reads the window a model call sends, never the whole conversation: the newest
 * items are read back from the end in pages until the budget is passed; the stored
 * running summary stands for everything before it. When the items after the summary do
 * not fit and a summarizer is given, the part older than the `keepRecentTurns` newest
 * user turns (at most `foldMaxTokens` of it, plus the previous summary) is summarized
 * into a new running summary, stored for later turns; then the window is truncated to
 * the budget (truncation's protections: instructions, the summary and the last user message stay, a call
 * and its output go together, no orphan is sent). The items in `policy.keep` are sent
 * whatever the budget, their tool outputs cut with a marker if they alone do not fit. A
 * failing summarizer costs the summary, not the turn; an abort is rethrown with nothing
 * stored.
 * @example
 * const window = await readWindow(source, { maxTokens: 8000, summarizer });
 */
export async function readWindow(
  source: WindowSource,
  policy: WindowPolicy,
): Promise<ConversationWindow> {
  const maxTokens = check("maxTokens", policy.maxTokens, 0);
  const maxItems =
    policy.maxItems === undefined ? undefined : check("maxItems", policy.maxItems, 0);
  const keep = check("keepRecentTurns", policy.keepRecentTurns ?? 3, 1);
  const pageSize = check("pageSize", policy.pageSize ?? DEFAULT_PAGE, 1);
  const summaryMaxTokens = check(
    "summaryMaxTokens",
    policy.summaryMaxTokens ?? DEFAULT_SUMMARY_MAX_TOKENS,
    1,
  );
  const foldMaxTokens = check("foldMaxTokens", policy.foldMaxTokens ?? maxTokens, 0);

  const running = source.runningSummary();
  const after = running?.through ?? null;
  let rowsRead = 0;
  const page = (before: number | null) => {
    const rows = source.newest(after, before, pageSize);
    rowsRead += rows.length;
    return rows;
  };

  // Newest first, a page at a time, until the budget is passed (and every kept item is
  // read) or nothing is left.
  const newestFirst: PositionedItem[] = [];
  let tokens = running ? estimateItemTokens(running.summary) : 0;
  const over = () =>
    tokens > maxTokens || (maxItems !== undefined && newestFirst.length > maxItems);
  const mustSend = policy.keep ?? new Set<string>();
  let missing = mustSend.size;
  let seekUntil = Number.POSITIVE_INFINITY;
  let exhausted = false;
  while (!over() || (missing > 0 && rowsRead < seekUntil)) {
    if (over() && seekUntil === Number.POSITIVE_INFINITY) seekUntil = rowsRead + KEEP_SEEK_ROWS;
    const rows = page(newestFirst.at(-1)?.seq ?? null);
    for (const row of rows) {
      tokens += estimateItemTokens(row.item);
      if (mustSend.has(row.item.id)) missing--;
    }
    newestFirst.push(...rows);
    if (rows.length < pageSize) {
      exhausted = true;
      break;
    }
  }
  const read = newestFirst.reverse();
  const result: ConversationWindow = {
    items: [],
    summarized: false,
    truncated: 0,
    shortened: 0,
    unsummarized: false,
    rowsRead: 0,
    tokens: 0,
  };

  let summary = running?.summary ?? null;
  let through = running?.through ?? null;
  let recent = read.map((row) => row.item);
  const tail = recentTurnsStart(recent, keep);
  if (policy.summarizer && over() && tail >= 0 && (tail > 0 || !exhausted)) {
    // The older part: what was read before the kept turns, then further back while it fits.
    const older: PositionedItem[] = [];
    let foldTokens = estimateTokens(read.slice(0, tail).map((row) => row.item));
    let reachedSummary = exhausted;
    while (!reachedSummary && foldTokens <= foldMaxTokens) {
      const rows = page(older.at(-1)?.seq ?? read[0]?.seq ?? null);
      let taken = 0;
      for (const row of rows) {
        if (foldTokens > foldMaxTokens) break;
        foldTokens += estimateItemTokens(row.item);
        older.push(row);
        taken++;
      }
      reachedSummary = rows.length < pageSize && taken === rows.length;
    }
    const folded = [...older.reverse(), ...read.slice(0, tail)];
    const olderTurns = folded.filter((row) => isUserMessage(row.item)).length + (running ? 1 : 0);
    const newest = folded.at(-1);
    if (newest && olderTurns > 1) {
      try {
        const next = await summarizeFold(
          policy.summarizer,
          running,
          folded,
          recent.slice(tail),
          summaryMaxTokens,
          policy.signal,
        );
        if (next) {
          const written: RunningSummary = { through: newest.seq, summary: next.summary };
          source.saveRunningSummary(running, written);
          through = newest.seq;
          summary = next.summary;
          recent = recent.slice(tail).filter((item) => !next.summarized.has(item.id));
          result.summarized = true;
          result.unsummarized = !reachedSummary;
        }
      } catch (error) {
        if (policy.signal?.aborted) throw error;
        result.summaryError = error;
      }
    }
  }

  // Instructions and config updates older than what is sent still apply.
  const sentFrom = result.summarized ? read[tail] : read[0];
  const found =
    result.summarized || running || !exhausted
      ? source.pinned(sentFrom?.seq ?? Number.POSITIVE_INFINITY, PINNED_LIMIT)
      : [];
  rowsRead += found.length;
  // A summary the running summary has folded in is not sent again.
  const pinned = found.filter(
    (row) => !(isSummary(row.item) && through !== null && row.seq <= through),
  );

  const window = [...pinned.map((row) => row.item), ...(summary ? [summary] : []), ...recent];
  const fitted = truncateItems(
    window,
    { maxTokens, ...(maxItems === undefined ? {} : { maxItems }) },
    mustSend,
  );
  const shortened = shortenOutputs(providerItems(fitted.kept), mustSend, maxTokens);
  result.items = shortened.items;
  result.shortened = shortened.shortened;
  result.truncated = fitted.removed.length;
  result.rowsRead = rowsRead;
  result.tokens = estimateTokens(result.items);
  return result;
}

/**
 * One summarizer call over the previous summary and the folded items (plus outputs in
 * the kept turns whose calls were folded, so no call loses its output); null for an empty summary.
 */
async function summarizeFold(
  summarizer: Summarizer,
  running: RunningSummary | null,
  folded: readonly PositionedItem[],
  kept: readonly Item[],
  maxTokens: number,
  signal: AbortSignal | undefined,
): Promise<{ summary: MessageItem; summarized: Set<string> } | null> {
  // Earlier summaries (the running one, a compaction's) are read as what the assistant
  // said, so they are folded in: nothing before `through` is sent again but instructions.
  const unflag = (item: Item): Item =>
    isSummary(item) ? { ...item, extra: { ...item.extra, summary: false } } : item;
  const previous: Item[] = running ? [unflag(running.summary)] : [];
  const items = [...previous, ...folded.map((row) => unflag(row.item)), ...kept];
  const plan = planSummary(items, previous.length + folded.length);
  if (!plan) return null;
  const text = await runSummarizer(summarizer, plan.transcript, maxTokens, signal);
  if (!text) return null;
  return {
    summary: summaryMessage(SUMMARY_LABEL, text, { createdAt: plan.createdAt }),
    summarized: plan.summarized,
  };
}
