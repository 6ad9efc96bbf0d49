import type { Item } from "./items";
import { estimateTokens } from "./tokens";

/**
 * The marker that ends a tool output cut to fit a model's context window. The model is
 * told what it lost; the stored history keeps the whole output.
 */
export function shortenedMarker(kept: number, total: number): string {
  return `\n[Edgelink: tool output cut to its first ${kept} of ${total} characters to fit the model's context window]`;
}

/** `text` cut to `chars` code units, without splitting a surrogate pair. */
function head(text: string, chars: number): string {
  if (chars <= 0) return "";
  const code = text.charCodeAt(chars - 1);
  return text.slice(0, code >= 0xd800 && code <= 0xdbff ? chars - 1 : chars);
}

/** An output cut to at most `tokens` estimated payload tokens, marker included. */
function cut(output: string, tokens: number): string {
  // The marker's digits are at most those of the whole length: size it for that.
  const room = tokens * 4 - shortenedMarker(output.length, output.length).length;
  const kept = head(output, Math.max(0, room));
  return kept + shortenedMarker(kept.length, output.length);
}

/**
 * Cuts the tool outputs among `ids` (a turn's current round, which must be sent) until
 * the items' estimated tokens fit `maxTokens`: the room left by everything else is
 * shared fairly, so small outputs stay whole and only the large ones are cut, each
 * ending with a marker that says how much was kept. The other items are never changed;
 * when they alone exceed the budget, the outputs are cut to their markers and the items
 * may still be over (what is protected is sent, as truncation does). Returns the items
 * and how many outputs were cut.
 * @example
 * const { items, shortened } = shortenOutputs(window, new Set([output.id]), 8000);
 */
export function shortenOutputs(
  items: readonly Item[],
  ids: ReadonlySet<string>,
  maxTokens: number,
): { items: Item[]; shortened: number } {
  const total = estimateTokens(items);
  const targets: number[] = [];
  items.forEach((item, i) => {
    if (item.type === "function_call_output" && ids.has(item.id)) targets.push(i);
  });
  if (total <= maxTokens || targets.length === 0) return { items: [...items], shortened: 0 };

  // Payload tokens of each output: what cutting it can give back.
  const payload = (i: number) => {
    const item = items[i] as Item;
    return item.type === "function_call_output" ? Math.floor(item.output.length / 4) : 0;
  };
  let room = maxTokens - (total - targets.reduce((sum, i) => sum + payload(i), 0));
  // Smallest first: each output keeps all it needs up to an equal share of what is left.
  const order = [...targets].sort((a, b) => payload(a) - payload(b));
  const out = [...items];
  let shortened = 0;
  order.forEach((i, k) => {
    const share = Math.max(0, Math.floor(room / (order.length - k)));
    const need = payload(i);
    const item = items[i] as Item;
    if (need <= share || item.type !== "function_call_output") {
      room -= need;
      return;
    }
    const output = cut(item.output, share);
    out[i] = { ...item, output };
    room -= Math.floor(output.length / 4);
    shortened++;
  });
  return { items: out, shortened };
}
