import type { Agent } from "../../agent/definition";
import type { HandlerMemory, MemoryTurnScope } from "../../agent/memory-source";
import type { RunContext } from "../../agent/run-context";
import { DEFAULT_TOKEN_BUDGET, type MemoryOp } from "../../protocol/memory";
import { traceContextOf, traceMemory } from "../../telemetry";
import { logEvent } from "../../telemetry/log";
import type { ResolvedMemoryOptions } from "../base/options";
import { renderMemoryBundle } from "../base/render";
import { scopeKeyOf } from "../base/scope-key";
import { memoryStore } from "../object/memory-store";

/**
 * A handler run's memory (`ctx.memory`): the caller's scope, chosen exactly as for a model
 * turn (the same `scope` option, tenant and owner), so a handler reaches only the memory a
 * model turn of the same caller would. Null for a caller without one. The store checks
 * every write against the memory's limits; its errors reach the handler as A2AError.
 */
export function openHandlerMemory<Env>(
  options: ResolvedMemoryOptions,
  ctx: RunContext<Env>,
  scope: MemoryTurnScope,
): HandlerMemory | null {
  let key: string;
  try {
    key = scopeKeyOf(options.scope, {
      tenant: scope.tenant,
      owner: scope.owner,
      contextId: ctx.contextId,
    });
  } catch (error) {
    logEvent("error", "edgelink: memory.scope failed; this run has no memory", { error });
    return null;
  }
  if (typeof key !== "string" || key === "") return null;
  const stub = memoryStore(ctx.env as object, options.binding, scope.tenant, key);
  const origin = { taskId: ctx.taskId, contextId: ctx.contextId };
  const budget = options.recall?.tokenBudget ?? DEFAULT_TOKEN_BUDGET;
  return {
    async recall(query, { tokenBudget = budget, channel } = {}) {
      const bundle = await traceMemory("recall", traceContextOf(ctx), ctx.contextId, () =>
        stub.remember({
          text: query,
          tokenBudget,
          contextId: ctx.contextId,
          ...(channel === undefined ? {} : { channel }),
        }),
      );
      return { bundle, section: renderMemoryBundle(bundle) };
    },
    remember(what) {
      const ops: MemoryOp[] =
        typeof what === "string" ? [{ op: "add_fact", claim: what, source: "user_stated" }] : what;
      return stub.apply(ops, origin);
    },
  };
}

/**
 * The agent as a run of its own handler sees it: before the handler runs, the memory of
 * the caller `scope` names (read at each run) is put in `ctx.memory`, left absent when the
 * caller has none.
 */
export function handlerAgentOf<Env>(
  options: ResolvedMemoryOptions,
  agent: Agent<Env>,
  scope: () => MemoryTurnScope,
): Agent<Env> {
  const handler = agent.handler;
  if (!handler) return agent;
  return {
    ...agent,
    handler: (ctx) => {
      const memory = openHandlerMemory(options, ctx, scope());
      if (memory) Object.assign(ctx, { memory });
      return handler(ctx);
    },
  };
}
