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
  RecalledMemory,
  RememberQuery,
} from "../../protocol/memory";
import { unwrap } from "../../storage/rpc-result";
import { memoryObjectName } from "../base/scope";
import type { MemoryRpc } from "./memory-object";

/** One memory as the Worker uses it: the object's methods, their errors thrown as A2AError. */
export interface MemoryHandle {
  apply(ops: MemoryOp[], origin?: MemoryOrigin): Promise<MemoryApplyResult>;
  remember(query: RememberQuery): Promise<MemoryBundle>;
  /**
   * The same recall as `remember` (access counted alike), answered as the rendered prompt
   * section only: what a model turn sends, without the bundle crossing the boundary.
   */
  recall(query: RememberQuery): Promise<RecalledMemory>;
  neighbours(claims: string[], k: number): Promise<MemoryFact[][]>;
  list(query: MemoryListQuery): Promise<MemoryPage>;
  get(kind: MemoryKind, id: string): Promise<MemoryItem | null>;
  remove(kind: MemoryKind, id: string): Promise<boolean>;
  erase(): Promise<{ erased: number }>;
  stats(): Promise<MemoryStats>;
  /** One extraction call of the hourly allowance: false when it is used up. */
  reserveExtraction(): Promise<boolean>;
}

/**
 * The memory of one scope key in one tenant (see `memoryObjectName`: an anonymous caller,
 * key "", has none and this throws).
 * @example
 * const memory = openMemory(env.EDGELINK_MEMORY, tenant, ownerOf(principal));
 * const bundle = await memory.remember({ text: "What tea do I like?" });
 */
export function openMemory(
  ns: DurableObjectNamespace,
  tenant: string,
  scopeKey: string,
): MemoryHandle {
  const stub = ns.get(ns.idFromName(memoryObjectName(tenant, scopeKey))) as unknown as MemoryRpc;
  return {
    apply: async (ops, origin) => unwrap(await stub.apply(ops, origin)),
    remember: async (query) => unwrap(await stub.remember(query)),
    recall: async (query) => unwrap(await stub.recall(query)),
    neighbours: async (claims, k) => unwrap(await stub.neighbours(claims, k)),
    list: async (query) => unwrap(await stub.list(query)),
    get: async (kind, id) => unwrap(await stub.get(kind, id)),
    remove: async (kind, id) => unwrap(await stub.remove(kind, id)),
    erase: async () => unwrap(await stub.erase()),
    stats: async () => unwrap(await stub.stats()),
    reserveExtraction: async () => unwrap(await stub.reserveExtraction()),
  };
}
