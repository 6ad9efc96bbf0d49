import { nowIso } from "../protocol/json";
import { type Item, MessageItem, timeOf } from "./items";

/**
 * The whole-list edits of a `Conversation`: each returns a new list and never changes the
 * one it is given, so snapshots of a conversation's items stay valid.
 */

/**
 * `items` with `text` as the leading system message: a leading one keeps its id and
 * gets the new content, else a new one goes first; an empty text removes the leading one.
 * Null when nothing changes (an empty text and no leading system message).
 */
export function withLeadingSystem(
  items: readonly Item[],
  text: string,
): { items: Item[]; message: MessageItem | null } | null {
  const first = items[0];
  const leading = first?.type === "message" && first.role === "system" ? first : null;
  if (!text) return leading ? { items: items.slice(1), message: null } : null;
  if (leading) {
    const replaced: MessageItem = { ...leading, content: [text] };
    // Variants of the old prompt would otherwise win over the new one.
    delete replaced.audioInstructions;
    delete replaced.textInstructions;
    return { items: [replaced, ...items.slice(1)], message: replaced };
  }
  // Never newer than what follows, so inserts and merges keep it first.
  const now = nowIso();
  const createdAt = first && timeOf(first) < Date.parse(now) ? first.createdAt : now;
  const message = MessageItem.parse({ type: "message", role: "system", content: text, createdAt });
  return { items: [message, ...items], message };
}

/**
 * `existing` with `incoming` inserted by createdAt: each before the first item with a
 * strictly later time, equal times after; the incoming ones in time order, ties in their
 * given order. The same as inserting them one by one, in O(n + m log m).
 */
export function insertByTime(existing: readonly Item[], incoming: readonly Item[]): Item[] {
  const sorted = incoming
    .map((item, index) => ({ item, index, time: timeOf(item) }))
    .sort((a, b) => a.time - b.time || a.index - b.index);
  const out: Item[] = [];
  // The first strictly later position only moves forward as the inserted time grows,
  // even when the existing list is not sorted, so one forward scan serves all.
  let at = 0;
  for (const { item, time } of sorted) {
    while (at < existing.length && timeOf(existing[at] as Item) <= time) {
      out.push(existing[at] as Item);
      at++;
    }
    out.push(item);
  }
  for (; at < existing.length; at++) out.push(existing[at] as Item);
  return out;
}

/** The raw items of `{ items: [...] }` or of a plain array; anything else throws. */
export function itemsOf(json: unknown): readonly unknown[] {
  if (Array.isArray(json)) return json;
  const items = (json as { items?: unknown } | null)?.items;
  if (!Array.isArray(items)) throw new TypeError("a conversation is { items: [...] }");
  return items;
}
