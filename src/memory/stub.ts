import { type Result, unwrap } from "../durable/result";
import { A2AError } from "../models/errors";
import type {
  MemoryApplyResult,
  MemoryBundle,
  MemoryFact,
  MemoryItem,
  MemoryKind,
  MemoryListQuery,
  MemoryOp,
  MemoryOrigin,
  MemoryPage,
  MemoryStats,
  RememberQuery,
} from "../models/memory";
import { memoryObjectName } from "./scope";

/** One scope's memory as the agent uses it: the object's RPC methods, errors thrown again. */
export interface MemoryStore {
  apply(ops: MemoryOp[], origin?: MemoryOrigin): Promise<MemoryApplyResult>;
  remember(query: RememberQuery): Promise<MemoryBundle>;
  neighbours(claims: string[], k: number): Promise<MemoryFact[][]>;
  list(query: MemoryListQuery): Promise<MemoryPage>;
  get(kind: MemoryKind, id: string): Promise<MemoryItem | null>;
  remove(kind: MemoryKind, id: string): Promise<boolean>;
  erase(): Promise<{ erased: number }>;
  stats(): Promise<MemoryStats>;
  /** True (and counted) while the scope is under `extractionCallsPerHour`. */
  reserveExtraction(): Promise<boolean>;
}

/** What the object's RPC methods answer: each a Result, as every Edgelink object's. */
type RawMemory = { [K in keyof MemoryStore]: (...args: Parameters<MemoryStore[K]>) => Promise<Result<Awaited<ReturnType<MemoryStore[K]>>>> };

const METHODS = [
  "apply",
  "remember",
  "neighbours",
  "list",
  "get",
  "remove",
  "erase",
  "stats",
  "reserveExtraction",
] as const satisfies readonly (keyof MemoryStore)[];

/** The memory object of one scope of one tenant; a missing binding is a clear error. */
export function memoryStore(env: object, binding: string, tenant: string, key: string): MemoryStore {
  const ns = (env as Record<string, unknown>)[binding] as DurableObjectNamespace | undefined;
  if (!ns || typeof ns.idFromName !== "function") {
    throw new A2AError(
      "Internal",
      `Durable Object binding ${binding} is missing; declare it in wrangler.toml (memory is on)`,
    );
  }
  const raw = ns.get(ns.idFromName(memoryObjectName(tenant, key))) as unknown as RawMemory;
  const store: Record<string, unknown> = {};
  for (const method of METHODS) {
    store[method] = async (...args: unknown[]) =>
      unwrap(await (raw[method] as (...a: unknown[]) => Promise<Result<unknown>>)(...args));
  }
  return store as unknown as MemoryStore;
}
