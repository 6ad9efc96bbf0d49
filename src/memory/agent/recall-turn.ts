import type { Agent } from "../../agent/definition";
import type { MemoryTurn, MemoryTurnOutcome, MemoryTurnScope } from "../../agent/memory-source";
import { RECALLED_MEMORY_OVERHEAD_TOKENS } from "../../agent/model/recalled-memory";
import type { RunContext } from "../../agent/run-context";
import type { Message } from "../../protocol/message";
import { traceContextOf, traceMemory } from "../../telemetry";
import { logEvent } from "../../telemetry/log";
import type { ResolvedMemoryOptions } from "../base/options";
import { scopeKeyOf } from "../base/scope-key";
import { type MemoryStore, memoryStore } from "../object/memory-store";
import { extractAfterTurn } from "./extract";
import { turnOps } from "./record-turns";
import { memoryTools } from "./tools";

/** Longest recall may hold up a turn; past it the turn goes on without memory. */
export const RECALL_TIMEOUT_MS = 2_000;

/**
 * How long after a turn ends what memory learns from it starts: long enough that the
 * answer's remaining hops (the object's reply, the Worker's response) finish first even
 * where the Worker and the object share one thread (a local workerd); extraction is
 * background work, so a few milliseconds cost nobody anything.
 */
export const EXTRACTION_DELAY_MS = 10;
/** Most characters of a request kept as a new strategy's context pattern. */
const STRATEGY_PATTERN_CHARS = 200;
/** Most characters of a message used as the recall query and extraction input. */
const MAX_QUERY_CHARS = 4_000;

/** The text of a message's text parts, for recall and extraction. */
export function messageText(message: Message): string {
  return message.parts
    .flatMap((p) => (p.type === "text" && typeof p.content === "string" ? [p.content] : []))
    .join("\n")
    .slice(0, MAX_QUERY_CHARS);
}

/**
 * Opens one model turn's memory: whose it is (null for a caller without a scope), the
 * recall of what it remembers for the turn's input as a prompt section (started now, so
 * it runs while the turn prepares the rest of its request), the memory tools, and what
 * runs when the turn ends (extraction, the strategy's outcome), in the background.
 */
export function openMemoryTurn<Env>(
  options: ResolvedMemoryOptions,
  agent: Agent<Env>,
  ctx: RunContext<Env>,
  scope: MemoryTurnScope,
): MemoryTurn | null {
  let key: string;
  try {
    key = scopeKeyOf(options.scope, { ...scope, contextId: ctx.contextId });
  } catch (error) {
    logEvent("error", "edgelink: memory.scope failed; this turn has no memory", { error });
    return null;
  }
  if (typeof key !== "string" || key === "") return null;
  const stub = memoryStore(ctx.env as object, options.binding, scope.tenant, key);
  const query = messageText(ctx.message);
  const tokenBudget = options.recall?.tokenBudget ?? 0;
  const recalled =
    options.recall && query
      ? traceMemory("recall", traceContextOf(ctx), ctx.contextId, () =>
          recall(stub, query, tokenBudget, ctx.contextId),
        ).catch(() => "")
      : Promise.resolve("");
  const origin = { taskId: ctx.taskId, contextId: ctx.contextId };
  let done = false;
  return {
    recalled,
    // The section, its fence and label, and the note the instructions get beside it.
    reservedTokens: options.recall && query ? tokenBudget + RECALLED_MEMORY_OVERHEAD_TOKENS : 0,
    tools: options.tools ? memoryTools(stub, origin) : {},
    finished(outcome: MemoryTurnOutcome) {
      if (done) return;
      done = true;
      // Started by a timer (EXTRACTION_DELAY_MS), so the turn records its end and its
      // answer leaves first: on a shared thread (a local workerd) extraction's first calls
      // would otherwise run between the answer's hops.
      scope.background(
        new Promise((resolve) => setTimeout(resolve, EXTRACTION_DELAY_MS)).then(() =>
          learn(options, agent, ctx, scope, stub, query, outcome),
        ),
      );
    },
  };
}

/**
 * The recalled section, rendered by the memory object within the budget, or "" when recall
 * fails or takes too long (logged).
 */
async function recall(
  stub: MemoryStore,
  text: string,
  tokenBudget: number,
  contextId: string,
): Promise<string> {
  let timer: ReturnType<typeof setTimeout> | null = null;
  const late = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), RECALL_TIMEOUT_MS);
  });
  try {
    const recalled = await Promise.race([stub.recall({ text, tokenBudget, contextId }), late]);
    if (recalled === null) {
      logEvent(
        "error",
        `edgelink: memory recall took over ${RECALL_TIMEOUT_MS} ms; turn without it`,
      );
      return "";
    }
    return recalled.section;
  } catch (error) {
    logEvent("error", "edgelink: memory recall failed; turn without it", { error });
    return "";
  } finally {
    if (timer !== null) clearTimeout(timer);
  }
}

/** What a finished turn teaches memory: its turns recorded, the strategy's outcome, then extraction. */
async function learn<Env>(
  options: ResolvedMemoryOptions,
  agent: Agent<Env>,
  ctx: RunContext<Env>,
  scope: MemoryTurnScope,
  stub: MemoryStore,
  query: string,
  outcome: MemoryTurnOutcome,
): Promise<void> {
  const origin = { taskId: ctx.taskId, contextId: ctx.contextId };
  if (options.turns && outcome.success && query) {
    try {
      const ops = turnOps(query, outcome, options.turns.tools, options.limits.maxItemBytes);
      await stub.apply(ops, origin);
    } catch (error) {
      logEvent("error", "edgelink: memory could not record the turn", { error });
    }
  }
  try {
    if (outcome.toolSequence.length && query) {
      const toolSequence = outcome.toolSequence.slice(0, 32);
      const { results } = await stub.apply(
        [{ op: "strategy_outcome", toolSequence, text: query, success: outcome.success }],
        origin,
      );
      // A way of working that succeeded and matches no known strategy becomes one, with
      // this success counted.
      if (outcome.success && results[0]?.status === "unchanged") {
        const contextPattern = query.slice(0, STRATEGY_PATTERN_CHARS);
        await stub.apply(
          [
            { op: "add_strategy", contextPattern, toolSequence },
            { op: "strategy_outcome", toolSequence, text: query, success: true },
          ],
          origin,
        );
      }
    }
  } catch (error) {
    logEvent("error", "edgelink: memory could not record the strategy's outcome", { error });
  }
  const model = options.extract?.model ?? agent.model;
  if (!options.extract || !model || !outcome.success || !query) return;
  try {
    await traceMemory("extract", traceContextOf(ctx), ctx.contextId, () =>
      extractAfterTurn({
        model,
        stub,
        env: ctx.env as object,
        userText: query,
        answer: outcome.answer,
        origin,
        recordUsage: (patch) => scope.mergeMetadata(ctx.taskId, patch),
      }),
    );
  } catch (error) {
    logEvent("error", "edgelink: memory extraction failed", { error });
  }
}
