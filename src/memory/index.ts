/**
 * `edgelink/memory`: long-term memory for an agent, turned on with
 * `defineAgent({ memory: memory({...}) })`. A Worker that does not import it bundles none
 * of the memory code.
 * @example
 * ```ts
 * import { memory } from "edgelink/memory";
 * const options = memory({ scope: "owner", extract: true, tools: true });
 * ```
 * @packageDocumentation
 */

export { memory } from "./agent/agent-memory";
export { OPERATOR_HEADER } from "./api/memory-api";
export type { MemoryOptions } from "./base/options";
export type { MemoryScope, MemoryWho } from "./base/scope-key";
export * from "./public";
