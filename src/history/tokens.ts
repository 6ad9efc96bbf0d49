import type { Item } from "./items";

/** Fixed cost of every item: role, separators and framing a provider adds around it. */
const PER_ITEM = 4;
/** Rough cost of one image; real costs vary with size and detail. */
const PER_IMAGE = 300;
/** Framing a provider adds around a tool call or result, on top of its name and payload. */
const PER_TOOL_FRAME = 5;

/** About four characters per token; each string is rounded down on its own (decision 5). */
function quarter(text: string): number {
  return Math.floor(text.length / 4);
}

/**
 * Estimated tokens of one item: 4, plus ⌊len/4⌋ per text part and 300 per image for
 * messages, plus ⌊name/4⌋ + 5 + ⌊arguments-or-output/4⌋ for calls and outputs. Lengths
 * are UTF-16 code units, so text outside the BMP counts slightly high, which is the safe
 * side for a budget. Handoffs and config updates cost only the fixed 4.
 * @example
 * estimateItemTokens({ type: "message", role: "user", content: ["abcdefgh"], ... }); // 4 + 2
 */
export function estimateItemTokens(item: Item): number {
  let tokens = PER_ITEM;
  switch (item.type) {
    case "message":
      for (const part of item.content)
        tokens += typeof part === "string" ? quarter(part) : PER_IMAGE;
      break;
    case "function_call":
      tokens += quarter(item.name) + PER_TOOL_FRAME + quarter(item.arguments);
      break;
    case "function_call_output":
      tokens += quarter(item.name) + PER_TOOL_FRAME + quarter(item.output);
      break;
  }
  return tokens;
}

/**
 * Estimated tokens of a list of items: an estimate for budget decisions, not provider usage.
 * @example
 * estimateTokens(conversation.items);
 */
export function estimateTokens(items: readonly Item[]): number {
  let total = 0;
  for (const item of items) total += estimateItemTokens(item);
  return total;
}
