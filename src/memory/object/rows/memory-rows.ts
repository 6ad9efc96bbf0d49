import type { JsonObject } from "../../../protocol/json";
import type {
  FactSource,
  GoalStatus,
  MemoryApplyResult,
  MemoryEntity,
  MemoryFact,
  MemoryGoal,
  MemoryOp,
  MemoryStrategy,
  MemoryTurn,
  TurnRole,
} from "../../../protocol/memory";
import type { MemoryLimits } from "../../base/limits";

/** Rows as SQLite answers them (see memory-schema.ts), and their public shapes. */
export interface FactRow extends Record<string, SqlStorageValue> {
  rid: number;
  id: string;
  claim: string;
  claim_hash: string;
  confidence: number;
  source: string;
  channel: string;
  valid_from: string | null;
  valid_to: string | null;
  supersedes: string | null;
  superseded_by: string | null;
  superseded_at: string | null;
  created_at: string;
  updated_at: string;
  access_count: number;
  last_accessed_at: string | null;
  task_id: string | null;
  context_id: string | null;
  /** The fact's entity ids as a JSON array (a subquery of the read). */
  entity_ids: string;
}

/** The columns a fact is read with (its row and its entities). */
export const FACT_COLUMNS = `f.rid, f.id, f.claim, f.claim_hash, f.confidence, f.source, f.channel,
  f.valid_from, f.valid_to, f.supersedes, f.superseded_by, f.superseded_at, f.created_at,
  f.updated_at, f.access_count, f.last_accessed_at, f.task_id, f.context_id,
  (SELECT json_group_array(entity_id) FROM fact_entities WHERE fact_id = f.id) AS entity_ids`;

/**
 * A fact row read as an array (`cursor.raw()`, FACT_COLUMNS' order, then `extra` more
 * columns), named here: the cursor's own row objects are built a column at a time through
 * the engine's slow path, and recall reads dozens of facts each time.
 */
export function factRowOf(r: SqlStorageValue[]): FactRow {
  return {
    rid: r[0] as number,
    id: r[1] as string,
    claim: r[2] as string,
    claim_hash: r[3] as string,
    confidence: r[4] as number,
    source: r[5] as string,
    channel: r[6] as string,
    valid_from: r[7] as string | null,
    valid_to: r[8] as string | null,
    supersedes: r[9] as string | null,
    superseded_by: r[10] as string | null,
    superseded_at: r[11] as string | null,
    created_at: r[12] as string,
    updated_at: r[13] as string,
    access_count: r[14] as number,
    last_accessed_at: r[15] as string | null,
    task_id: r[16] as string | null,
    context_id: r[17] as string | null,
    entity_ids: r[18] as string,
  };
}

const opt = <T>(value: T | null): T | undefined => (value === null ? undefined : value);

/**
 * The fields that are not undefined, in order, so a shape crosses RPC and JSON the same
 * way. Copied, not deleted: a deleted field turns an object into a slow dictionary.
 */
function defined<T extends object>(value: T): T {
  const out = {} as T;
  for (const key in value) if (value[key] !== undefined) out[key] = value[key];
  return out;
}

export function factOf(row: FactRow): MemoryFact {
  return defined({
    id: row.id,
    claim: row.claim,
    claimHash: row.claim_hash,
    confidence: row.confidence,
    source: row.source as FactSource,
    channel: row.channel,
    entityIds: JSON.parse(row.entity_ids) as string[],
    validFrom: opt(row.valid_from),
    validTo: opt(row.valid_to),
    supersedes: opt(row.supersedes),
    supersededBy: opt(row.superseded_by),
    supersededAt: opt(row.superseded_at),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    accessCount: row.access_count,
    lastAccessedAt: opt(row.last_accessed_at),
    taskId: opt(row.task_id),
    contextId: opt(row.context_id),
  });
}

export interface EntityRow extends Record<string, SqlStorageValue> {
  rid: number;
  id: string;
  name: string;
  type: string | null;
  aliases: string;
  description: string | null;
  /** A JSON object. */
  properties: string;
  salience: number;
  access_count: number;
  last_accessed_at: string | null;
  channel: string;
  created_at: string;
  updated_at: string;
}

export function entityOf(row: EntityRow): MemoryEntity {
  return defined({
    id: row.id,
    name: row.name,
    type: opt(row.type),
    aliases: JSON.parse(row.aliases) as string[],
    description: opt(row.description),
    properties: JSON.parse(row.properties) as JsonObject,
    salience: row.salience,
    accessCount: row.access_count,
    lastAccessedAt: opt(row.last_accessed_at),
    channel: row.channel,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  });
}

