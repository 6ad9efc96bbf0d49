import type { MemoryFact } from "../../../protocol/memory";
import { factScore, ftsQuery, queryTerms, recencyAt, relevance } from "../../base/rank";
import type { FactRows } from "../rows/memory-fact-rows";
import { FACT_COLUMNS, type FactRow, factOf, factRowOf } from "../rows/memory-rows";
import type { IndexedTerms } from "../rows/memory-terms";
import {
  type Channels,
  inChannels,
  RECENT_CANDIDATES,
  TEXT_CANDIDATES,
  TEXT_SCAN,
  type VectorHits,
} from "../rows/recall-bounds";

/** A fact with its score for one query. */
export interface Scored {
  fact: MemoryFact;
  score: number;
}

/**
 * Ranks a memory's live facts for a query: its text matches, its vector hits and the
 * newest facts, each scored (relevance, confidence, salience, recency, whether current).
 */
export class FactRanker {
  constructor(
    private readonly sql: SqlStorage,
    private readonly terms: IndexedTerms,
    private readonly facts: FactRows,
  ) {}

  /** The ids of the best live text matches in the channels, with their bm25, best first. */
  private textMatches(
    terms: string[],
    channels: Channels,
    limit: number,
  ): Array<{ id: string; bm: number }> {
    const held = this.terms.present("facts_fts", terms);
    if (held.length === 0) return [];
    const cursor = this.sql.exec(
      // The newest matches first, in the index's rowid order, so FTS5 stops after
      // TEXT_SCAN of them however many facts match; bm25 ranks those.
      `SELECT f.id, m.bm FROM (
           SELECT rowid, bm25(facts_fts) AS bm FROM facts_fts WHERE facts_fts MATCH ?1
           ORDER BY rowid DESC LIMIT ${TEXT_SCAN}
         ) m JOIN facts f ON f.rid = m.rowid
         WHERE f.superseded_by IS NULL AND ${inChannels(2)}
         ORDER BY m.bm LIMIT ${limit}`,
      ftsQuery(held),
      channels,
    );
    return Array.from(cursor.raw(), (r) => ({ id: r[0] as string, bm: r[1] as number }));
  }

  /** The ids of the newest live facts in the channels, newest first (kept until a write). */
  private recentIds(channels: Channels): string[] {
    return this.facts.newest(channels, () => {
      const cursor = this.sql.exec(
        `SELECT f.id FROM facts f WHERE f.superseded_by IS NULL AND ${inChannels(1)}
         ORDER BY f.created_at DESC LIMIT ${RECENT_CANDIDATES}`,
        channels,
      );
      return Array.from(cursor.raw(), (r) => r[0] as string);
    });
  }
  /** Live facts of these ids, read in full (the vector hits: not kept, as they are few). */
  private factsById(ids: string[]): FactRow[] {
    if (ids.length === 0) return [];
    const cursor = this.sql.exec(
      `SELECT ${FACT_COLUMNS} FROM facts f WHERE f.id IN (SELECT value FROM json_each(?))
         AND f.superseded_by IS NULL`,
      JSON.stringify(ids),
    );
    return Array.from(cursor.raw(), factRowOf);
  }

  private salienceOf(ids: string[]): Map<string, number> {
    const rows = this.sql
      .exec<{ fact_id: string; s: number }>(
        `SELECT fe.fact_id, max(e.salience) AS s FROM fact_entities fe JOIN entities e ON e.id = fe.entity_id
         WHERE fe.fact_id IN (SELECT value FROM json_each(?)) GROUP BY fe.fact_id`,
        JSON.stringify(ids),
      )
      .toArray();
    return new Map(rows.map((r) => [r.fact_id, r.s]));
  }

  /**
   * Live facts ranked for a query: text matches, vector hits and the newest, scored.
   * `withEntities` false (the memory holds none) skips looking up their salience.
   */
  rank(
    text: string,
    channels: Channels,
    hits: VectorHits,
    now: number,
    withRecent = true,
    withEntities = true,
  ): Scored[] {
    const matches = this.textMatches(queryTerms(text), channels, TEXT_CANDIDATES);
    const best = matches[0]?.bm;
    const recent = withRecent ? this.recentIds(channels) : [];
    // Both reads chose live facts in the channels; the facts not kept are read once.
    const chosen = this.facts.byId([...matches.map((m) => m.id), ...recent]);
    const rows = new Map<string, { fact: MemoryFact; bm?: number }>();
    for (const { id, bm } of matches) {
      const fact = chosen.get(id);
      if (fact) rows.set(id, { fact, bm });
    }
    const missing = [...hits.keys()].filter((id) => !rows.has(id));
    for (const row of this.factsById(missing)) {
      if (channels === null || (JSON.parse(channels) as string[]).includes(row.channel)) {
        rows.set(row.id, { fact: factOf(row) });
      }
    }
    for (const id of recent) {
      const fact = chosen.get(id);
      if (fact && !rows.has(id)) rows.set(id, { fact });
    }
    const salience = withEntities ? this.salienceOf([...rows.keys()]) : new Map<string, number>();
    // The facts of one recall were mostly last accessed together: each time is parsed once.
    const times = new Map<string, number>();
    const scored = [...rows.values()].map(({ fact, bm }) => {
      const at = fact.lastAccessedAt ?? fact.updatedAt;
      let ms = times.get(at);
      if (ms === undefined) {
        ms = Date.parse(at);
        times.set(at, ms);
      }
      const { from, to } = this.facts.derived(fact);
      const score = factScore({
        relevance: relevance(bm, best, hits.get(fact.id), hits.size > 0),
        confidence: fact.confidence,
        salience: salience.get(fact.id) ?? 0.5,
        recency: recencyAt(ms, now),
        current: !(from > now || to < now),
      });
      return { fact, score };
    });
    return scored.sort(
      (a, b) => b.score - a.score || b.fact.createdAt.localeCompare(a.fact.createdAt),
    );
  }
}
