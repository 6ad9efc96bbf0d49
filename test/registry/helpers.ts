import { env, runDurableObjectAlarm } from "cloudflare:test";
import type { TestRegistry } from "./worker";

/** A tenant's registry object (the default tenant's by default), its clock at hand. */
export function registryOf(tenant = "") {
  const ns = env.EDGELINK_REGISTRY as DurableObjectNamespace<TestRegistry>;
  return ns.get(ns.idFromName(`registry/${encodeURIComponent(tenant)}`));
}

/**
 * The registry lives on between tests (one workerd): each test starts with every entry of
 * the default tenant expired and pruned, the object's clock a year on.
 */
export async function resetRegistry(): Promise<void> {
  const stub = registryOf();
  await stub.advance(365 * 86_400_000);
  await runDurableObjectAlarm(stub);
}
