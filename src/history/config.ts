import { type Item, isInstruction, isStructural, type MessageItem, messageText } from "./items";

/**
 * The agent configuration in force at some point of a conversation.
 * @example
 * const { instructions, tools } = conversation.activeConfigAt();
 */
export interface ActiveConfig {
  /** The instructions in force, or null when none were ever given. */
  instructions: string | null;
  /** The tool names allowed, or null when no config update restricted them. */
  tools: string[] | null;
}

/**
 * Where to resolve the configuration: null = the end, a number = an index, a string = an id.
 * @example
 * conversation.activeConfigAt(3); // through the fourth item
 */
export type ConfigTarget = string | number | null;

/**
 * Resolves instructions and tools by scanning from the start up to and including the
 * target. The last system/developer message sets the instructions; a config update
 * overrides whatever it names. Tools come only from config updates. An unknown id scans
 * everything, and so does an index past the end.
 * @example
 * const { instructions, tools } = activeConfigAt(conversation.items, "cfg_…");
 */
export function activeConfigAt(items: readonly Item[], target: ConfigTarget = null): ActiveConfig {
  let end = items.length;
  if (typeof target === "number") {
    if (!Number.isInteger(target) || target < 0) {
      throw new RangeError(`activeConfigAt: index must be a non-negative integer, got ${target}`);
    }
    end = Math.min(target + 1, items.length);
  } else if (typeof target === "string") {
    const index = items.findIndex((item) => item.id === target);
    if (index >= 0) end = index + 1;
  }
  let instructions: string | null = null;
  let tools: string[] | null = null;
  for (let i = 0; i < end; i++) {
    const item = items[i] as Item;
    if (isInstruction(item)) instructions = messageText(item);
    else if (item.type === "agent_config_update") {
      if (item.instructions !== undefined) instructions = item.instructions;
      if (item.tools !== undefined) tools = [...item.tools];
    }
  }
  return { instructions, tools };
}

/**
 * The items a model should see: handoffs and config updates are left out,
 * and when a config update changed the instructions, the first instruction message carries
 * the resolved instructions instead (a system message is put first if there was none).
 * Items are shared with the input, not copied, except the rewritten instruction message.
 * @example
 * const forModel = providerItems(conversation.items);
 */
export function providerItems(items: readonly Item[]): Item[] {
  const overridden = items.some(
    (item) => item.type === "agent_config_update" && item.instructions !== undefined,
  );
  const kept = items.filter((item) => !isStructural(item));
  if (!overridden) return kept;
  const instructions = activeConfigAt(items).instructions ?? "";
  const first = kept.findIndex(isInstruction);
  if (first >= 0) {
    const rewritten: MessageItem = { ...(kept[first] as MessageItem), content: [instructions] };
    delete rewritten.audioInstructions;
    delete rewritten.textInstructions;
    kept[first] = rewritten;
  } else {
    const createdAt = items[0]?.createdAt ?? new Date(0).toISOString();
    const id = `${items[0]?.id ?? "msg"}:instructions`;
    kept.unshift({
      type: "message",
      id,
      createdAt,
      role: "system",
      content: [instructions],
      interrupted: false,
      extra: {},
    });
  }
  return kept;
}
