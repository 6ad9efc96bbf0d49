import type { Item } from "./items";

/**
 * An item to insert, right after the item with id `afterId` (null: at the front).
 * @example
 * for (const { item, afterId } of diff.added) insertRowAfter(afterId, item);
 */
export interface AddedItem {
  item: Item;
  afterId: string | null;
}

/**
 * How to turn one item list into another by id, for a store that keeps one row per item.
 * Apply it as: delete `removed`, update `changed` in place, then insert `added` in order
 * (items sharing an `afterId` go after it in the order listed).
 * @example
 * const { removed, added, changed } = diffItems(before, conversation.items);
 */
export interface ItemDiff {
  /** Ids to delete. An item that moved is listed here and in `added`. */
  removed: string[];
  /** New or moved items, in their final order. */
  added: AddedItem[];
  /** Items that stayed in place with different content (e.g. a replaced system prompt). */
  changed: Item[];
}

function indexById(items: readonly Item[], name: string): Map<string, number> {
  const index = new Map<string, number>();
  items.forEach((item, i) => {
    if (index.has(item.id)) throw new Error(`diffItems: duplicate id "${item.id}" in ${name}`);
    index.set(item.id, i);
  });
  return index;
}

/** Positions (into `seq`) of a longest strictly increasing subsequence, O(k log k). */
function longestIncreasing(seq: readonly number[]): Set<number> {
  const tails: number[] = []; // tails[l] = position of the smallest tail of a run of length l+1
  const previous: number[] = new Array(seq.length).fill(-1);
  seq.forEach((value, pos) => {
    let lo = 0;
    let hi = tails.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((seq[tails[mid] as number] as number) < value) lo = mid + 1;
      else hi = mid;
    }
    if (lo > 0) previous[pos] = tails[lo - 1] as number;
    tails[lo] = pos;
  });
  const kept = new Set<number>();
  for (let pos = tails.at(-1) ?? -1; pos >= 0; pos = previous[pos] as number) kept.add(pos);
  return kept;
}

/** Structural equality of JSON values; key order does not matter. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const other = b as unknown[];
    return a.length === other.length && a.every((value, i) => jsonEqual(value, other[i]));
  }
  const left = a as Record<string, unknown>;
  const right = b as Record<string, unknown>;
  const keys = Object.keys(left).filter((key) => left[key] !== undefined);
  const otherKeys = Object.keys(right).filter((key) => right[key] !== undefined);
  return keys.length === otherKeys.length && keys.every((key) => jsonEqual(left[key], right[key]));
}

/**
 * What changed between two item lists, by id, in O(n log n). Items kept in the same
 * relative order stay put; when some were reordered (a merge sorting by time), the fewest
 * possible are reported as moved (deleted and inserted again).
 * @example
 * const before = [...conversation.items];
 * conversation.truncate({ maxItems: 20 });
 * const { removed, added, changed } = diffItems(before, conversation.items);
 */
export function diffItems(before: readonly Item[], after: readonly Item[]): ItemDiff {
  const beforeIndex = indexById(before, "before");
  indexById(after, "after");
  const survivors: number[] = []; // positions in `after` of items also in `before`
  const order: number[] = []; // their positions in `before`
  after.forEach((item, i) => {
    const at = beforeIndex.get(item.id);
    if (at !== undefined) {
      survivors.push(i);
      order.push(at);
    }
  });
  const stay = new Set<number>();
  for (const pos of longestIncreasing(order)) stay.add(survivors[pos] as number);

  const staying = new Set<string>();
  const diff: ItemDiff = { removed: [], added: [], changed: [] };
  let anchor: string | null = null;
  after.forEach((item, i) => {
    if (stay.has(i)) {
      staying.add(item.id);
      const old = before[beforeIndex.get(item.id) as number];
      if (old !== item && !jsonEqual(old, item)) diff.changed.push(item);
      anchor = item.id;
    } else diff.added.push({ item, afterId: anchor });
  });
  for (const item of before) if (!staying.has(item.id)) diff.removed.push(item.id);
  return diff;
}

/**
 * Applies a diff to the list it was computed from; gives back the `after` list.
 * @example
 * applyItemDiff(before, diffItems(before, after)); // deep-equals after
 */
export function applyItemDiff(before: readonly Item[], diff: ItemDiff): Item[] {
  const removed = new Set(diff.removed);
  const changed = new Map(diff.changed.map((item) => [item.id, item]));
  const inserts = new Map<string | null, Item[]>();
  for (const { item, afterId } of diff.added) {
    const group = inserts.get(afterId);
    if (group) group.push(item);
    else inserts.set(afterId, [item]);
  }
  const out: Item[] = [];
  // A loop, not push(...group): a group can hold more items than a call has arguments.
  const insertAfter = (id: string | null) => {
    for (const item of inserts.get(id) ?? []) out.push(item);
  };
  insertAfter(null);
  for (const item of before) {
    if (removed.has(item.id)) continue;
    out.push(changed.get(item.id) ?? item);
    insertAfter(item.id);
  }
  return out;
}

const encoder = new TextEncoder();

/**
 * Size in bytes of an item's UTF-8 JSON: what a stored row holds. Check it against the
 * store's value limit before writing (Durable Object SQLite rows are capped at 2 MB).
 * @example
 * if (itemJsonBytes(item) > 2_000_000) throw new Error("item too large to store");
 */
export function itemJsonBytes(item: Item): number {
  return encoder.encode(JSON.stringify(item)).byteLength;
}
