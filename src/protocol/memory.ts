import * as z from "zod";
import { JsonObject } from "./json";

/**
 * Long-term memory: what an agent keeps about one user (or one conversation) beyond the
 * conversation itself. These are the stored shapes and the operations that change them;
 * the store is `MemoryObject` (src/memory/object/memory-object.ts).
 */

/** Hard caps on what any operation may carry, before the configured limits apply. */
export const MEMORY_INPUT = {
  /** One text field (a claim, a title, a turn's text), in UTF-16 units. */
  text: 16_384,
  /** A short name (an entity, an alias, a tool, a channel). */
  name: 256,
  /** Aliases of one entity, entities of one fact, tools of one sequence. */
  list: 32,
  /** Operations in one `apply`. */
  ops: 100,
  /** Ids and page tokens. */
  id: 512,
  /** A JSON field (an entity's properties, a turn's metadata): UTF-8 bytes as JSON, and nesting. */
  jsonBytes: 4_096,
  jsonDepth: 4,
  /** A turn's token count. */
  tokens: 1_000_000,
} as const;

/** The channel a memory lands in when none is named. */
export const GLOBAL_CHANNEL = "_global";

const text = z.string().trim().min(1).max(MEMORY_INPUT.text);
const name = z.string().trim().min(1).max(MEMORY_INPUT.name);
const id = z.string().min(1).max(MEMORY_INPUT.id);
const iso = z.iso.datetime({ offset: true });
const unit = z.number().min(0).max(1);
/**
 * A JSON object within MEMORY_INPUT's size and depth. Walked by hand, depth first and
 * stopping at the limit, so a hostile, deeply nested value is refused before anything
 * recursive reads it.
 */
const boundedJson = z
  .unknown()
  .superRefine((value, ctx) => {
    const problem = jsonProblem(value);
    if (problem) ctx.addIssue({ code: "custom", message: problem });
  })
  .transform((value) => value as JsonObject);

function jsonProblem(value: unknown): string | null {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return "must be a JSON object";
  }
  const walk = (v: unknown, depth: number): string | null => {
    if (v === null || typeof v === "string" || typeof v === "boolean") return null;
    if (typeof v === "number") return Number.isFinite(v) ? null : "numbers must be finite";
    if (typeof v !== "object") return "must hold JSON values only";
    if (depth >= MEMORY_INPUT.jsonDepth) {
      return `nests deeper than ${MEMORY_INPUT.jsonDepth} levels`;
    }
    const proto = Object.getPrototypeOf(v);
    if (!Array.isArray(v) && proto !== Object.prototype && proto !== null) {
      return "must hold JSON values only";
    }
    for (const item of Array.isArray(v) ? v : Object.values(v)) {
      const found = walk(item, depth + 1);
      if (found) return found;
    }
    return null;
  };
  const found = walk(value, 0);
  if (found) return found;
  const bytes = new TextEncoder().encode(JSON.stringify(value)).byteLength;
  return bytes > MEMORY_INPUT.jsonBytes
    ? `is ${bytes} bytes as JSON, over ${MEMORY_INPUT.jsonBytes}`
    : null;
}

const channel = z
  .string()
  .min(1)
  .max(MEMORY_INPUT.name)
  .regex(/^[A-Za-z0-9_.:-]+$/, "letters, digits, _ . : - only");

export const FactSource = z.enum(["extraction", "user_stated", "inferred"]);
export type FactSource = z.infer<typeof FactSource>;

export const GoalStatus = z.enum(["active", "completed", "abandoned", "blocked"]);
export type GoalStatus = z.infer<typeof GoalStatus>;

export const TurnRole = z.enum(["user", "assistant", "system", "tool"]);
export type TurnRole = z.infer<typeof TurnRole>;

/** A claim about the user or their world, deduplicated by its hash. */
export const MemoryFact = z.object({
  id: z.string(),
  claim: z.string(),
  /** Hex SHA-256 of the claim lower-cased, whitespace collapsed and trimmed (`claimHash`). */
  claimHash: z.string(),
  confidence: unit,
  source: FactSource,
  channel: z.string(),
  entityIds: z.array(z.string()),
  /** When the claim starts and stops being true, if known (ISO-8601). */
  validFrom: z.string().optional(),
  validTo: z.string().optional(),
  supersedes: z.string().optional(),
  supersededBy: z.string().optional(),
  supersededAt: z.string().optional(),
  createdAt: z.string(),
  updatedAt: z.string(),
  accessCount: z.number().int(),
  lastAccessedAt: z.string().optional(),
  taskId: z.string().optional(),
  contextId: z.string().optional(),
});
export type MemoryFact = z.infer<typeof MemoryFact>;

