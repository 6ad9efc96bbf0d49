import type { Hono, MiddlewareHandler } from "hono";
import type { JsonObject } from "../models/json";
import type { Principal } from "./auth";
import type { TaskContext } from "./context";
import type { Agent } from "./definition";
import type { Tools } from "./tools";

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
  openTurn<Env>(
    agent: Agent<Env>,
    ctx: TaskContext<Env>,
    scope: MemoryTurnScope,
  ): MemoryTurn | null;
  /**
   * Adds the memory routes to the agent's app (after authentication), when served, each
   * behind `guards.any` (rate limits) or, with a body, `guards.body` (and the body limit).
   */
  mount<Env extends object>(
    app: Hono<{ Bindings: Env; Variables: { principal: Principal } }>,
    agent: Agent<Env>,
    guards: { any: MiddlewareHandler[]; body: MiddlewareHandler[] },
  ): void;
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
