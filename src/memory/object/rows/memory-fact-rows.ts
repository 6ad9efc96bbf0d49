import type { MemoryFact } from "../../../protocol/memory";
import { setBounded } from "../../../storage/bounded-map";
import { factLine } from "../../base/render";
import { FACT_COLUMNS, factOf, factRowOf } from "./memory-rows";

/** A fact's rendered line and validity bounds (see `FactRows.derived`). */
export interface Derived {
  line: string;
  from: number;
  to: number;
}

/** Most facts kept read in the object between recalls; past it the oldest kept goes. */
export const KEPT_FACTS = 512;
/** Channel sets whose newest facts' ids are kept between recalls. */
export const NEWEST_KEPT = 16;

/**
 * Facts as recall read them, kept in the object until a write that changes more than past
 * turns. Recall's queries choose which facts it ranks (by id, from the indexes alone) and
 * only the facts not kept are read in full: a user's recalls keep ranking the same newest
 * facts, and reading each one's twenty columns into objects again was most of a recall's
 * work after the match.
 * The access counts a recall adds are written here as they are written to SQLite, so a
 * kept fact always equals its row. The facts answered are shared: callers copy, never
 * change them.
 */
export class FactRows {
  private readonly kept = new Map<string, MemoryFact>();
  /**
   * What ranking and rendering work out of a fact, kept beside it: its line and validity
   * bounds change only with a write that forgets the fact (its access counts, which do
   * change, are read from the fact each time).
   */
  private lines = new WeakMap<MemoryFact, Derived>();
  /** The newest live facts' ids per channel set (recall's `recentIds`). */
  private readonly newestIds = new Map<string | null, string[]>();

  constructor(private readonly sql: SqlStorage) {}

  /** Facts kept now. */
  get size(): number {
    return this.kept.size;
  }

  /** The facts of these ids that exist, each read from SQLite at most once until a write. */
  byId(ids: readonly string[]): Map<string, MemoryFact> {
    const found = new Map<string, MemoryFact>();
    const missing: string[] = [];
    for (const id of ids) {
      const fact = this.kept.get(id);
      if (fact) found.set(id, fact);
      else missing.push(id);
    }
    if (missing.length === 0) return found;
    const cursor = this.sql.exec(
      `SELECT ${FACT_COLUMNS} FROM facts f WHERE f.id IN (SELECT value FROM json_each(?))`,
      JSON.stringify(missing),
    );
    for (const raw of cursor.raw()) {
      const fact = factOf(factRowOf(raw));
      found.set(fact.id, fact);
      setBounded(this.kept, fact.id, fact, KEPT_FACTS);
    }
    return found;
  }

  /** Recalls' access counts, just written to SQLite (`counts`: id → recalls, at `at`). */
  accessed(counts: ReadonlyMap<string, number>, at: string): void {
    for (const [id, n] of counts) {
      const fact = this.kept.get(id);
      if (!fact) continue;
      // A fact never accessed has no lastAccessedAt field: read again, its fields keep
      // the order a fresh read gives them (and so the JSON a client sees).
      if (fact.lastAccessedAt === undefined) {
        this.kept.delete(id);
        continue;
      }
      fact.accessCount += n;
      fact.lastAccessedAt = at;
    }
  }

  /**
   * A fact's rendered line and validity bounds (epoch ms, NaN when open: no comparison
   * holds), worked out once per fact object.
   */
  derived(fact: MemoryFact): Derived {
    let derived = this.lines.get(fact);
    if (!derived) {
      derived = {
        line: factLine(fact),
        from: fact.validFrom ? Date.parse(fact.validFrom) : Number.NaN,
        to: fact.validTo ? Date.parse(fact.validTo) : Number.NaN,
      };
      this.lines.set(fact, derived);
    }
    return derived;
  }

  /** The newest facts' ids in `channels`, read (by `read`) once until a write. */
  newest(channels: string | null, read: () => string[]): string[] {
    const kept = this.newestIds.get(channels);
    if (kept) return kept;
    // A caller naming a new channel each time cannot grow this past a few entries.
    if (this.newestIds.size >= NEWEST_KEPT) this.newestIds.clear();
    const ids = read();
    this.newestIds.set(channels, ids);
    return ids;
  }

  /** Forgets every fact: the memory was written. */
  forget(): void {
    this.kept.clear();
    this.lines = new WeakMap();
    this.newestIds.clear();
  }
}
