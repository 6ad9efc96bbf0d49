/**
 * What `edgelink/memory` exports of the store: the shapes, limits, embedders and the
 * rendering of a bundle (re-exported by src/memory/index.ts).
 */
export type { HandlerMemory, MemoryRecall } from "../agent/memory-source";
export type {
  FactSource,
  GoalStatus,
  MemoryApplyResult,
  MemoryBundle,
  MemoryEntity,
  MemoryFact,
  MemoryGoal,
  MemoryItem,
  MemoryKind,
  MemoryListQuery,
  MemoryOp,
  MemoryOrigin,
  MemoryPage,
  MemoryStats,
  MemoryStrategy,
  MemoryTurn,
  RecalledMemory,
  RememberQuery,
  TurnRole,
} from "../protocol/memory";
export { claimHash } from "./base/claim-hash";
export {
  type Embedder,
  type OpenAiEmbedderOptions,
  openAiEmbedder,
  type VectorIndex,
  type WorkersAiBinding,
  workersAiEmbedder,
} from "./base/embedder";
export { DEFAULT_MEMORY_LIMITS, type MemoryLimits, resolveMemoryLimits } from "./base/limits";
export { renderMemoryBundle } from "./base/render";
export { memoryObjectName } from "./base/scope";
export type { MemoryObjectOptions } from "./object/memory-object";
export { type MemoryHandle, openMemory } from "./object/memory-stub";
