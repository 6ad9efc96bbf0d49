/**
 * How recall ranks memories: text match (the full-text index's bm25, and cosine similarity
 * when vectors exist), then confidence, salience and recency. Pure functions over numbers,
 * so the weights are tested and documented in one place.
 */

/** Words too common to say what a query is about; they would match nearly every memory. */
const STOPWORDS = new Set(
  (
    "a about above after again all am an and any are as at be because been before being " +
    "below between both but by can could did do does doing down during each few for from " +
    "further had has have having he her here hers herself him himself his how i if in into " +
    "is it its itself just me more most my myself no nor not now of off on once only or " +
    "other our ours ourselves out over own same she should so some such than that the their " +
    "theirs them themselves then there these they this those through to too under until up " +
    "very was we were what when where which while who whom why will with would you your " +
    "yours yourself yourselves im ive id dont doesnt didnt cant wont please tell know like " +
    "want get got give"
  ).split(" "),
);

/** Terms of a query the full-text index is asked for, at most this many. */
export const MAX_QUERY_TERMS = 24;

/**
 * The distinct words of a text worth matching: lower-cased letters and digits, stopwords
 * and one-letter words left out, at most `max`.
 * @example
 * queryTerms("What tea do I like?"); // ["tea"]
 */
export function queryTerms(text: string, max = MAX_QUERY_TERMS): string[] {
  const terms = new Set<string>();
  for (const match of text.toLowerCase().matchAll(/[\p{L}\p{N}]+/gu)) {
    const word = match[0];
    if (word.length < 2 || STOPWORDS.has(word)) continue;
    terms.add(word);
    if (terms.size >= max) break;
  }
  return [...terms];
}

/**
 * An FTS5 query matching any of the terms. Each is quoted, so nothing a user typed is read
 * as FTS5 syntax (NEAR, column filters, `*`); the terms hold only letters and digits.
 */
export function ftsQuery(terms: readonly string[]): string {
  return terms.map((term) => `"${term}"`).join(" OR ");
}

/** Weights of a fact's score; they sum to 1, so a score is in 0..1. */
export const FACT_WEIGHTS = {
  relevance: 0.55,
  confidence: 0.2,
  salience: 0.1,
  recency: 0.15,
} as const;

/** Days after which recency counts half. */
export const RECENCY_HALF_LIFE_DAYS = 30;

/** 1 for now, halving every `RECENCY_HALF_LIFE_DAYS` since `iso`. */
export function recency(iso: string | undefined, now: number): number {
  return recencyAt(iso ? Date.parse(iso) : Number.NaN, now);
}

/** `recency` of a time already parsed (epoch ms; NaN: none). */
export function recencyAt(at: number, now: number): number {
  if (Number.isNaN(at)) return 0;
  const days = Math.max(0, now - at) / 86_400_000;
  return 0.5 ** (days / RECENCY_HALF_LIFE_DAYS);
}

/**
 * Text relevance in 0..1 from FTS5's bm25 (lower is better, negative) relative to the best
 * of the same query; when vectors were searched too (`hybrid`), the mean of that and the
 * cosine similarity, a missing side counting 0, so neither side alone outranks both.
 */
export function relevance(
  bm25: number | undefined,
  best: number | undefined,
  cos: number | undefined,
  hybrid: boolean,
): number {
  const lexical =
    bm25 !== undefined && best !== undefined && best < 0 ? Math.min(1, bm25 / best) : 0;
  if (!hybrid) return lexical;
  return (lexical + Math.max(0, cos ?? 0)) / 2;
}

export interface FactSignals {
  relevance: number;
  confidence: number;
  /** Highest salience of the fact's entities (0.5 when it has none). */
  salience: number;
  recency: number;
  /** False for a fact whose validity has ended or not begun: it counts half. */
  current: boolean;
}

export function factScore(s: FactSignals): number {
  const score =
    FACT_WEIGHTS.relevance * s.relevance +
    FACT_WEIGHTS.confidence * s.confidence +
    FACT_WEIGHTS.salience * s.salience +
    FACT_WEIGHTS.recency * s.recency;
  return s.current ? score : score / 2;
}

/** Whether a fact's validity covers `now` (no bounds: always). */
export function isCurrent(
  validFrom: string | undefined,
  validTo: string | undefined,
  now: number,
): boolean {
  if (validFrom && Date.parse(validFrom) > now) return false;
  if (validTo && Date.parse(validTo) < now) return false;
  return true;
}

/**
 * How well a strategy worked: the Laplace-smoothed success rate, so an untried one counts
 * 0.5 and one that failed more than it worked falls below.
 */
export function successRate(successes: number, failures: number): number {
  return (successes + 1) / (successes + failures + 2);
}

export function strategyScore(rel: number, successes: number, failures: number): number {
  return (0.5 + rel / 2) * successRate(successes, failures);
}

/**
 * A past turn's score: mostly how well it matches the query, then how recent it is. A
 * turn has no confidence or salience of its own; only matching turns are ranked at all.
 */
export function turnScore(rel: number, recent: number): number {
  return 0.8 * rel + 0.2 * recent;
}

/** Whether `used` (tools a task called, in order) contains `sequence` in order. */
export function followsSequence(sequence: readonly string[], used: readonly string[]): boolean {
  if (sequence.length === 0) return false;
  let next = 0;
  for (const tool of used) {
    if (tool === sequence[next]) next++;
    if (next === sequence.length) return true;
  }
  return false;
}
