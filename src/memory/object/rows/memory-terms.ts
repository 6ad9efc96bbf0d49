/** Full-text indexes whose terms recall looks up. */
export type TermIndex = "facts_fts" | "turns_fts";

/** Most terms one index's presence is remembered for; past it the object starts over. */
export const KNOWN_TERMS = 1_024;

/**
 * Which query terms a full-text index holds at all, remembered in the object until its
 * next write. A term no row holds adds nothing to any row's bm25 (its frequency is zero
 * everywhere), yet FTS5 still merges its empty list and weighs it for every row it
 * ranks: leaving it out of the query answers the same rows with the same scores, for
 * less work. A user's queries reuse their words, so after the first turns every term
 * is known and the lookup costs no statement.
 */
export class IndexedTerms {
  private readonly known = new Map<TermIndex, Map<string, boolean>>();

  constructor(private readonly sql: SqlStorage) {}

  /** The terms (letters and digits, as `queryTerms` answers them) some row of `index` holds, in order. */
  present(index: TermIndex, terms: readonly string[]): string[] {
    if (terms.length === 0) return [];
    let known = this.known.get(index);
    if (!known) {
      known = new Map();
      this.known.set(index, known);
    }
    let unknown = terms.filter((term) => !known.has(term));
    if (unknown.length > 0) {
      if (known.size + unknown.length > KNOWN_TERMS) {
        known.clear();
        unknown = [...terms];
      }
      // One statement for all of them: each term as the phrase the recall query uses.
      const held = new Set(
        this.sql
          .exec<{ term: string }>(
            `SELECT t.value AS term FROM json_each(?1) t
             WHERE EXISTS (SELECT 1 FROM ${index} WHERE ${index} MATCH '"' || t.value || '"')`,
            JSON.stringify(unknown),
          )
          .toArray()
          .map((row) => row.term),
      );
      for (const term of unknown) known.set(term, held.has(term));
    }
    return terms.filter((term) => known.get(term) === true);
  }

  /** Forgets the terms of one index, or of every index: the memory was written. */
  forget(index?: TermIndex): void {
    if (index) this.known.delete(index);
    else this.known.clear();
  }
}
