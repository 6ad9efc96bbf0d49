import type { MemoryLimits } from "../memory/limits";
import { memoryFull } from "../memory/limits";
import { followsSequence, ftsQuery, queryTerms } from "../memory/rank";
import {
  GLOBAL_CHANNEL,
  type MemoryApplyResult,
  type MemoryOp,
  type MemoryOrigin,
} from "../models/memory";
import { type EntityRow, type GoalRow, memoryId, type StrategyRow, textBytes } from "./memory-rows";

type Result = MemoryApplyResult["results"][number];
type Op<K extends MemoryOp["op"]> = Extract<MemoryOp, { op: K }>;

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

/** Goals nest at most this deep: a chain longer than this is refused. */
export const MAX_GOAL_DEPTH = 16;
/** Names (the name and its aliases) one entity keeps, merges included. */
export const MAX_ENTITY_NAMES = 64;
/** Superseded facts past their retention deleted per write (the rest go with later writes). */
const PURGE_BATCH = 100;
/** Strategies one outcome may update. */
const OUTCOME_CANDIDATES = 100;

/**
 * Applies memory operations to the object's SQLite, synchronously, inside the object's
 * transaction: a batch is applied whole or not at all.
 */
export class MemoryWriter {
  readonly vectors: VectorChanges = { upsert: [], remove: [] };

  constructor(
    private readonly sql: SqlStorage,
    private readonly limits: MemoryLimits,
    private readonly now: string,
    private readonly origin: MemoryOrigin,
    private readonly prepared: Prepared,
  ) {}

  applyAll(ops: readonly MemoryOp[]): MemoryApplyResult {
    this.purgeSuperseded();
    return { results: ops.map((op, i) => this.applyOne(op, i)) };
  }