/** A person, place, thing or idea the user talks about, known by several names. */
export const MemoryEntity = z.object({
  id: z.string(),
  name: z.string(),
  /** What it is: "Person", "Organization", "Place", ... */
  type: z.string().optional(),
  /** Other names; a name or alias matches case-insensitively, so one entity per name. */
  aliases: z.array(z.string()),
  /** What it is about, in a sentence or two. */
  description: z.string().optional(),
  /** Facts about it as JSON (`{ "city": "Lisbon" }`), merged key by key on each update. */
  properties: JsonObject,
  salience: unit,
  accessCount: z.number().int(),
  lastAccessedAt: z.string().optional(),
  channel: z.string(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type MemoryEntity = z.infer<typeof MemoryEntity>;

/** Something the user wants done; goals nest (`parentId`) without cycles. */
export const MemoryGoal = z.object({
  id: z.string(),
  title: z.string(),
  description: z.string().optional(),
  status: GoalStatus,
  /** 1 (highest) to 5. */
  priority: z.number().int().min(1).max(5),
  parentId: z.string().optional(),
  deadline: z.string().optional(),
  channel: z.string(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type MemoryGoal = z.infer<typeof MemoryGoal>;

/** A way of working (tools in order) for a kind of request, with how often it worked. */
export const MemoryStrategy = z.object({
  id: z.string(),
  contextPattern: z.string(),
  toolSequence: z.array(z.string()),
  successCount: z.number().int(),
  failureCount: z.number().int(),
  channel: z.string(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type MemoryStrategy = z.infer<typeof MemoryStrategy>;

/** One message of a conversation, kept verbatim. */
export const MemoryTurn = z.object({
  id: z.string(),
  /** The conversation it belongs to (its A2A context id); absent for a turn of none. */
  contextId: z.string().optional(),
  /** Its place in the conversation: each turn stored gets a higher one than the turns before. */
  index: z.number().int(),
  /** When it was said (ISO-8601, UTC). */
  timestamp: z.string(),
  role: TurnRole,
  content: z.string(),
  /** Its size in tokens, when known. */
  tokenCount: z.number().int().optional(),
  /** True when it has a vector (an embedder was configured when it was stored). */
  embedded: z.boolean(),
  metadata: JsonObject,
  channel: z.string(),
  taskId: z.string().optional(),
  /**
   * When a fact learnt in this turn's task was corrected or deleted: the turn says what
   * is no longer true, so it is not recalled.
   */
  correctedAt: z.string().optional(),
});
export type MemoryTurn = z.infer<typeof MemoryTurn>;

export const MemoryKind = z.enum(["fact", "entity", "goal", "strategy", "turn"]);
export type MemoryKind = z.infer<typeof MemoryKind>;

export const MemoryItem = z.discriminatedUnion("kind", [
  MemoryFact.extend({ kind: z.literal("fact") }),
  MemoryEntity.extend({ kind: z.literal("entity") }),
  MemoryGoal.extend({ kind: z.literal("goal") }),
  MemoryStrategy.extend({ kind: z.literal("strategy") }),
  MemoryTurn.extend({ kind: z.literal("turn") }),
]);
export type MemoryItem = z.infer<typeof MemoryItem>;

/** What `remember` answers: the memories relevant to one query, within a token budget. */
export interface MemoryBundle {
  query: string;
  facts: Array<MemoryFact & { score: number }>;
  entities: MemoryEntity[];
  /** Active goals only. */
  goals: MemoryGoal[];
  strategies: MemoryStrategy[];
  /** Past turns of other conversations relevant to the query, most relevant first. */
  turns: Array<MemoryTurn & { score: number }>;
  /** Estimated tokens of the rendered bundle (`renderMemoryBundle`). */
  tokens: number;
  /** True when relevant memories were left out to stay within the budget. */
  truncated: boolean;
}

/**
 * What `recall` answers: the same memories as `remember`'s bundle, already rendered as the
 * prompt section (`renderMemoryBundle`), so a model turn receives only the text it sends.
 */
export interface RecalledMemory {
  /** The prompt section ("" when nothing is remembered). */
  section: string;
  /** Estimated tokens of `section`, at most the query's budget. */
  tokens: number;
  /** True when relevant memories were left out to stay within the budget. */
  truncated: boolean;
}

const factFields = {
  claim: text,
  confidence: unit.optional(),
  source: FactSource.optional(),
  entities: z.array(name).max(MEMORY_INPUT.list).optional(),
  validFrom: iso.optional(),
  validTo: iso.optional(),
  channel: channel.optional(),
};

const entityFields = {
  name,
  aliases: z.array(name).max(MEMORY_INPUT.list).optional(),
  type: name.optional(),
  /** Replaces the entity's description. */
  description: text.optional(),
  /** Merged key by key into the entity's (a JSON object of at most 4 KiB, 4 levels deep). */
  properties: boundedJson.optional(),
  salience: unit.optional(),
  channel: channel.optional(),
};

/** An entity as a user or the operator names or describes it (`upsert_entity` without `op`). */
export const MemoryEntityInput = z.strictObject(entityFields);
export type MemoryEntityInput = z.infer<typeof MemoryEntityInput>;

/** One change to a memory. Every field is checked: the operations may come from a model. */
export const MemoryOp = z.discriminatedUnion("op", [
  z.strictObject({ op: z.literal("add_fact"), ...factFields }),
  z.strictObject({ op: z.literal("supersede_fact"), id, ...factFields }),
  z.strictObject({ op: z.literal("delete_fact"), id }),
  z.strictObject({ op: z.literal("upsert_entity"), ...entityFields }),
  z.strictObject({
    op: z.literal("set_goal"),
    title: text,
    description: text.optional(),
    priority: z.number().int().min(1).max(5).optional(),
    parentId: id.optional(),
    deadline: iso.optional(),
    channel: channel.optional(),
  }),
  z.strictObject({
    op: z.literal("update_goal"),
    id,
    status: GoalStatus.optional(),
    priority: z.number().int().min(1).max(5).optional(),
    title: text.optional(),
    description: text.optional(),
    deadline: iso.optional(),
    parentId: id.optional(),
  }),
  z.strictObject({
    op: z.literal("add_strategy"),
    contextPattern: text,
    toolSequence: z.array(name).min(1).max(MEMORY_INPUT.list),
    channel: channel.optional(),
  }),
  z.strictObject({
    op: z.literal("strategy_outcome"),
    toolSequence: z.array(name).max(MEMORY_INPUT.list),
    text: text,
    success: z.boolean(),
  }),
  z.strictObject({
    op: z.literal("add_turn"),
    role: TurnRole,
    content: text,
    /** When it was said; default now. */
    timestamp: iso.optional(),
    tokenCount: z.number().int().min(0).max(MEMORY_INPUT.tokens).optional(),
    metadata: boundedJson.optional(),
    channel: channel.optional(),
    taskId: id.optional(),
    contextId: id.optional(),
  }),
]);
export type MemoryOp = z.infer<typeof MemoryOp>;

export const MemoryOps = z.array(MemoryOp).max(MEMORY_INPUT.ops);

/** Where the operations came from, recorded on the facts they add. */
export const MemoryOrigin = z.strictObject({ taskId: id.optional(), contextId: id.optional() });
export type MemoryOrigin = z.infer<typeof MemoryOrigin>;

export type MemoryOpStatus =
  | "added"
  | "updated"
  | "deleted"
  | "duplicate"
  | "unchanged"
  | "refused";

export interface MemoryApplyResult {
  results: Array<{ op: MemoryOp["op"]; status: MemoryOpStatus; id?: string; reason?: string }>;
}

/** Most a `remember` may ask for, in estimated tokens. */
export const MAX_TOKEN_BUDGET = 32_000;
export const DEFAULT_TOKEN_BUDGET = 1_000;

export const RememberQuery = z.strictObject({
  text: z.string().max(MEMORY_INPUT.text),
  tokenBudget: z.number().int().min(1).max(MAX_TOKEN_BUDGET).optional(),
  channel: channel.optional(),
  /** The conversation asking: its own turns are not recalled (it has them already). */
  contextId: id.optional(),
});
export type RememberQuery = z.infer<typeof RememberQuery>;

export const MEMORY_PAGE_SIZE = { default: 50, max: 100 } as const;

export const MemoryListQuery = z.strictObject({
  kind: MemoryKind,
  query: z.string().max(MEMORY_INPUT.text).optional(),
  pageSize: z.number().int().min(1).max(MEMORY_PAGE_SIZE.max).optional(),
  pageToken: z.string().max(MEMORY_INPUT.id).optional(),
  includeSuperseded: z.boolean().optional(),
});
export type MemoryListQuery = z.infer<typeof MemoryListQuery>;

export interface MemoryPage {
  items: MemoryItem[];
  /** Empty on the last page. */
  nextPageToken: string;
}

export interface MemoryStats {
  facts: number;
  entities: number;
  goals: number;
  strategies: number;
  turns: number;
  /** Bytes of the stored rows' text, as the item-size limit counts them. */
  bytes: number;
}
