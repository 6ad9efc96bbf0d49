import { runInDurableObject } from "cloudflare:test";

type Json = Record<string, unknown>;

/**
 * Replaces fields of the agent one live context object serves (white-box: the demo agent
 * keeps its defaults everywhere else). `fields` gets the agent as it is.
 */
export async function withAgent(stub: DurableObjectStub, fields: (agent: Json) => Json) {
  await runInDurableObject(stub, (instance) => {
    const agent = (instance as unknown as { agent: Json }).agent;
    Object.defineProperty(instance, "agent", {
      configurable: true,
      value: { ...agent, ...fields(agent) },
    });
  });
}

/** Sets some of the agent's limits on one live context object. */
export const withLimits = (stub: DurableObjectStub, limits: Json) =>
  withAgent(stub, (agent) => ({ limits: { ...(agent.limits as Json), ...limits } }));
