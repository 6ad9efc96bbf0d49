import type {
  MemoryBundle,
  MemoryEntity,
  MemoryFact,
  MemoryKind,
  MemoryStrategy,
  MemoryTurn,
} from "../../../protocol/memory";
import { cosine } from "../../base/embedder";
import { ftsQuery, queryTerms, relevance, strategyScore } from "../../base/rank";
import {
  entityLine,
  goalLine,
  SectionFitter,
  SHORTEST_TURN_LINE,
  strategyLine,
  turnLine,
} from "../../base/render";
import { FactRows } from "../rows/memory-fact-rows";
import {
  type EntityRow,
  entityOf,
  type GoalRow,
  goalOf,
  type StrategyRow,
  strategyOf,
} from "../rows/memory-rows";
import { IndexedTerms } from "../rows/memory-terms";
import {
  BUNDLE_ENTITIES,
  BUNDLE_GOALS,
  BUNDLE_STRATEGIES,
  type Channels,
  channelsOf,
  hitsOf,
  inChannels,
  type VectorHits,
} from "../rows/recall-bounds";
import { FactRanker } from "./fact-ranker";
import { TurnReader } from "./memory-turn-reader";

/** Reads of the memory object's SQLite: recall, neighbours, listing. */
export class MemoryReader {
  private readonly terms: IndexedTerms;
  private readonly facts: FactRows;
  private readonly turns: TurnReader;
  private readonly ranker: FactRanker;

  constructor(private readonly sql: SqlStorage) {
    this.terms = new IndexedTerms(sql);
    this.facts = new FactRows(sql);
    this.turns = new TurnReader(sql, this.terms);
    this.ranker = new FactRanker(sql, this.terms, this.facts);
  }

  /**
   * Forgets what the reader keeps between reads: the memory was written (`turnsOnly`: its
   * past turns alone, so the facts and their terms kept still hold).
   */
  forget(turnsOnly = false): void {
    if (turnsOnly) {
      this.terms.forget("turns_fts");
      return;
    }
    this.terms.forget();
    this.facts.forget();
  }

  /** Recalls' access counts of facts, just written (see `FactRows.accessed`). */
  accessed(counts: ReadonlyMap<string, number>, at: string): void {
    this.facts.accessed(counts, at);
  }

  /**
   * Live facts and recallable turns with a vector, to choose between the in-object scan
   * and an external index.
   */
  vectorCount(): number {
    return (
      this.sql
        .exec<{ n: number }>(
          `SELECT (SELECT count(*) FROM facts WHERE superseded_by IS NULL AND embedding IS NOT NULL)
             + (SELECT count(*) FROM turns WHERE embedding IS NOT NULL AND corrected_at IS NULL) AS n`,
        )
        .toArray()[0]?.n ?? 0
    );
  }

  /**
   * Cosine top-k over the stored vectors of live facts, or of recallable turns (the
   * in-object index).
   */
  scanVectors(
    query: Float32Array,
    channels: Channels,
    k: number,
    kind: "fact" | "turn" = "fact",
  ): VectorHits {
    const best: Array<[string, number]> = [];
    const live =
      kind === "fact"
        ? "FROM facts f WHERE superseded_by IS NULL"
        : "FROM turns f WHERE corrected_at IS NULL";
    const cursor = this.sql.exec<{ id: string; embedding: ArrayBuffer }>(
      `SELECT id, embedding ${live} AND embedding IS NOT NULL AND ${inChannels(1)}`,
      channels,
    );
    for (const row of cursor) {
      if (row.embedding.byteLength !== query.length * 4) continue;
      const score = cosine(query, new Float32Array(row.embedding));
      if (best.length < k || score > (best[best.length - 1] as [string, number])[1]) {
        best.push([row.id, score]);
        best.sort((a, b) => b[1] - a[1]);
        if (best.length > k) best.pop();
      }
    }
    return new Map(best);
  }

  /** The closest live facts to each claim, in any channel, by text match and vectors only. */
  neighbours(claims: string[], k: number, hits: VectorHits[]): MemoryFact[][] {
    return claims.map((claim, i) =>
      this.ranker
        .rank(claim, null, hits[i] ?? new Map(), Date.now(), false)
        .filter(({ fact }) => fact.id)
        .slice(0, k)
        .map(({ fact }) => fact),
    );
  }

