import type { MemorySource } from "../../agent/memory-source";
import { INSPECTOR_MEMORY_SCRIPT } from "../api/inspector-memory";
import { memoryRoutes } from "../api/memory-api";
import { type MemoryOptions, resolveMemoryOptions } from "../base/options";
import { MemoryObject } from "../object/memory-object";
import { handlerAgentOf } from "./handler-memory";
import { openMemoryTurn } from "./recall-turn";
import { MEMORY_TOOL_NAMES } from "./tools";

/**
 * Turns on long-term memory for `defineAgent({ memory })`: one memory per user
 * (by default) across all their conversations, recalled into each model turn as a prompt
 * section after the instructions. Extraction after each turn (`extract`), the model's
 * memory tools (`tools`) and the `/memory` routes (`api`) are each off until turned on.
 * The Worker binds the memory objects as `EDGELINK_MEMORY` and exports
 * `worker.EdgelinkMemory`. Each bad option is named when the Worker loads.
 * @example
 * ```ts
 * import { defineAgent } from "edgelink";
 * import { memory } from "edgelink/memory";
 *
 * const worker = defineAgent({
 *   card: { name: "Concierge", description: "Remembers what you like" },
 *   model,
 *   memory: memory({ extract: true, tools: true, api: true }),
 * });
 * export const { EdgelinkContext, EdgelinkIndex, EdgelinkMemory } = worker;
 * export default worker;
 * ```
 */
export function memory(options: MemoryOptions = {}): MemorySource {
  const resolved = resolveMemoryOptions(options);
  const objectOptions = {
    limits: resolved.limits,
    ...(resolved.embedder ? { embedder: resolved.embedder } : {}),
    ...(resolved.vectorize ? { vectorize: resolved.vectorize } : {}),
  };
  let objectClass: (new (ctx: DurableObjectState, env: never) => object) | null = null;
  return {
    binding: resolved.binding,
    toolNames: resolved.tools ? MEMORY_TOOL_NAMES : [],
    inspectorScript: resolved.api ? INSPECTOR_MEMORY_SCRIPT : "",
    openTurn: (agent, ctx, scope) => openMemoryTurn(resolved, agent, ctx, scope),
    handlerAgent: (agent, scope) => handlerAgentOf(resolved, agent, scope),
    routes: memoryRoutes(resolved),
    objectClass() {
      // One class per memory(), made once: its options come from a prototype getter, as
      // EdgelinkContext's agent does.
      objectClass ??= class EdgelinkMemory extends MemoryObject<object> {
        protected override get memoryOptions() {
          return objectOptions;
        }
      };
      return objectClass;
    },
  };
}
