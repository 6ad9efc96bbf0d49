import {
  GLOBAL_CHANNEL,
  type MemoryApplyResult,
  type MemoryOp,
  type MemoryOrigin,
} from "../../protocol/memory";
import type { MemoryLimits } from "../base/limits";
import { memoryFull } from "../base/limits";
import { deleteEntity, upsertEntity } from "./memory-entities";
import { addStrategy, setGoal, strategyOutcome, updateGoal } from "./memory-goals";
import {
  memoryId,
  type Op,
  type OpResult,
  textBytes,
  turnBytes,
  unknownItem,
  type WriteContext,
} from "./rows/memory-rows";

export { deleteEntity };

/**
 * Marks the turns of the task a fact was learnt in as corrected, as the fact is
 * superseded or deleted: they say what is no longer true, so recall leaves them out.
 */
export function correctTurnsOf(sql: SqlStorage, factId: string, now: string): void {
  sql.exec(
    `UPDATE turns SET corrected_at = ?1 WHERE corrected_at IS NULL
       AND task_id = (SELECT task_id FROM facts WHERE id = ?2)`,
    now,
    factId,
  );
}

/** What the object worked out before writing (hashing and embedding are asynchronous). */
export interface Prepared {
  /** Claim hash of each fact operation, by its index in the batch. */
  hashes: Map<number, string>;
  /** Vector of each fact operation's claim, when an embedder gave one. */
  vectors: Map<number, ArrayBuffer>;
}

/** Vector ids to change in an external index once the transaction is in. */
export interface VectorChanges {
  upsert: Array<{ id: string; index: number }>;
  remove: string[];
}

/** Superseded facts past their retention deleted per write (the rest go with later writes). */
const PURGE_BATCH = 100;

/**
 * Applies memory operations to the object's SQLite, synchronously, inside the object's
 * transaction: a batch is applied whole or not at all.
 */
export class MemoryWriter implements WriteContext {
  readonly vectors: VectorChanges = { upsert: [], remove: [] };
  /**
   * True while the batch changed past turns alone (recording a model turn): what the
   * object keeps of its facts then stays true, so the next recall need not read them again.
   */
  turnsOnly = true;

  constructor(
    readonly sql: SqlStorage,
    readonly limits: MemoryLimits,
    readonly now: string,
    private readonly origin: MemoryOrigin,
    private readonly prepared: Prepared,
  ) {}

  applyAll(ops: readonly MemoryOp[]): MemoryApplyResult {
    this.purgeSuperseded();
    this.purgeTurns();
    return { results: ops.map((op, i) => this.applyOne(op, i)) };
  }

  private applyOne(op: MemoryOp, i: number): OpResult {
    if (op.op !== "add_turn") this.turnsOnly = false;
    switch (op.op) {
      case "add_fact":
        return this.addFact(op, i);
      case "supersede_fact":
        return this.supersedeFact(op, i);
      case "delete_fact":
        correctTurnsOf(this.sql, op.id, this.now);
        return this.deleteFact(op.id)
          ? { op: op.op, status: "deleted", id: op.id }
          : unknownItem(op);
      case "upsert_entity":
        return upsertEntity(this, op);
      case "set_goal":
        return setGoal(this, op);
      case "update_goal":
        return updateGoal(this, op);
      case "add_strategy":
        return addStrategy(this, op);
      case "strategy_outcome":
        return strategyOutcome(this, op);
      case "add_turn":
        return this.addTurn(op, i);
    }
  }

  // ---- facts ------------------------------------------------------------------------

  private liveFactByHash(hash: string): string | null {
    const row = this.sql
      .exec<{ id: string }>(
        "SELECT id FROM facts WHERE claim_hash = ? AND superseded_by IS NULL",
        hash,
      )
      .toArray()[0];
    return row?.id ?? null;
  }

  private addFact(op: Op<"add_fact">, i: number): OpResult {
    const hash = this.prepared.hashes.get(i) as string;
    const existing = this.liveFactByHash(hash);
    if (existing) return { op: op.op, status: "duplicate", id: existing };
    return { op: op.op, status: "added", id: this.insertFact(op, i, hash) };
  }

