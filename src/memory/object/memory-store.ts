import { A2AError } from "../../protocol/errors";
import { type MemoryHandle, openMemory } from "./memory-stub";

/** One scope's memory as the agent uses it. */
export type MemoryStore = MemoryHandle;

/** The memory of one scope key of one tenant; a missing binding is a clear error. */
export function memoryStore(
  env: object,
  binding: string,
  tenant: string,
  key: string,
): MemoryStore {
  const ns = (env as Record<string, unknown>)[binding] as DurableObjectNamespace | undefined;
  if (!ns || typeof ns.idFromName !== "function") {
    throw new A2AError(
      "Internal",
      `Durable Object binding ${binding} is missing; declare it in wrangler.toml (memory is on)`,
    );
  }
  return openMemory(ns, tenant, key);
}
