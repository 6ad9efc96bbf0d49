import { DurableObject } from "cloudflare:workers";
import { A2AError } from "../../protocol/errors";
import { nowIso } from "../../protocol/json";
import {
  DEFAULT_TOKEN_BUDGET,
  type MemoryApplyResult,
  type MemoryBundle,
  type MemoryFact,
  type MemoryItem,
  type MemoryKind,
  MemoryListQuery,
  type MemoryOp,
  MemoryOps,
  MemoryOrigin,
  type MemoryPage,
  type MemoryStats,
  type RecalledMemory,
  RememberQuery,
} from "../../protocol/memory";
import { attempt, type Result } from "../../storage/rpc-result";
import { createSchema, openSchema } from "../../storage/schema-version";
import type { Embedder, VectorIndex } from "../base/embedder";
import { type MemoryLimits, resolveMemoryLimits } from "../base/limits";
import { reserveExtractionCall } from "./extraction-window";
import { type ItemCounts, itemCounts, kindsHeld, statsOf } from "./item-counts";
import { AccessLog } from "./memory-access";
import {
  CHANGES_ONLY,
  checkItemSizes,
  emptyBundle,
  ItemRef,
  NeighboursQuery,
  nothingChanged,
  parse,
} from "./memory-input";
import { MemoryListing } from "./memory-listing";
import { embeddedIds, removeItem } from "./memory-removal";
import { MEMORY_SCHEMA } from "./memory-schema";
import { mirrorVectors, prepareOps, searchVectors, VECTOR_BATCH } from "./memory-vectors";
import { MemoryWriter, type Prepared } from "./memory-writer";
import { MemoryReader } from "./recall/memory-reader";
import { channelsOf, VECTOR_CANDIDATES, type VectorHits } from "./rows/recall-bounds";

/** What a memory object is configured with; supplied by the subclass `defineAgent` builds. */
export interface MemoryObjectOptions {
  limits?: Partial<MemoryLimits>;
  embedder?: Embedder;
  /** Name of a Vectorize index binding in the Worker's env, for memories past the local size. */
  vectorize?: string;
  /** Live facts with vectors searched inside the object before the Vectorize index is used. */
  localVectorLimit?: number;
}

/**
 * The object's RPC surface as the Worker calls it. Each method answers a Result: protocol
 * errors (InvalidParams naming the field, MemoryFull) cross the boundary as data.
 */
export type MemoryRpc = Pick<
  MemoryObject,
  | "apply"
  | "remember"
  | "recall"
  | "neighbours"
  | "list"
  | "get"
  | "remove"
  | "erase"
  | "stats"
  | "reserveExtraction"
>;

/**
 * Live facts with vectors searched inside the object (a scan of their Float32 blobs);
 * past this, vector search goes to the Vectorize index when one is configured, and
 * recall is by text alone when none is.
 */
export const LOCAL_VECTOR_LIMIT = 5_000;
/**
 * One memory (a user's, by default, within a tenant): facts, entities, goals, strategies
 * and turns as SQLite rows with full-text indexes. A read on a memory never written
 * creates nothing and answers empty.
 * @example
 * // The Worker's side (see `openMemory`): one object per tenant and scope key.
 * const memory = openMemory(env.EDGELINK_MEMORY, tenant, ownerOf(principal));
 * await memory.apply([{ op: "add_fact", claim: "Prefers green tea", source: "user_stated" }]);
 */
export class MemoryObject<Env = unknown> extends DurableObject<Env> {
  /** The memory's configuration; a subclass overrides this getter (on its prototype). */
  protected get memoryOptions(): MemoryObjectOptions {
    return {};
  }

  /** True until the first write: the object holds nothing and has no schema. */
  private empty: boolean;
  /** Storage this release must not touch (a later release's schema): every call answers it. */
  private readonly refused: A2AError | null;

