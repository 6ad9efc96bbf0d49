import { env, runInDurableObject } from "cloudflare:test";
import { memoryObjectName } from "../../../src/memory/base/scope";
import type { MemoryObjectOptions, MemoryRpc } from "../../../src/memory/object/memory-object";
import { type MemoryHandle, openMemory } from "../../../src/memory/object/memory-stub";
import { countingSql } from "../../support/counting-sql";
import { storeHarness } from "./store-worker";

let n = 0;
/** A name no other test (in any file sharing this workerd) uses. */
export const unique = (prefix: string) =>
  `${prefix}-${Date.now().toString(36)}-${++n}-${crypto.randomUUID().slice(0, 8)}`;

export interface TestMemory extends MemoryHandle {
  tenant: string;
  key: string;
  id: DurableObjectId;
  /** The object's RPC stub, for hostile calls the handle's types would not allow. */
  raw: MemoryRpc;
  stub: DurableObjectStub;
}

/** A memory of its own, configured with `options`. */
export function storeMemory(
  options: MemoryObjectOptions = {},
  tenant = unique("tenant"),
  key = unique("owner"),
): TestMemory {
  const ns = env.STORE_MEMORY;
  const id = ns.idFromName(memoryObjectName(tenant, key));
  storeHarness.options.set(id.toString(), options);
  const stub = ns.get(id);
  return {
    ...openMemory(ns, tenant, key),
    tenant,
    key,
    id,
    raw: stub as unknown as MemoryRpc,
    stub,
  };
}

/** Runs SQL inside the memory's object (to look at what is stored, or to age rows). */
export function inObject<T>(memory: TestMemory, fn: (sql: SqlStorage) => T): Promise<T> {
  return runInDurableObject(memory.stub, (_instance, state) => fn(state.storage.sql));
}

/** Runs `fn` over the memory's SQL inside its object, counting the statements it runs. */
export function inObjectCounting<T>(
  memory: TestMemory,
  fn: (sql: SqlStorage, statements: string[]) => T,
): Promise<T> {
  return runInDurableObject(memory.stub, (_instance, state) => {
    const { sql, statements } = countingSql(state.storage.sql);
    return fn(sql, statements);
  });
}