  private insertFact(
    op: Op<"add_fact"> | Op<"supersede_fact">,
    i: number,
    hash: string,
    supersedes?: string,
    id = memoryId("mf"),
  ): string {
    this.makeRoom(1);
    const vector = this.prepared.vectors.get(i) ?? null;
    this.sql.exec(
      `INSERT INTO facts (id, claim, claim_hash, confidence, source, channel, valid_from, valid_to,
        supersedes, created_at, updated_at, task_id, context_id, bytes, embedding)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      id,
      op.claim,
      hash,
      op.confidence ?? 0.8,
      op.source ?? "extraction",
      op.channel ?? GLOBAL_CHANNEL,
      op.validFrom ?? null,
      op.validTo ?? null,
      supersedes ?? null,
      this.now,
      this.now,
      this.origin.taskId ?? null,
      this.origin.contextId ?? null,
      textBytes(op.claim),
      vector,
    );
    if (vector) this.vectors.upsert.push({ id, index: i });
    for (const name of op.entities ?? []) {
      const entity = upsertEntity(this, { op: "upsert_entity", name, channel: op.channel });
      if (entity.id) {
        this.sql.exec(
          "INSERT OR IGNORE INTO fact_entities (fact_id, entity_id) VALUES (?, ?)",
          id,
          entity.id,
        );
      }
    }
    return id;
  }

  private supersedeFact(op: Op<"supersede_fact">, i: number): OpResult {
    const old = this.sql
      .exec<{ claim_hash: string; superseded_by: string | null }>(
        "SELECT claim_hash, superseded_by FROM facts WHERE id = ?",
        op.id,
      )
      .toArray()[0];
    if (!old) return unknownItem(op);
    if (old.superseded_by !== null) {
      return {
        op: op.op,
        status: "refused",
        id: op.id,
        reason: `already superseded by ${old.superseded_by}`,
      };
    }
    const hash = this.prepared.hashes.get(i) as string;
    if (hash === old.claim_hash) return { op: op.op, status: "unchanged", id: op.id };
    // The old fact leaves the live set first, so the new one's hash is free of it.
    const existing = this.liveFactByHash(hash);
    const newId = existing ?? memoryId("mf");
    correctTurnsOf(this.sql, op.id, this.now);
    this.sql.exec(
      "UPDATE facts SET superseded_by = ?, superseded_at = ?, updated_at = ? WHERE id = ?",
      newId,
      this.now,
      this.now,
      op.id,
    );
    this.vectors.remove.push(op.id);
    if (existing) {
      // The correction is already known: link it to the fact it corrects.
      this.sql.exec(
        "UPDATE facts SET supersedes = coalesce(supersedes, ?), updated_at = ? WHERE id = ?",
        op.id,
        this.now,
        existing,
      );
      return { op: op.op, status: "updated", id: existing };
    }
    this.insertFact(op, i, hash, op.id, newId);
    return { op: op.op, status: "updated", id: newId };
  }

  /** Deletes a fact (live or superseded) and its links. */
  deleteFact(id: string): boolean {
    const gone = this.sql.exec("DELETE FROM facts WHERE id = ?", id).rowsWritten > 0;
    if (!gone) return false;
    this.turnsOnly = false;
    this.sql.exec("DELETE FROM fact_entities WHERE fact_id = ?", id);
    this.vectors.remove.push(id);
    return true;
  }

  /** Deletes superseded facts kept past their retention, a batch at a time. */
  private purgeSuperseded(): void {
    const before = new Date(
      Date.parse(this.now) - this.limits.supersededRetentionDays * 86_400_000,
    ).toISOString();
    const ids = this.sql
      .exec<{ id: string }>(
        `SELECT id FROM facts WHERE superseded_by IS NOT NULL AND superseded_at <= ?
         ORDER BY superseded_at LIMIT ${PURGE_BATCH}`,
        before,
      )
      .toArray();
    for (const { id } of ids) this.deleteFact(id);
  }

  /** Deletes turns past their retention (from when they were said), a batch at a time. */
  private purgeTurns(): void {
    const before = new Date(
      Date.parse(this.now) - this.limits.turnRetentionDays * 86_400_000,
    ).toISOString();
    const ids = this.sql
      .exec<{ id: string }>(
        `SELECT id FROM turns WHERE created_at < ? ORDER BY created_at LIMIT ${PURGE_BATCH}`,
        before,
      )
      .toArray();
    for (const { id } of ids) this.deleteTurn(id);
  }

  /** Deletes a turn (and its vector from an external index). */
  deleteTurn(id: string): boolean {
    const gone = this.sql.exec("DELETE FROM turns WHERE id = ?", id).rowsWritten > 0;
    if (gone) this.vectors.remove.push(id);
    return gone;
  }

  private addTurn(op: Op<"add_turn">, i: number): OpResult {
    this.makeRoom(1);
    const id = memoryId("mt");
    const contextId = op.contextId ?? this.origin.contextId ?? null;
    // Each turn stored gets the next index of its conversation.
    const index =
      this.sql
        .exec<{ n: number }>(
          "SELECT coalesce(max(idx), 0) + 1 AS n FROM turns WHERE context_id IS ?",
          contextId,
        )
        .toArray()[0]?.n ?? 1;
    const metadata = op.metadata && Object.keys(op.metadata).length ? op.metadata : null;
    const vector = this.prepared.vectors.get(i) ?? null;
    this.sql.exec(
      `INSERT INTO turns (id, context_id, idx, created_at, role, text, token_count, embedding,
         metadata, channel, task_id, bytes)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      id,
      contextId,
      index,
      op.timestamp ? new Date(op.timestamp).toISOString() : this.now,
      op.role,
      op.content,
      op.tokenCount ?? null,
      vector,
      metadata ? JSON.stringify(metadata) : "{}",
      op.channel ?? GLOBAL_CHANNEL,
      op.taskId ?? this.origin.taskId ?? null,
      turnBytes(op.content, metadata),
    );
    if (vector) this.vectors.upsert.push({ id, index: i });
    return { op: op.op, status: "added", id };
  }

