import { env, runDurableObjectAlarm } from "cloudflare:test";
import { servedCardUrl } from "../../../src/registry/registry-verify";
import { fakeAgents, type TestRegistry } from "./worker";

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

/** Serves `card` as the agent at its `url` would: where the registry reads it from. */
export async function serveCard<T extends { url: string }>(card: T): Promise<T> {
  await agents().serve(servedCardUrl(new URL(card.url)), { body: card });
  return card;
}

/** The fake agents the registry reads cards and key sets from. */
export function agents() {
  return fakeAgents(env as unknown as Parameters<typeof fakeAgents>[0]);
}
