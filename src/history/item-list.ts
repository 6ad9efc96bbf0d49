import type { Item } from "./items";
import type { ItemHost } from "./summarize";

/**
 * The items of a conversation and their index by id, shared by a conversation and its
 * read-only views so a view sees every change. The list is only ever appended to in place
 * or swapped whole, and items are never edited in place, which lets a store diff
 * snapshots by id (see `diffItems`).
 */
export class ItemList implements ItemHost {
  #items: Item[];
  #byId: Map<string, Item> | null = null;

  constructor(items: Item[] = []) {
    this.#items = items;
  }

  get items(): readonly Item[] {
    return this.#items;
  }

  /**
   * The items by id, built on first use after each swap; a swap starts a new map, so one
   * taken before stays as it was.
   */
  index(): ReadonlyMap<string, Item> {
    this.#byId ??= new Map(this.#items.map((item) => [item.id, item]));
    return this.#byId;
  }

  /** Throws when an item already has this id. */
  checkFree(id: string): void {
    if (this.index().has(id)) throw new Error(`conversation item id "${id}" is already used`);
  }

  append<T extends Item>(item: T): T {
    this.checkFree(item.id);
    this.#items.push(item);
    this.#byId?.set(item.id, item); // built by checkFree
    return item;
  }

  /** Swaps in a new list; never edits the old one, so snapshots of it stay valid. */
  replaceItems(items: Item[]): void {
    this.#items = items;
    this.#byId = null;
  }
}