  /**
   * Builds the bundle for a query within its budget, and its section as it is filled
   * (`fitted.text()` is `renderMemoryBundle(bundle)`); the caller counts the access.
   * Kinds the memory does not hold (`held`) are not queried: each full-text query costs
   * about as much on an empty table as on a small one. With `shared` (only the section
   * leaves the object) the bundle's facts are the kept ones, not copies with their score:
   * nothing may change them.
   */
  bundle(
    query: { text: string; channel?: string | undefined; contextId?: string | undefined },
    budget: number,
    hits: VectorHits,
    now: number,
    held: ReadonlySet<MemoryKind>,
    shared = false,
  ): { bundle: MemoryBundle; fitted: SectionFitter } {
    const { text } = query;
    const channels = channelsOf(query.channel);
    const withEntities = held.has("entity");
    const facts = held.has("fact")
      ? this.ranker.rank(text, channels, hitsOf(hits, "mf_"), now, true, withEntities)
      : [];
    const terms = queryTerms(text);
    const goals = held.has("goal")
      ? this.sql
          .exec<GoalRow>(
            `SELECT * FROM goals WHERE status = 'active' AND channel IN (SELECT value FROM json_each(?))
             ORDER BY priority, created_at LIMIT ${BUNDLE_GOALS}`,
            channels,
          )
          .toArray()
          .map(goalOf)
      : [];
    const strategies = held.has("strategy") ? this.strategiesFor(terms, channels) : [];
    const fit = new SectionFitter(budget * 4);
    const bundle: MemoryBundle = {
      query: text,
      facts: [],
      entities: [],
      goals: [],
      strategies: [],
      turns: [],
      tokens: 0,
      truncated: false,
    };
    for (const { fact, score } of facts) {
      if (fit.take("facts", this.facts.derived(fact).line)) {
        // Shared: the bundle stays in the object, where only the ids of its facts are read.
        bundle.facts.push(
          shared
            ? (fact as MemoryBundle["facts"][number])
            : { ...fact, score: Math.round(score * 1e4) / 1e4 },
        );
      } else bundle.truncated = true;
    }
    for (const goal of goals) {
      if (fit.take("goals", goalLine(goal))) bundle.goals.push(goal);
      else bundle.truncated = true;
    }
    const entities = withEntities ? this.entitiesFor(terms, bundle.facts, channels) : [];
    for (const entity of entities) {
      if (fit.take("entities", entityLine(entity))) bundle.entities.push(entity);
      else bundle.truncated = true;
    }
    for (const strategy of strategies) {
      if (fit.take("strategies", strategyLine(strategy))) {
        bundle.strategies.push(strategy);
      } else bundle.truncated = true;
    }
    // Past turns last: what is known now (the facts) has the budget first. When no turn's
    // line can fit any more, ranking them (the memory of a long-used agent holds thousands)
    // would change nothing but whether one was left out, which one match answers.
    const contextId = query.contextId ?? null;
    const turnHits = hitsOf(hits, "mt_");
    let turns: Array<{ turn: MemoryTurn; score: number }> = [];
    if (held.has("turn")) {
      if (fit.fits("turns", SHORTEST_TURN_LINE)) {
        turns = this.turns.ranked(terms, channels, contextId, turnHits, now);
      } else if (!bundle.truncated && this.turns.any(terms, channels, contextId, turnHits)) {
        bundle.truncated = true;
      }
    }
    for (const { turn, score } of turns) {
      if (fit.take("turns", turnLine(turn))) {
        bundle.turns.push({ ...turn, score: Math.round(score * 1e4) / 1e4 });
      } else bundle.truncated = true;
    }
    bundle.tokens = fit.tokens();
    return { bundle, fitted: fit };
  }

  /**
   * Entities the query names (in its channels) first, then those of the recalled facts.
   * Equal salience goes to the one recorded first, then by name: the ids are random, so
   * two memories of the same content would list them apart.
   */
  private entitiesFor(terms: string[], facts: MemoryFact[], channels: Channels): MemoryEntity[] {
    const named =
      terms.length === 0
        ? []
        : this.sql
            .exec<EntityRow>(
              `SELECT f.* FROM entities f WHERE f.rid IN (
                 SELECT rowid FROM entities_fts WHERE entities_fts MATCH ?2 ORDER BY rank LIMIT ${BUNDLE_ENTITIES})
                 AND ${inChannels(1)}
               ORDER BY f.salience DESC, f.created_at, f.name`,
              channels,
              ftsQuery(terms),
            )
            .toArray();
    const linked = [...new Set(facts.flatMap((f) => f.entityIds))];
    const linkedRows =
      linked.length === 0
        ? []
        : this.sql
            .exec<EntityRow>(
              `SELECT * FROM entities WHERE id IN (SELECT value FROM json_each(?))
               ORDER BY salience DESC, created_at, name LIMIT ${BUNDLE_ENTITIES}`,
              JSON.stringify(linked),
            )
            .toArray();
    const out = new Map<string, MemoryEntity>();
    for (const row of [...named, ...linkedRows]) {
      if (out.size >= BUNDLE_ENTITIES) break;
      if (!out.has(row.id)) out.set(row.id, entityOf(row));
    }
    return [...out.values()];
  }

  /** Strategies whose context pattern matches, what worked first; what failed more is left out. */
  private strategiesFor(terms: string[], channels: string): MemoryStrategy[] {
    if (terms.length === 0) return [];
    const rows = this.sql
      .exec<StrategyRow & { bm: number }>(
        `SELECT s.*, bm25(strategies_fts) AS bm FROM strategies_fts JOIN strategies s ON s.rid = strategies_fts.rowid
         WHERE strategies_fts MATCH ? AND s.channel IN (SELECT value FROM json_each(?))
         ORDER BY bm LIMIT 20`,
        ftsQuery(terms),
        channels,
      )
      .toArray();
    const best = rows[0]?.bm;
    return rows
      .filter((r) => r.failure_count <= r.success_count)
      .map((r) => ({
        s: strategyOf(r),
        score: strategyScore(
          relevance(r.bm, best, undefined, false),
          r.success_count,
          r.failure_count,
        ),
      }))
      .sort((a, b) => b.score - a.score)
      .slice(0, BUNDLE_STRATEGIES)
      .map(({ s }) => s);
  }
}