  private applyOne(op: MemoryOp, i: number): Result {
    switch (op.op) {
      case "add_fact":
        return this.addFact(op, i);
      case "supersede_fact":
        return this.supersedeFact(op, i);
      case "delete_fact":
        return this.deleteFact(op.id) ? { op: op.op, status: "deleted", id: op.id } : unknown(op);
      case "upsert_entity":
        return this.upsertEntity(op);
      case "set_goal":
        return this.setGoal(op);
      case "update_goal":
        return this.updateGoal(op);
      case "add_strategy":
        return this.addStrategy(op);
      case "strategy_outcome":
        return this.strategyOutcome(op);
      case "add_turn":
        return this.addTurn(op);
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

  private addFact(op: Op<"add_fact">, i: number): Result {
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
      const entity = this.upsertEntity({ op: "upsert_entity", name, channel: op.channel });
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

  private supersedeFact(op: Op<"supersede_fact">, i: number): Result {
    const old = this.sql
      .exec<{ claim_hash: string; superseded_by: string | null }>(
        "SELECT claim_hash, superseded_by FROM facts WHERE id = ?",
        op.id,
      )
      .toArray()[0];
    if (!old) return unknown(op);
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

  // ---- entities -----------------------------------------------------------------------

  private upsertEntity(op: Op<"upsert_entity">): Result {
    const names = distinctNames([op.name, ...(op.aliases ?? [])]);
    const owners = this.sql
      .exec<EntityRow>(
        `SELECT e.* FROM entities e WHERE e.id IN (
           SELECT entity_id FROM entity_names WHERE name IN (SELECT value FROM json_each(?)))
         ORDER BY e.rid`,
        JSON.stringify(names.map((n) => n.toLowerCase())),
      )
      .toArray();
    if (owners.length === 0) {
      this.makeRoom(1);
      const id = memoryId("me");
      const [name, ...aliases] = names as [string, ...string[]];
      this.sql.exec(
        `INSERT INTO entities (id, name, type, aliases, names, salience, channel, created_at, updated_at, bytes)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        id,
        name,
        op.type ?? null,
        JSON.stringify(aliases),
        names.join(" "),
        op.salience ?? 0.5,
        op.channel ?? GLOBAL_CHANNEL,
        this.now,
        this.now,
        textBytes(op.type, ...names),
      );
      for (const n of names) {
        this.sql.exec(
          "INSERT INTO entity_names (name, entity_id) VALUES (?, ?)",
          n.toLowerCase(),
          id,
        );
      }
      return { op: op.op, status: "added", id };
    }
    // One entity per name: every entity holding one of these names becomes the oldest.
    const [keep, ...merged] = owners as [EntityRow, ...EntityRow[]];
    const all = distinctNames([
      keep.name,
      ...(JSON.parse(keep.aliases) as string[]),
      ...merged.flatMap((e) => [e.name, ...(JSON.parse(e.aliases) as string[])]),
      ...names,
    ]);
    if (all.length > MAX_ENTITY_NAMES) {
      return {
        op: op.op,
        status: "refused",
        id: keep.id,
        reason: `an entity keeps at most ${MAX_ENTITY_NAMES} names`,
      };
    }
    const aliases = all.slice(1);
    const salience = Math.max(op.salience ?? 0, keep.salience, ...merged.map((e) => e.salience));
    const salienceNow = op.salience ?? salience;
    const type = op.type ?? keep.type ?? merged.find((e) => e.type)?.type ?? null;
    const accessCount = keep.access_count + merged.reduce((n, e) => n + e.access_count, 0);
    const changed =
      merged.length > 0 ||
      all.length !== 1 + (JSON.parse(keep.aliases) as string[]).length ||
      salienceNow !== keep.salience ||
      type !== keep.type;
    if (!changed) return { op: op.op, status: "unchanged", id: keep.id };
    const bytes = textBytes(type ?? undefined, ...all);
    if (bytes > this.limits.maxItemBytes) {
      return {
        op: op.op,
        status: "refused",
        id: keep.id,
        reason: "the entity would pass memory.limits.maxItemBytes",
      };
    }
    for (const other of merged) {
      this.sql.exec(
        `INSERT OR IGNORE INTO fact_entities (fact_id, entity_id)
         SELECT fact_id, ? FROM fact_entities WHERE entity_id = ?`,
        keep.id,
        other.id,
      );
      this.sql.exec("DELETE FROM fact_entities WHERE entity_id = ?", other.id);
      this.sql.exec("UPDATE entity_names SET entity_id = ? WHERE entity_id = ?", keep.id, other.id);
      this.sql.exec("DELETE FROM entities WHERE id = ?", other.id);
    }
    for (const n of all) {
      this.sql.exec(
        "INSERT INTO entity_names (name, entity_id) VALUES (?, ?) ON CONFLICT (name) DO NOTHING",
        n.toLowerCase(),
        keep.id,
      );
    }
    this.sql.exec(
      `UPDATE entities SET aliases = ?, names = ?, salience = ?, type = ?, access_count = ?,
         updated_at = ?, bytes = ? WHERE id = ?`,
      JSON.stringify(aliases),
      all.join(" "),
      salienceNow,
      type,
      accessCount,
      this.now,
      bytes,
      keep.id,
    );
    return { op: op.op, status: "updated", id: keep.id };
  }

  // ---- goals --------------------------------------------------------------------------

  private goal(id: string): GoalRow | undefined {
    return this.sql.exec<GoalRow>("SELECT * FROM goals WHERE id = ?", id).toArray()[0];
  }

  /** The ids from `id` up to its root goal, at most one past the depth limit. */
  private ancestry(id: string): string[] {
    const chain: string[] = [];
    let at: string | null = id;
    while (at !== null && chain.length <= MAX_GOAL_DEPTH) {
      chain.push(at);
      at = this.goal(at)?.parent_id ?? null;
    }
    return chain;
  }

  private setGoal(op: Op<"set_goal">): Result {
    if (op.parentId !== undefined) {
      if (!this.goal(op.parentId))
        return { op: op.op, status: "refused", reason: `no goal ${op.parentId}` };
      if (this.ancestry(op.parentId).length >= MAX_GOAL_DEPTH) {
        return {
          op: op.op,
          status: "refused",
          reason: `goals nest at most ${MAX_GOAL_DEPTH} deep`,
        };
      }
    }
    this.makeRoom(1);
    const id = memoryId("mg");
    this.sql.exec(
      `INSERT INTO goals (id, title, description, status, priority, parent_id, deadline, channel, created_at, updated_at, bytes)
       VALUES (?, ?, ?, 'active', ?, ?, ?, ?, ?, ?, ?)`,
      id,
      op.title,
      op.description ?? null,
      op.priority ?? 3,
      op.parentId ?? null,
      op.deadline ?? null,
      op.channel ?? GLOBAL_CHANNEL,
      this.now,
      this.now,
      textBytes(op.title, op.description),
    );
    return { op: op.op, status: "added", id };
  }

  private updateGoal(op: Op<"update_goal">): Result {
    const goal = this.goal(op.id);
    if (!goal) return unknown(op);
    if (op.parentId !== undefined && op.parentId !== goal.parent_id) {
      if (!this.goal(op.parentId))
        return { op: op.op, status: "refused", id: op.id, reason: `no goal ${op.parentId}` };
      const chain = this.ancestry(op.parentId);
      if (chain.includes(op.id)) {
        return {
          op: op.op,
          status: "refused",
          id: op.id,
          reason: "a goal cannot be its own ancestor",
        };
      }
      if (chain.length >= MAX_GOAL_DEPTH) {
        return {
          op: op.op,
          status: "refused",
          id: op.id,
          reason: `goals nest at most ${MAX_GOAL_DEPTH} deep`,
        };
      }
    }
    const next = {
      title: op.title ?? goal.title,
      description: op.description ?? goal.description,
      status: op.status ?? goal.status,
      priority: op.priority ?? goal.priority,
      deadline: op.deadline ?? goal.deadline,
      parent_id: op.parentId ?? goal.parent_id,
    };
    const same = (Object.keys(next) as (keyof typeof next)[]).every((k) => next[k] === goal[k]);
    if (same) return { op: op.op, status: "unchanged", id: op.id };
    const bytes = textBytes(next.title, next.description ?? undefined);
    if (bytes > this.limits.maxItemBytes) {
      return {
        op: op.op,
        status: "refused",
        id: op.id,
        reason: "the goal would pass memory.limits.maxItemBytes",
      };
    }
    this.sql.exec(
      `UPDATE goals SET title = ?, description = ?, status = ?, priority = ?, deadline = ?,
         parent_id = ?, updated_at = ?, bytes = ? WHERE id = ?`,
      next.title,
      next.description,
      next.status,
      next.priority,
      next.deadline,
      next.parent_id,
      this.now,
      bytes,
      op.id,
    );
    return { op: op.op, status: "updated", id: op.id };
  }

  // ---- strategies and turns ----------------------------------------------------------

  private addStrategy(op: Op<"add_strategy">): Result {
    const sequence = JSON.stringify(op.toolSequence);
    const existing = this.sql
      .exec<{ id: string }>(
        "SELECT id FROM strategies WHERE context_pattern = ? AND tool_sequence = ?",
        op.contextPattern,
        sequence,
      )
      .toArray()[0];
    if (existing) return { op: op.op, status: "duplicate", id: existing.id };
    this.makeRoom(1);
    const id = memoryId("ms");
    this.sql.exec(
      `INSERT INTO strategies (id, context_pattern, tool_sequence, channel, created_at, updated_at, bytes)
       VALUES (?, ?, ?, ?, ?, ?, ?)`,
      id,
      op.contextPattern,
      sequence,
      op.channel ?? GLOBAL_CHANNEL,
      this.now,
      this.now,
      textBytes(op.contextPattern, ...op.toolSequence),
    );
    return { op: op.op, status: "added", id };
  }

  /**
   * A finished task's outcome counts for every strategy whose context pattern shares a
   * word with the task's text and whose tool sequence the task followed, in order.
   */
  private strategyOutcome(op: Op<"strategy_outcome">): Result {
    const terms = queryTerms(op.text);
    if (terms.length === 0 || op.toolSequence.length === 0)
      return { op: op.op, status: "unchanged" };
    const candidates = this.sql
      .exec<StrategyRow>(
        `SELECT s.* FROM strategies s WHERE s.rid IN (
           SELECT rowid FROM strategies_fts WHERE strategies_fts MATCH ? LIMIT ${OUTCOME_CANDIDATES})`,
        ftsQuery(terms),
      )
      .toArray();
    const matched = candidates.filter((s) =>
      followsSequence(JSON.parse(s.tool_sequence) as string[], op.toolSequence),
    );
    if (matched.length === 0) return { op: op.op, status: "unchanged" };
    const column = op.success ? "success_count" : "failure_count";
    for (const s of matched) {
      this.sql.exec(
        `UPDATE strategies SET ${column} = ${column} + 1, updated_at = ? WHERE id = ?`,
        this.now,
        s.id,
      );
    }
    return {
      op: op.op,
      status: "updated",
      id: (matched[0] as StrategyRow).id,
      ...(matched.length > 1 ? { reason: `${matched.length} strategies counted` } : {}),
    };
  }

  private addTurn(op: Op<"add_turn">): Result {
    this.makeRoom(1);
    const id = memoryId("mt");
    this.sql.exec(
      "INSERT INTO turns (id, role, text, task_id, context_id, created_at, bytes) VALUES (?, ?, ?, ?, ?, ?, ?)",
      id,
      op.role,
      op.text,
      op.taskId ?? this.origin.taskId ?? null,
      op.contextId ?? this.origin.contextId ?? null,
      this.now,
      textBytes(op.text),
    );
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
  private makeRoom(count: number): void {
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
   * (least confident, least recalled, oldest first). Goals and strategies are never evicted.
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
    if (turn) return this.sql.exec("DELETE FROM turns WHERE id = ?", turn.id).rowsWritten > 0;
    const entity = this.sql
      .exec<{ id: string }>(
        `SELECT id FROM entities e WHERE NOT EXISTS (
           SELECT 1 FROM fact_entities fe WHERE fe.entity_id = e.id)
         ORDER BY salience, rid LIMIT 1`,
      )
      .toArray()[0];
    if (entity) {
      deleteEntity(this.sql, entity.id);
      return true;
    }
    const fact = this.sql
      .exec<{ id: string }>(
        `SELECT id FROM facts WHERE superseded_by IS NULL
         ORDER BY confidence, access_count, rid LIMIT 1`,
      )
      .toArray()[0];
    return fact ? this.deleteFact(fact.id) : false;
  }
}

/** Deletes an entity, its names and its links to facts. */
export function deleteEntity(sql: SqlStorage, id: string): boolean {
  const gone = sql.exec("DELETE FROM entities WHERE id = ?", id).rowsWritten > 0;
  sql.exec("DELETE FROM entity_names WHERE entity_id = ?", id);
  sql.exec("DELETE FROM fact_entities WHERE entity_id = ?", id);
  return gone;
}

/** Names without case-insensitive repeats, first spelling kept, in order. */
function distinctNames(names: readonly string[]): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const raw of names) {
    const name = raw.trim();
    const key = name.toLowerCase();
    if (name === "" || seen.has(key)) continue;
    seen.add(key);
    out.push(name);
  }
  return out;
}

function unknown(op: { op: MemoryOp["op"]; id: string }): Result {
  return { op: op.op, status: "refused", id: op.id, reason: `no such item ${op.id}` };
}
