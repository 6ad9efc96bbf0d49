/**
 * End-to-end authentication: the official A2A JS SDK (@a2a-js/sdk) against an agent with
 * `auth` served by a real local Worker, over both v1.0 bindings. With an API key (sent by
 * the SDK's own auth hook) it works; the same client without credentials gets 401; another
 * principal cannot see the first one's task.
 */
import {
  ClientFactory,
  ClientFactoryOptions,
  createAuthenticatingFetchWithRetry,
  JsonRpcTransportFactory,
  RestTransportFactory,
} from "@a2a-js/sdk/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { asTask, type Binding, stateName, textOf, textRequest } from "./support/sdk";
import { type DemoAgent, startWorker } from "./support/worker";

const KEYS = JSON.stringify({
  "alice-e2e-key-0123456789": { subject: "alice" },
  "bob-e2e-key-0123456789": { subject: "bob" },
});

let agent: DemoAgent;
beforeAll(async () => {
  agent = await startWorker("test/e2e/support/auth.wrangler.toml", { AGENT_API_KEYS: KEYS });
});
afterAll(async () => {
  await agent?.stop();
});

/** An SDK client whose transports send `key` through the SDK's auth hook, recording statuses. */
async function clientWith(binding: Binding, key: string | null) {
  const statuses: number[] = [];
  const recording: typeof fetch = async (input, init) => {
    const response = await fetch(input, init);
    statuses.push(response.status);
    return response;
  };
  const fetchImpl = key
    ? createAuthenticatingFetchWithRetry(recording, {
        headers: async () => ({ "X-API-Key": key }),
        shouldRetryWithHeaders: async () => undefined,
      })
    : recording;
  const options = ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    transports: [
      new JsonRpcTransportFactory({ fetchImpl }),
      new RestTransportFactory({ fetchImpl }),
    ],
    preferredTransports: [binding],
  });
  const client = await new ClientFactory(options).createFromUrl(agent.baseUrl);
  return { client, statuses };
}

describe.each<Binding>(["JSONRPC", "HTTP+JSON"])("SDK client with auth over %s", (binding) => {
  it("with an API key: send and get work", async () => {
    const { client } = await clientWith(binding, "alice-e2e-key-0123456789");
    const task = asTask(await client.sendMessage(textRequest("there")));
    expect(stateName(task.status?.state)).toBe("TASK_STATE_COMPLETED");
    expect(textOf(task.artifacts[0]?.parts)).toBe("Hello there");
    const again = await client.getTask({ tenant: "", id: task.id, historyLength: 0 });
    expect(again.id).toBe(task.id);
  });

  it("the same client without credentials gets 401 (the public card still loads)", async () => {
    const { client, statuses } = await clientWith(binding, null);
    await expect(client.sendMessage(textRequest("let me in"))).rejects.toThrow();
    expect(statuses).toContain(401);
  });

  it("another principal cannot read the task", async () => {
    const alice = await clientWith(binding, "alice-e2e-key-0123456789");
    const task = asTask(await alice.client.sendMessage(textRequest("secret")));
    const bob = await clientWith(binding, "bob-e2e-key-0123456789");
    await expect(
      bob.client.getTask({ tenant: "", id: task.id, historyLength: 0 }),
    ).rejects.toThrow();
    expect(bob.statuses.at(-1)).toBe(binding === "JSONRPC" ? 200 : 404);
  });
});
