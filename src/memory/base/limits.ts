import * as z from "zod";
import { A2AError } from "../../protocol/errors";

/**
 * Bounds of one memory (one scope). Every one is configurable; the defaults suit one
 * user's memory of a chat agent.
 */
export interface MemoryLimits {
  /** Items (facts, entities, goals, strategies, turns together) one memory holds. */
  maxItems: number;
  /** UTF-8 bytes of one item's text fields together (a claim with its entities, a goal, ...). */
  maxItemBytes: number;
  /** Extraction model calls per memory per hour (counted by the agent side). */
  extractionCallsPerHour: number;
  /** Days a superseded fact is kept (for the record, never recalled) before it is deleted. */
  supersededRetentionDays: number;
  /** Days a conversation turn is kept (from when it was said) before it is deleted. */
  turnRetentionDays: number;
  /** What a full memory does with a new item: refuse it (MemoryFull) or evict the least salient. */
  whenFull: "refuse" | "evict";
}

/** The defaults, documented in docs/guides/memory.md. */
export const DEFAULT_MEMORY_LIMITS: Readonly<MemoryLimits> = Object.freeze({
  maxItems: 10_000,
  maxItemBytes: 4_096,
  extractionCallsPerHour: 60,
  supersededRetentionDays: 30,
  turnRetentionDays: 90,
  whenFull: "refuse",
});

/** Most any memory may be configured to hold, whatever the operator asks. */
export const MEMORY_CEILINGS = {
  maxItems: 1_000_000,
  maxItemBytes: 65_536,
  extractionCallsPerHour: 100_000,
  supersededRetentionDays: 3_650,
  turnRetentionDays: 3_650,
} as const;

const LimitsInput = z.strictObject({
  maxItems: z.number().int().min(1).max(MEMORY_CEILINGS.maxItems).optional(),
  maxItemBytes: z.number().int().min(64).max(MEMORY_CEILINGS.maxItemBytes).optional(),
  extractionCallsPerHour: z
    .number()
    .int()
    .min(0)
    .max(MEMORY_CEILINGS.extractionCallsPerHour)
    .optional(),
  supersededRetentionDays: z
    .number()
    .min(0)
    .max(MEMORY_CEILINGS.supersededRetentionDays)
    .optional(),
  turnRetentionDays: z.number().min(0).max(MEMORY_CEILINGS.turnRetentionDays).optional(),
  whenFull: z.enum(["refuse", "evict"]).optional(),
});

/**
 * The limits an operator configured, over the defaults. A wrong value is a deployment
 * mistake, named at once (the agent's definition fails) rather than at the first write.
 * @example
 * const limits = resolveMemoryLimits({ maxItems: 500, whenFull: "evict" });
 */
export function resolveMemoryLimits(input: Partial<MemoryLimits> = {}): MemoryLimits {
  const parsed = LimitsInput.safeParse(input);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new TypeError(
      `memory.limits.${issue?.path.join(".") || "(root)"}: ${issue?.message ?? "invalid"}`,
    );
  }
  const defined = Object.fromEntries(
    Object.entries(parsed.data).filter(([, value]) => value !== undefined),
  );
  return { ...DEFAULT_MEMORY_LIMITS, ...defined };
}

/**
 * A full memory refusing a new item (`whenFull: "refuse"`). Answers HTTP 409 with its own
 * JSON-RPC code, like a full conversation.
 * @example
 * throw memoryFull(10_000);
 */
export function memoryFull(maxItems: number): A2AError {
  return new A2AError(
    "MemoryFull",
    `This memory holds its limit of ${maxItems} items; delete some or raise memory.limits.maxItems`,
    { maxItems: String(maxItems) },
  );
}