export interface GoalRow extends Record<string, SqlStorageValue> {
  rid: number;
  id: string;
  title: string;
  description: string | null;
  status: string;
  priority: number;
  parent_id: string | null;
  deadline: string | null;
  channel: string;
  created_at: string;
  updated_at: string;
}

export function goalOf(row: GoalRow): MemoryGoal {
  return defined({
    id: row.id,
    title: row.title,
    description: opt(row.description),
    status: row.status as GoalStatus,
    priority: row.priority,
    parentId: opt(row.parent_id),
    deadline: opt(row.deadline),
    channel: row.channel,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  });
}

export interface StrategyRow extends Record<string, SqlStorageValue> {
  rid: number;
  id: string;
  context_pattern: string;
  tool_sequence: string;
  success_count: number;
  failure_count: number;
  channel: string;
  created_at: string;
  updated_at: string;
}

export function strategyOf(row: StrategyRow): MemoryStrategy {
  return {
    id: row.id,
    contextPattern: row.context_pattern,
    toolSequence: JSON.parse(row.tool_sequence) as string[],
    successCount: row.success_count,
    failureCount: row.failure_count,
    channel: row.channel,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** A turn's row as TURN_COLUMNS reads it (its vector only as whether it has one). */
export interface TurnRow extends Record<string, SqlStorageValue> {
  rid: number;
  id: string;
  context_id: string | null;
  idx: number;
  created_at: string;
  role: string;
  text: string;
  token_count: number | null;
  embedded: number;
  metadata: string;
  channel: string;
  task_id: string | null;
  corrected_at: string | null;
}

/** The columns a turn is read with: never its vector, which listings do not show. */
export const TURN_COLUMNS = `f.rid, f.id, f.context_id, f.idx, f.created_at, f.role, f.text,
  f.token_count, f.embedding IS NOT NULL AS embedded, f.metadata, f.channel, f.task_id,
  f.corrected_at`;

export function turnOf(row: TurnRow): MemoryTurn {
  return defined({
    id: row.id,
    contextId: opt(row.context_id),
    index: row.idx,
    timestamp: row.created_at,
    role: row.role as TurnRole,
    content: row.text,
    tokenCount: opt(row.token_count),
    embedded: row.embedded === 1,
    metadata: JSON.parse(row.metadata) as JsonObject,
    channel: row.channel,
    taskId: opt(row.task_id),
    correctedAt: opt(row.corrected_at),
  });
}

/** Each kind's table, full-text index and the columns it is read with. */
export const KIND_TABLES = {
  fact: { table: "facts", columns: FACT_COLUMNS },
  entity: { table: "entities", columns: "f.*" },
  goal: { table: "goals", columns: "f.*" },
  strategy: { table: "strategies", columns: "f.*" },
  turn: { table: "turns", columns: TURN_COLUMNS },
} as const;

/** A fresh id for an item of a kind: its prefix and 128 random bits. */
export function memoryId(prefix: "mf" | "me" | "mg" | "ms" | "mt"): string {
  return `${prefix}_${crypto.randomUUID().replaceAll("-", "")}`;
}

/** UTF-8 bytes of some texts together, as the item-size limit counts them. */
export function textBytes(...texts: ReadonlyArray<string | undefined>): number {
  let bytes = 0;
  for (const text of texts) if (text) bytes += encoder.encode(text).byteLength;
  return bytes;
}
const encoder = new TextEncoder();

/** A turn's size as the item limit counts it: its content and its metadata as JSON. */
export function turnBytes(content: string, metadata: object | null | undefined): number {
  const json = metadata && Object.keys(metadata).length ? JSON.stringify(metadata) : undefined;
  return textBytes(content, json);
}

/** One operation's outcome in `apply`'s answer. */
export type OpResult = MemoryApplyResult["results"][number];
/** The operation of one kind. */
export type Op<K extends MemoryOp["op"]> = Extract<MemoryOp, { op: K }>;

/** What an operation writes with: the transaction's SQL, clock, limits and room. */
export interface WriteContext {
  readonly sql: SqlStorage;
  readonly now: string;
  readonly limits: MemoryLimits;
  /** Room for `count` more items, or MemoryFull (see MemoryWriter). */
  makeRoom(count: number): void;
}

/** An operation on an id the memory does not hold. */
export function unknownItem(op: { op: MemoryOp["op"]; id: string }): OpResult {
  return { op: op.op, status: "refused", id: op.id, reason: `no such item ${op.id}` };
}
