import type { MemoryFact } from "../../protocol/memory";
import { FACT_COLUMNS, factOf, factRowOf } from "./memory-rows";

/** Most facts kept read in the object between recalls; past it the oldest kept goes. */
export const KEPT_FACTS = 512;

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
      if (this.kept.size >= KEPT_FACTS) {
        const oldest = this.kept.keys().next().value;
        if (oldest !== undefined) this.kept.delete(oldest);
      }
      this.kept.set(fact.id, fact);
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

  /** Forgets every fact: the memory was written. */
  forget(): void {
    this.kept.clear();
  }
}
