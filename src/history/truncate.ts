import { type Item, isInstruction, isStructural, isSummary, isUserMessage } from "./items";
import { estimateItemTokens } from "./tokens";

/**
 * Limits for `truncate`; an absent limit is no limit.
 * @example
 * conversation.truncate({ maxTokens: 8000 });
 */
export interface TruncateLimits {
  /** Keep at most this many items. */
  maxItems?: number | null;
  /** Keep the estimated tokens at or under this. */
  maxTokens?: number | null;
}

/** What a truncation kept and removed, both in conversation order. */
export interface Partition {
  kept: Item[];
  removed: Item[];
}

function checkLimit(name: string, value: number | null | undefined): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Number.isInteger(value) || value < 0) {
    throw new RangeError(`truncate: ${name} must be a non-negative integer, got ${value}`);
  }
  return value;
}

/**
 * Indexes of function calls still waiting for their output: no output with their call id
 * anywhere, and no message after them. Such a call is the model's turn in progress (the
 * tool is running), so removing it would orphan the output that is about to arrive.
 */
export function awaitingCallIndexes(items: readonly Item[]): Set<number> {
  const answered = new Set<string>();
  let lastMessage = -1;
  items.forEach((item, i) => {
    if (item.type === "function_call_output") answered.add(item.callId);
    else if (item.type === "message") lastMessage = i;
  });
  const awaiting = new Set<number>();
  for (let i = lastMessage + 1; i < items.length; i++) {
    const item = items[i] as Item;
    if (item.type === "function_call" && !answered.has(item.callId)) awaiting.add(i);
  }
  return awaiting;
}

/**
 * Indexes truncation never removes: the first system/developer message, the first
 * summary, the last user message, every handoff and config update, and calls awaiting
 * their output.
 */
export function protectedIndexes(items: readonly Item[]): Set<number> {
  const kept = awaitingCallIndexes(items);
  const firstInstruction = items.findIndex(isInstruction);
  const firstSummary = items.findIndex(isSummary);
  const lastUser = items.findLastIndex(isUserMessage);
  for (const i of [firstInstruction, firstSummary, lastUser]) if (i >= 0) kept.add(i);
  items.forEach((item, i) => {
    if (isStructural(item)) kept.add(i);
  });
  return kept;
}

/**
 * Marks calls without an output and outputs without a call, except calls awaiting
 * their output. `gone` holds what is already removed and receives the orphans.
 */
function markOrphans(items: readonly Item[], gone: boolean[], awaiting: Set<number>): void {
  const calls = new Set<string>();
  const outputs = new Set<string>();
  items.forEach((item, i) => {
    if (gone[i]) return;
    if (item.type === "function_call") calls.add(item.callId);
    else if (item.type === "function_call_output") outputs.add(item.callId);
  });
  items.forEach((item, i) => {
    if (gone[i]) return;
    if (item.type === "function_call" && !outputs.has(item.callId) && !awaiting.has(i)) {
      gone[i] = true;
    } else if (item.type === "function_call_output" && !calls.has(item.callId)) gone[i] = true;
  });
}

/**
 * Removes the oldest unprotected items until both limits hold, in O(n).
 *
 * Orphaned calls and outputs are dropped first, so they never use up budget that real
 * turns could have kept. Then items go oldest first; a call and its output(s) go together.
 * When only protected items are left the limits may still be exceeded: that is accepted
 * rather than breaking the conversation. No limits means no change at all. Items whose
 * id is in `keep` (a turn's current tool round) are protected too.
 * @example
 * const { kept, removed } = truncateItems(items, { maxItems: 50, maxTokens: 8000 });
 */
export function truncateItems(
  items: readonly Item[],
  limits: TruncateLimits,
  keep?: ReadonlySet<string>,
): Partition {
  const maxItems = checkLimit("maxItems", limits.maxItems);
  const maxTokens = checkLimit("maxTokens", limits.maxTokens);
  if (maxItems === undefined && maxTokens === undefined) return { kept: [...items], removed: [] };

  const protect = protectedIndexes(items);
  if (keep?.size) {
    items.forEach((item, i) => {
      if (keep.has(item.id)) protect.add(i);
    });
  }
  const awaiting = awaitingCallIndexes(items);
  const gone: boolean[] = new Array(items.length).fill(false);
  markOrphans(items, gone, awaiting);

  const tokens = items.map(estimateItemTokens);
  let count = 0;
  let total = 0;
  const pairs = new Map<string, number[]>();
  items.forEach((item, i) => {
    if (gone[i]) return;
    count++;
    total += tokens[i] as number;
    if (item.type === "function_call" || item.type === "function_call_output") {
      const members = pairs.get(item.callId);
      if (members) members.push(i);
      else pairs.set(item.callId, [i]);
    }
  });
  const over = () =>
    (maxItems !== undefined && count > maxItems) || (maxTokens !== undefined && total > maxTokens);
  const drop = (i: number) => {
    if (gone[i] || protect.has(i)) return;
    gone[i] = true;
    count--;
    total -= tokens[i] as number;
  };

  for (let i = 0; i < items.length && over(); i++) {
    if (gone[i] || protect.has(i)) continue;
    const item = items[i] as Item;
    if (item.type === "function_call" || item.type === "function_call_output") {
      for (const member of pairs.get(item.callId) ?? []) drop(member);
    } else drop(i);
  }
  // Pairs leave together, so this only catches malformed input (e.g. a call id shared
  // by a protected awaiting call and a removed output).
  markOrphans(items, gone, awaiting);

  const result: Partition = { kept: [], removed: [] };
  items.forEach((item, i) => {
    (gone[i] ? result.removed : result.kept).push(item);
  });
  return result;
}
