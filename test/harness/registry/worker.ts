import { DurableObject } from "cloudflare:workers";
import { defineRegistry } from "../../../src/registry/index";

/** Small limits, so the tests reach each of them. */
export const TEST_LIMITS = { maxAgents: 5, maxPageSize: 3, maxTags: 6, maxCardChars: 4096 };

/** What a fake agent answers at one URL. */
export interface Served {
  status?: number;
  body: unknown;
  headers?: Record<string, string>;
}

/**
 * The agents the registry reads cards from: workerd tests have no network, so the
 * registry's fetch comes here, where each test puts what a URL serves.
 */
export class FakeAgents extends DurableObject {
  async serve(url: string, served: Served | null): Promise<void> {
    if (served === null) await this.ctx.storage.delete(url);
    else await this.ctx.storage.put(url, served);
  }

  /** The URLs fetched so far, in order. */
  async fetched(): Promise<string[]> {
    return (await this.ctx.storage.get<string[]>("/fetched")) ?? [];
  }

  override async fetch(request: Request): Promise<Response> {
    const seen = await this.fetched();
    await this.ctx.storage.put("/fetched", [...seen, request.url]);
    const served = await this.ctx.storage.get<Served>(request.url);
    if (!served) return new Response("no agent here", { status: 404 });
    const body = typeof served.body === "string" ? served.body : JSON.stringify(served.body);
    return new Response(body, {
      status: served.status ?? 200,
      headers: { "Content-Type": "application/json", ...served.headers },
    });
  }
}

interface TestEnv {
  FAKE_AGENTS: DurableObjectNamespace<FakeAgents>;
}

export const fakeAgents = (env: TestEnv) =>
  env.FAKE_AGENTS.get(env.FAKE_AGENTS.idFromName("agents"));

const registry = defineRegistry<TestEnv>({
  auth: { apiKeys: { secret: "REGISTRY_KEYS" } },
  limits: TEST_LIMITS,
  verify: { fetch: (request, env) => fakeAgents(env).fetch(request) },
});

/** The registry with a clock the tests move forward (`advance`), instead of waiting. */
export class TestRegistry extends registry.EdgelinkRegistry {
  private offset = 0;

  protected override now(): number {
    return Date.now() + this.offset;
  }

  async advance(ms: number): Promise<void> {
    this.offset += ms;
  }
}

export default registry;
