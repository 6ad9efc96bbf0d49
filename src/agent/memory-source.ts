import type { JsonObject } from "../protocol/json";
import type { MemoryApplyResult, MemoryBundle, MemoryOp } from "../protocol/memory";
import type { Agent } from "./definition";
import type { RouteEntry } from "./routes";
import type { RunContext } from "./run-context";
import type { Tools } from "./tool";

/**
 * Where a conversation's turn stands for long-term memory: who is asking (the caller's
 * tenant and owner, as the conversation's object holds them) and how to run work after
 * the answer. Built by the conversation's object for each model turn.
 */
export interface MemoryTurnScope {
  tenant: string;
  /** The conversation's owner (`ownerOf`); "" for an anonymous caller, who has no memory. */
  owner: string;
  /** Keeps work going after the answer is sent (the object's `waitUntil`). */
  background(work: Promise<unknown>): void;
  /**
   * Merges keys into the task's metadata, after it ended too (extraction's usage): `patch`
   * gets the current metadata. Nothing happens when the task is gone.
   */
  mergeMetadata(taskId: string, patch: (current: JsonObject) => JsonObject): void;
}

/** How a model turn ended, for what memory learns from it. */
export interface MemoryTurnOutcome {
  /** The turn's final answer ("" when it failed before one). */
  answer: string;
  success: boolean;
  /** The tools called, in order. */
  toolSequence: string[];
  /** Each tool call's result as the model saw it, in order (for recording tool turns). */
  tools?: ReadonlyArray<{ name: string; content: string; outcome: "ok" | "error" }>;
}

/** One model turn's view of memory: opened when the turn starts. */
export interface MemoryTurn {
  /**
   * The prompt section of what is remembered for this turn's input ("" for none; never
   * rejects). Recall starts when the turn opens, so the turn prepares the rest of its
   * request meanwhile and waits for it only before the first model call.
   */
  readonly recalled: Promise<string>;
  /**
   * Most estimated tokens the section adds to the system prompt: the history's budget
   * keeps them free, so the window is read without waiting for recall.
   */
  readonly reservedTokens: number;
  /** Memory tools the model may call this turn (empty unless the agent turned them on). */
  readonly tools: Tools;
  /** Called once when the turn ended; learns from it off the answer's path, never throws. */
  finished(outcome: MemoryTurnOutcome): void;
}

/** What `ctx.memory.recall` answers: the bundle and its rendering as a prompt section. */
export interface MemoryRecall {
  /** The facts, entities, active goals, strategies and past turns recalled, within the token budget. */
  bundle: MemoryBundle;
  /** The bundle rendered as the section a model turn gets after its instructions ("" for none). */
  section: string;
}

/**
 * Long-term memory as a handler of its own reaches it (`ctx.memory`): the caller's memory,
 * the same scope, limits and isolation as a model turn's. Nothing is recalled or written
 * unless the handler asks; errors of the store (a full memory, an item too large) are
 * thrown as `A2AError` (`kind` `MemoryFull`, `InvalidParams`, ...).
 * @example
 * ```ts
 * defineAgent({
 *   card,
 *   auth: { apiKeys: { secret: "API_KEYS" } },
 *   memory: memory(),
 *   handler: async (ctx) => {
 *     if (!ctx.memory) return "I remember nothing for anonymous callers.";
 *     const { section } = await ctx.memory.recall(textOf(ctx.message.parts));
 *     await ctx.memory.remember("The user asked about their trip.");
 *     return section || "Nothing remembered yet.";
 *   },
 * });
 * ```
 */
export interface HandlerMemory {
  /**
   * Recalls what is relevant to `query`, as a model turn would: a bundle within the token
   * budget (by default `memory({ recall: { tokenBudget } })`, else 1,000) and its rendering.
   * Recalled facts and entities count an access.
   */
  recall(
    query: string,
    options?: { tokenBudget?: number; channel?: string },
  ): Promise<MemoryRecall>;
  /**
   * Writes to the memory: a claim is stored as a fact the user stated (a duplicate claim
   * answers `duplicate`); operations (`add_fact`, `supersede_fact`, `delete_fact`,
   * `set_goal`, ...) are applied all or none. Each is checked by the store.
   */
  remember(what: string | MemoryOp[]): Promise<MemoryApplyResult>;
}

/**
 * Long-term memory as the core sees it. The store, recall, extraction, tools and API live
 * in `edgelink/memory` (`memory({...})` returns one of these), so a Worker without memory
 * bundles none of it: the core only ever imports this type.
 */
export interface MemorySource {
  /** The Durable Object binding of the memory objects (default `EDGELINK_MEMORY`). */
  readonly binding: string;
  /**
   * Opens one turn's memory, its recall started; null when this caller has none
   * (anonymous, or no scope).
   */
  openTurn<Env>(agent: Agent<Env>, ctx: RunContext<Env>, scope: MemoryTurnScope): MemoryTurn | null;
  /**
   * The agent as a run of its own handler sees it: the handler finds the memory of the
   * caller `scope` names in `ctx.memory` (absent for a caller without one).
   */
  handlerAgent<Env>(agent: Agent<Env>, scope: () => MemoryTurnScope): Agent<Env>;
  /**
   * The memory routes of the agent's route table (none when the API is not served), each
   * declaring its guards; the app mounts them after the A2A routes.
   */
  readonly routes: readonly RouteEntry<{ readonly agent: Agent<unknown> }>[];
  /**
   * The names of the memory tools a turn offers (none unless the agent turned them on):
   * `allowedTools` and `blockedTools` may name them, and they apply to them.
   */
  readonly toolNames: readonly string[];
  /** The inspector's memory panel (`inspector/memory.js`); "" when the API is not served. */
  readonly inspectorScript: string;
  /**
   * The `EdgelinkMemory` Durable Object class, its options supplied by a getter the way
   * `EdgelinkContext` gets its agent.
   */
  objectClass(): new (ctx: DurableObjectState, env: never) => object;
}

/** Checks the `memory` option of `defineAgent` when the Worker loads: it comes from `memory()`. */
export function checkMemorySource(memory: MemorySource | undefined): MemorySource | null {
  if (memory === undefined) return null;
  if (
    typeof memory !== "object" ||
    memory === null ||
    typeof memory.openTurn !== "function" ||
    typeof memory.binding !== "string" ||
    !Array.isArray(memory.toolNames)
  ) {
    throw new TypeError(
      'memory must be memory({ scope, extract, tools, ... }) from "edgelink/memory"',
    );
  }
  return memory;
}

/**
 * The agent its handler runs see in one conversation's object: with memory on, a handler
 * of its own gets `ctx.memory` for the object's caller (see `MemorySource.handlerAgent`);
 * model turns get theirs through `openTurn`. Made once per object and agent.
 */
export function withHandlerMemory<Env>(
  agent: () => Agent<Env>,
  scope: () => MemoryTurnScope,
): () => Agent<Env> {
  let seen: Agent<Env> | null = null;
  let made: Agent<Env> | null = null;
  return () => {
    const current = agent();
    if (!current.handler || !current.memory) return current;
    if (seen !== current || !made) made = current.memory.handlerAgent(current, scope);
    seen = current;
    return made;
  };
}