  /** Whether the object holds nothing; throws the refusal for storage it must not touch. */
  private get vacant(): boolean {
    if (this.refused) throw this.refused;
    return this.empty;
  }
  private readonly reader: MemoryReader;
  private readonly listing: MemoryListing;
  private readonly access: AccessLog;
  private resolved: { from: Partial<MemoryLimits> | undefined; limits: MemoryLimits } | null = null;
  /** Live facts with vectors, once counted; forgotten at every write. */
  private vectorCount: number | null = null;
  /** The kinds of item the memory holds, once read; forgotten at every write. */
  private heldKinds: Set<MemoryKind> | null = null;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    const opened = openSchema(ctx.storage, MEMORY_SCHEMA);
    this.empty = opened.vacant;
    this.refused = opened.refused;
    this.reader = new MemoryReader(ctx.storage.sql);
    this.listing = new MemoryListing(ctx.storage.sql);
    this.access = new AccessLog(ctx.storage.sql, (counts, at) => this.reader.accessed(counts, at));
  }

  /** The configured limits over the defaults (read again when the configuration changes). */
  protected get limits(): MemoryLimits {
    const from = this.memoryOptions.limits;
    if (!this.resolved || this.resolved.from !== from) {
      this.resolved = { from, limits: resolveMemoryLimits(from) };
    }
    return this.resolved.limits;
  }

  /** The external vector index, when one is configured: the binding named by `vectorize`. */
  protected vectorIndex(): VectorIndex | null {
    const name = this.memoryOptions.vectorize;
    if (!name) return null;
    const binding = (this.env as Record<string, unknown>)[name] as Partial<VectorIndex> | undefined;
    if (typeof binding?.query !== "function") {
      throw new A2AError(
        "Misconfigured",
        `memory.vectorize names the binding ${name}, but the Worker has no Vectorize index by that name`,
      );
    }
    return binding as VectorIndex;
  }

  /** Writes the access counts of recent recalls now (the bench counts them per recall). */
  protected flushAccess(): void {
    if (!this.vacant) this.access.flush();
  }

  /** Each memory's vectors live in their own namespace of the shared index. */
  private get namespace(): string {
    return this.ctx.id.toString();
  }

  private ensureSchema(): void {
    if (!this.vacant) return;
    createSchema(this.ctx.storage, MEMORY_SCHEMA);
    this.empty = false;
  }

  // ---- RPC ---------------------------------------------------------------------------

  /** Applies operations in order, all or nothing (a full memory refuses the whole batch). */
  apply(ops: MemoryOp[], origin?: MemoryOrigin): Promise<Result<MemoryApplyResult>> {
    return attempt("memory object", async () => {
      const checked = parse(MemoryOps, ops, "ops");
      const from = parse(MemoryOrigin, origin ?? {}, "origin");
      const limits = this.limits;
      checkItemSizes(checked, limits.maxItemBytes);
      if (this.vacant && checked.every((op) => CHANGES_ONLY.has(op.op))) {
        return nothingChanged(checked);
      }
      const prepared = await this.prepare(checked);
      this.ensureSchema();
      const writer = new MemoryWriter(this.ctx.storage.sql, limits, nowIso(), from, prepared);
      let turnsOnly = false;
      let result: MemoryApplyResult;
      try {
        result = this.ctx.storage.transactionSync(() => {
          this.access.flush();
          return writer.applyAll(checked);
        });
        turnsOnly = writer.turnsOnly;
      } finally {
        // A failed batch was rolled back, counts included: everything kept is forgotten.
        this.forgetCounts(turnsOnly);
      }
      await this.syncVectors(writer.vectors.upsert, writer.vectors.remove, prepared);
      return result;
    });
  }

  /** The memories relevant to a query, within its token budget; counts each one recalled. */
  remember(query: RememberQuery): Promise<Result<MemoryBundle>> {
    return attempt("memory object", async () => {
      const q = parse(RememberQuery, query);
      if (this.vacant) return emptyBundle(q.text);
      return (await this.recallFor(q)).bundle;
    });
  }

  /**
   * What a model turn needs of `remember`: the same memories, counted the same way, as
   * the rendered prompt section only. Rendered here as the budget is filled, so the
   * bundle never crosses the boundary and the caller renders nothing.
   */
  recall(query: RememberQuery): Promise<Result<RecalledMemory>> {
    return attempt("memory object", async () => {
      const q = parse(RememberQuery, query);
      if (this.vacant) return { section: "", tokens: 0, truncated: false };
      const { bundle, fitted } = await this.recallFor(q, true);
      return { section: fitted.text(), tokens: bundle.tokens, truncated: bundle.truncated };
    });
  }

  /** The closest live facts to each claim (no access counted): for extraction's decisions. */
  neighbours(claims: string[], k: number): Promise<Result<MemoryFact[][]>> {
    return attempt("memory object", async () => {
      const q = parse(NeighboursQuery, { claims, k });
      if (this.vacant) return q.claims.map(() => []);
      this.access.flush();
      const hits = await this.vectorHits(q.claims, null, false);
      return this.reader.neighbours(q.claims, q.k, hits);
    });
  }

  list(query: MemoryListQuery): Promise<Result<MemoryPage>> {
    return attempt("memory object", () => {
      const q = parse(MemoryListQuery, query);
      if (this.vacant) return { items: [], nextPageToken: "" };
      this.access.flush();
      return this.listing.list(q);
    });
  }

  get(kind: MemoryKind, id: string): Promise<Result<MemoryItem | null>> {
    return attempt("memory object", () => {
      const ref = parse(ItemRef, { kind, id });
      if (this.vacant) return null;
      this.access.flush();
      return this.listing.get(ref.kind, ref.id);
    });
  }

  /** Deletes one item; a goal's subgoals move up to its parent. */
  remove(kind: MemoryKind, id: string): Promise<Result<boolean>> {
    return attempt("memory object", async () => {
      const ref = parse(ItemRef, { kind, id });
      if (this.vacant) return false;
      this.access.flush();
      this.forgetCounts();
      const removed = this.ctx.storage.transactionSync(() =>
        removeItem(this.ctx.storage.sql, ref.kind, ref.id, nowIso()),
      );
      if (removed && (ref.kind === "fact" || ref.kind === "turn")) {
        await this.syncVectors([], [ref.id], null);
      }
      return removed;
    });
  }

  /**
   * Deletes everything, storage included (and the memory's vectors in an external index):
   * nothing is recallable afterwards, and the object is as if never written.
   */
  erase(): Promise<Result<{ erased: number }>> {
    return attempt("memory object", async () => {
      this.access.drop();
      if (this.vacant) {
        await this.ctx.storage.deleteAll();
        return { erased: 0 };
      }
      const erased = this.counts().total;
      const index = this.vectorIndex();
      if (index) {
        const ids = embeddedIds(this.ctx.storage.sql);
        for (let i = 0; i < ids.length; i += VECTOR_BATCH) {
          await index.deleteByIds(ids.slice(i, i + VECTOR_BATCH));
        }
      }
      await this.ctx.storage.deleteAll();
      this.empty = true;
      this.forgetCounts();
      return { erased };
    });
  }

  stats(): Promise<Result<MemoryStats>> {
    return attempt("memory object", () => {
      return statsOf(this.counts());
    });
  }

  /**
   * Reserves one extraction call in the current hour (UTC, a fixed window): true when
   * fewer than `limits.extractionCallsPerHour` were reserved in it, false otherwise.
   */
  reserveExtraction(): Promise<Result<boolean>> {
    return attempt("memory object", () => {
      const max = this.limits.extractionCallsPerHour;
      if (max === 0) return false;
      this.ensureSchema();
      return reserveExtractionCall(this.ctx.storage.sql, max, Date.now());
    });
  }

  // ---- helpers -----------------------------------------------------------------------

  private counts(): ItemCounts {
    return this.vacant ? { total: 0, byKind: {} } : itemCounts(this.ctx.storage.sql);
  }

  /**
   * The bundle of a checked query, its access counted (written shortly after). `section`:
   * only the rendered section leaves the object, so the bundle holds the kept facts
   * themselves, uncopied and uncounted (their counts change when the counts are written).
   */
  private async recallFor(q: RememberQuery, section = false) {
    const held = this.held();
    const [hits] = await this.vectorHits([q.text], channelsOf(q.channel), held.has("turn"));
    const recalled = this.reader.bundle(
      q,
      q.tokenBudget ?? DEFAULT_TOKEN_BUDGET,
      hits ?? new Map(),
      Date.now(),
      held,
      section,
    );
    this.access.record(recalled.bundle, nowIso(), !section);
    return recalled;
  }

  /** The kinds the memory holds items of (read once, until the next write). */
  private held(): ReadonlySet<MemoryKind> {
    this.heldKinds ??= kindsHeld(this.counts());
    return this.heldKinds;
  }

  /**
   * What the object knows of its counts is stale after a write. A write of past turns
   * alone (recording a turn, the write after every model turn) keeps the facts read: the
   * held kinds gain turns (a kind held with no items left only costs a query).
   */
  private forgetCounts(turnsOnly = false): void {
    this.vectorCount = null;
    if (turnsOnly) this.heldKinds?.add("turn");
    else this.heldKinds = null;
    this.reader.forget(turnsOnly);
  }

  private prepare(ops: readonly MemoryOp[]): Promise<Prepared> {
    return prepareOps(ops, this.memoryOptions.embedder);
  }

  /**
   * Vector search for each text (of facts, and of turns with `turns`): in the object up to
   * its limit, else the external index.
   */
  private vectorHits(
    texts: string[],
    channels: string | null,
    turns: boolean,
  ): Promise<VectorHits[]> {
    const embedder = this.memoryOptions.embedder;
    if (!embedder || texts.every((t) => t.trim() === ""))
      return Promise.resolve(texts.map(() => new Map()));
    this.vectorCount ??= this.reader.vectorCount();
    const local = this.vectorCount <= (this.memoryOptions.localVectorLimit ?? LOCAL_VECTOR_LIMIT);
    return searchVectors(texts, embedder, {
      scan: local ? (vector) => this.scan(vector, channels, turns) : null,
      index: local ? null : this.vectorIndex(),
      namespace: this.namespace,
    });
  }

  private scan(vector: Float32Array, channels: string | null, turns: boolean): VectorHits {
    const hits = this.reader.scanVectors(vector, channels, VECTOR_CANDIDATES);
    if (!turns) return hits;
    for (const [id, score] of this.reader.scanVectors(
      vector,
      channels,
      VECTOR_CANDIDATES,
      "turn",
    )) {
      hits.set(id, score);
    }
    return hits;
  }

  private syncVectors(
    upsert: Array<{ id: string; index: number }>,
    remove: string[],
    prepared: Prepared | null,
  ): Promise<void> {
    return mirrorVectors(this.vectorIndex(), this.namespace, upsert, remove, prepared);
  }
}

export type { VectorIndex };