  // ---- limits -------------------------------------------------------------------------

  private itemCount(): number {
    const row = this.sql
      .exec<{ n: number | null }>("SELECT sum(n) AS n FROM item_counts")
      .toArray()[0];
    return row?.n ?? 0;
  }

  /**
   * Room for `count` more items: a full memory refuses (MemoryFull, and the whole batch is
   * rolled back) or, configured to evict, deletes its least valuable items first.
   */
  makeRoom(count: number): void {
    let over = this.itemCount() + count - this.limits.maxItems;
    while (over > 0) {
      if (this.limits.whenFull === "refuse" || !this.evictOne()) {
        throw memoryFull(this.limits.maxItems);
      }
      over--;
    }
  }

  /**
   * Deletes the least valuable item: a superseded fact (oldest first), then a turn (oldest
   * first), then an entity no live fact names (least salient first), then a live fact
   * (least confident, oldest first). Goals and strategies are never evicted.
   */
  private evictOne(): boolean {
    const superseded = this.sql
      .exec<{ id: string }>(
        "SELECT id FROM facts WHERE superseded_by IS NOT NULL ORDER BY superseded_at LIMIT 1",
      )
      .toArray()[0];
    if (superseded) return this.deleteFact(superseded.id);
    const turn = this.sql
      .exec<{ id: string }>("SELECT id FROM turns ORDER BY rid LIMIT 1")
      .toArray()[0];
    if (turn) return this.deleteTurn(turn.id);
    const entity = this.sql
      .exec<{ id: string }>(
        `SELECT id FROM entities e WHERE NOT EXISTS (
           SELECT 1 FROM fact_entities fe WHERE fe.entity_id = e.id)
         ORDER BY salience, rid LIMIT 1`,
      )
      .toArray()[0];
    if (entity) {
      this.turnsOnly = false;
      deleteEntity(this.sql, entity.id);
      return true;
    }
    const fact = this.sql
      .exec<{ id: string }>(
        `SELECT id FROM facts WHERE superseded_by IS NULL
         ORDER BY confidence, rid LIMIT 1`,
      )
      .toArray()[0];
    return fact ? this.deleteFact(fact.id) : false;
  }
}
