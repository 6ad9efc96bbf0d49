import { newId, nowIso } from "../protocol/json";
import {
  cloneItem,
  cloneItems,
  ID_PREFIX,
  type Item,
  isInstruction,
  isStructural,
  isUserMessage,
  type MessageItem,
  timeOf,
} from "./items";
import { recentTurnsStart } from "./summarize";

/**
 * Filters for `copy`. Every filter is off by default.
 * @example
 * conversation.copy({ excludeHandoffs: true, tools: ["search"], agentId: "researcher" });
 */
export interface CopyFilters {
  /** Drop system messages. */
  excludeSystem?: boolean;
  /** Drop system and developer messages. */
  excludeInstructions?: boolean;
  /** Drop messages with no text but whitespace and no image. */
  excludeEmpty?: boolean;
  excludeHandoffs?: boolean;
  excludeConfigUpdates?: boolean;
  /**
   * Which tools' calls and outputs to keep: null or absent keeps all, `[]` drops all, a
   * list keeps only those names.
   */
  tools?: readonly string[] | null;
  /**
   * Keep only items of this agent, plus instructions, handoffs and config updates, which
   * shape every agent's view.
   */
  agentId?: string | null;
}

function hasContent(message: MessageItem): boolean {
  return message.content.some((part) => typeof part !== "string" || part.trim() !== "");
}

/**
 * Deep copies of the items passing the filters, in order.
 * @example
 * copyItems(items, { excludeInstructions: true, tools: ["search"] });
 */
export function copyItems(items: readonly Item[], filters: CopyFilters = {}): Item[] {
  const tools = filters.tools == null ? null : new Set(filters.tools);
  const agentId = filters.agentId ?? null;
  const out: Item[] = [];
  for (const item of items) {
    if (item.type === "message") {
      if (filters.excludeSystem && item.role === "system") continue;
      if (filters.excludeInstructions && isInstruction(item)) continue;
      if (filters.excludeEmpty && !hasContent(item)) continue;
    }
    if (filters.excludeHandoffs && item.type === "agent_handoff") continue;
    if (filters.excludeConfigUpdates && item.type === "agent_config_update") continue;
    if (
      tools &&
      (item.type === "function_call" || item.type === "function_call_output") &&
      !tools.has(item.name)
    ) {
      continue;
    }
    if (agentId !== null && !isStructural(item) && !isInstruction(item)) {
      if (item.agentId !== agentId) continue;
    }
    out.push(item);
  }
  return cloneItems(out);
}

/**
 * Instructions first, then everything from the `recentTurns`-th newest user message on,
 * after applying the tool filter. Up to `recentTurns` user turns keeps everything.
 */
export function forkFilteredItems(
  items: readonly Item[],
  options: { recentTurns?: number; tools?: readonly string[] | null } = {},
): Item[] {
  const recentTurns = options.recentTurns ?? 3;
  if (!Number.isInteger(recentTurns) || recentTurns < 1) {
    throw new RangeError(`forkFiltered: recentTurns must be an integer >= 1, got ${recentTurns}`);
  }
  const scoped = copyItems(items, { tools: options.tools ?? null });
  const turns = scoped.filter(isUserMessage).length;
  const start = turns > recentTurns ? recentTurnsStart(scoped, recentTurns) : 0;
  const instructions = scoped.filter(isInstruction);
  const tail = scoped.slice(start).filter((item) => !isInstruction(item));
  return [...instructions, ...tail];
}

/** A fresh context for a sub-agent: its instructions and an optional brief. */
export function forkBriefItems(options: {
  instructions: string;
  brief?: string;
  agentId?: string;
}): Item[] {
  if (!options.instructions) throw new Error("forkBrief: instructions must not be empty");
  const message = (role: "system" | "user", text: string): MessageItem => {
    const item: MessageItem = {
      type: "message",
      id: newId(ID_PREFIX.message),
      createdAt: nowIso(),
      role,
      content: [text],
      interrupted: false,
      extra: {},
    };
    if (options.agentId !== undefined) item.agentId = options.agentId;
    return item;
  };
  const items: Item[] = [message("system", options.instructions)];
  if (options.brief) items.push(message("user", options.brief));
  return items;
}

/**
 * This conversation's items plus deep copies of the other's items with ids not seen here,
 * stably sorted by createdAt. Merging the same items again adds nothing.
 */
export function mergeItems(mine: readonly Item[], theirs: readonly Item[]): Item[] {
  const seen = new Set(mine.map((item) => item.id));
  const incoming: Item[] = [];
  for (const item of theirs) {
    if (seen.has(item.id)) continue;
    seen.add(item.id);
    incoming.push(item);
  }
  const combined = [...mine];
  for (const item of cloneItems(incoming)) combined.push(item);
  // Sorting precomputed keys keeps 100k-item merges cheap; Array.sort is stable.
  const keyed = combined.map((item, index) => ({ item, index, time: timeOf(item) }));
  keyed.sort((a, b) => a.time - b.time || a.index - b.index);
  return keyed.map((entry) => entry.item);
}

/** A copy of the other's last assistant message, or null when it has none. */
export function lastAssistantCopy(
  theirs: readonly Item[],
  taken: (id: string) => boolean,
  agentId?: string,
): MessageItem | null {
  const last = theirs.findLast(
    (item): item is MessageItem => item.type === "message" && item.role === "assistant",
  );
  if (!last) return null;
  const copy = cloneItem(last);
  // Keep the id so a later full merge recognises the message; a fresh one if it is taken.
  if (taken(copy.id)) copy.id = newId(ID_PREFIX.message);
  if (agentId !== undefined) copy.agentId = agentId;
  return copy;
}
