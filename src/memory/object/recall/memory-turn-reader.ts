import type { MemoryTurn } from "../../../protocol/memory";
import { ftsQuery, recency, relevance, turnScore } from "../../base/rank";
import { TURN_COLUMNS, type TurnRow, turnOf } from "../rows/memory-rows";
import type { IndexedTerms } from "../rows/memory-terms";
import {
  BUNDLE_TURNS,
  inChannels,
  MIN_TURN_SIMILARITY,
  TEXT_SCAN,
  TURN_CANDIDATES,
  type VectorHits,
} from "../rows/recall-bounds";

/**
 * A turn row `f` that recall may quote: not corrected since, in the channels bound as ?2,
 * and not of the asking conversation bound as ?3 (null: any).
 */
const RECALLABLE_TURN = `f.corrected_at IS NULL AND ${inChannels(2)} AND (?3 IS NULL OR f.context_id IS NOT ?3)`;

/** The turns among the vector hits similar enough to be recalled without a text match. */
const similarTurns = (hits: VectorHits): string[] =>
  [...hits.entries()].filter(([, cos]) => cos >= MIN_TURN_SIMILARITY).map(([id]) => id);

/** Recall's reads of past turns (the bundle's last section). */
export class TurnReader {
  constructor(
    private readonly sql: SqlStorage,
    private readonly terms: IndexedTerms,
  ) {}

  /**
   * Past turns relevant to the query, best first: those the full-text index matches among
   * the newest TEXT_SCAN matches, and the vector hits, in the query's channels, outside
   * the asking conversation (`contextId`), and never a turn whose learnt fact was
   * corrected since.
   */
  ranked(
    terms: string[],
    channels: string,
    contextId: string | null,
    hits: VectorHits,
    now: number,
  ): Array<{ turn: MemoryTurn; score: number }> {
    const held = this.terms.present("turns_fts", terms);
    const matches =
      held.length === 0
        ? []
        : this.sql
            .exec<TurnRow & { bm: number }>(
              `SELECT ${TURN_COLUMNS}, m.bm FROM (
                 SELECT rowid, bm25(turns_fts) AS bm FROM turns_fts WHERE turns_fts MATCH ?1
                 ORDER BY rowid DESC LIMIT ${TEXT_SCAN}
               ) m JOIN turns f ON f.rid = m.rowid
               WHERE ${RECALLABLE_TURN}
               ORDER BY m.bm LIMIT ${TURN_CANDIDATES}`,
              ftsQuery(held),
              channels,
              contextId,
            )
            .toArray();
    const best = matches[0]?.bm;
    const rows = new Map<string, TurnRow & { bm?: number }>(matches.map((r) => [r.id, r]));
    const missing = similarTurns(hits).filter((id) => !rows.has(id));
    if (missing.length) {
      const found = this.sql
        .exec<TurnRow>(
          `SELECT ${TURN_COLUMNS} FROM turns f WHERE f.id IN (SELECT value FROM json_each(?4))
             AND ${RECALLABLE_TURN}`,
          null,
          channels,
          contextId,
          JSON.stringify(missing),
        )
        .toArray();
      for (const row of found) rows.set(row.id, row);
    }
    return [...rows.values()]
      .map((row) => {
        const turn = turnOf(row);
        const rel = relevance(row.bm, best, hits.get(row.id), hits.size > 0);
        return { turn, score: turnScore(rel, recency(turn.timestamp, now)) };
      })
      .sort((a, b) => b.score - a.score || b.turn.timestamp.localeCompare(a.turn.timestamp))
      .slice(0, BUNDLE_TURNS);
  }

  /**
   * Whether `ranked` would find any turn, without ranking or reading them: one
   * recallable row among the same newest TEXT_SCAN matches, or among the vector hits.
   */
  any(terms: string[], channels: string, contextId: string | null, hits: VectorHits): boolean {
    const held = this.terms.present("turns_fts", terms);
    if (held.length > 0) {
      const matched = this.sql.exec(
        `SELECT 1 FROM (
           SELECT rowid FROM turns_fts WHERE turns_fts MATCH ?1 ORDER BY rowid DESC LIMIT ${TEXT_SCAN}
         ) m JOIN turns f ON f.rid = m.rowid WHERE ${RECALLABLE_TURN} LIMIT 1`,
        ftsQuery(held),
        channels,
        contextId,
      );
      if (matched.toArray().length > 0) return true;
    }
    const similar = similarTurns(hits);
    if (similar.length === 0) return false;
    const found = this.sql.exec(
      `SELECT 1 FROM turns f WHERE f.id IN (SELECT value FROM json_each(?4))
         AND ${RECALLABLE_TURN} LIMIT 1`,
      null,
      channels,
      contextId,
      JSON.stringify(similar),
    );
    return found.toArray().length > 0;
  }
}
