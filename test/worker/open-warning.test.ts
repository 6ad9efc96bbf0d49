/**
 * An agent without auth says so, once per isolate, when it is served from a host that is
 * not local development (a deployed Worker), and never under `wrangler dev`.
 */
import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { defineAgent } from "../../src/worker/app/define-agent";

type Worker = ReturnType<typeof defineAgent<Record<string, unknown>>>;
const card = { name: "Open agent", description: "no auth" };

async function get(worker: Worker, url: string): Promise<Response> {
  const ctx = createExecutionContext();
  const response = await worker.fetch(new Request(url), { ...env }, ctx);
  void waitOnExecutionContext(ctx);
  await response.body?.cancel();
  return response;
}

const openWarnings = (spy: ReturnType<typeof vi.spyOn>) =>
  spy.mock.calls.filter((args: unknown[]) => String(args[0]).includes("without auth"));

describe("an open agent on a public host is loud", () => {
  afterEach(() => vi.restoreAllMocks());

  it("warns once, naming the agent, its origin and how to close it", async () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const worker = defineAgent({ card, handler: () => "hi" });
    await get(worker, "https://agent.example.com/.well-known/agent-card.json");
    await get(worker, "https://agent.example.com/tasks");
    await get(worker, "https://other.example.com/.well-known/agent-card.json");
    const calls = openWarnings(warn);
    expect(calls).toHaveLength(1);
    expect(JSON.parse(String(calls[0]?.[0])).message).toMatch(
      /agent "Open agent" is served at https:\/\/agent\.example\.com without auth.*auth option of defineAgent/,
    );
  });

  it("is quiet on localhost, 127.0.0.1 and [::1] (wrangler dev)", async () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const worker = defineAgent({ card, handler: () => "hi" });
    for (const host of ["localhost:8787", "127.0.0.1:8787", "[::1]:8787"]) {
      await get(worker, `http://${host}/.well-known/agent-card.json`);
    }
    expect(openWarnings(warn)).toEqual([]);
    // The same agent deployed later in the isolate still warns.
    await get(worker, "https://agent.example.com/.well-known/agent-card.json");
    expect(openWarnings(warn)).toHaveLength(1);
  });

  it("an agent with auth never warns", async () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const worker = defineAgent({
      card,
      handler: () => "hi",
      auth: { apiKeys: { secret: "AGENT_API_KEYS" } },
    });
    await get(worker, "https://agent.example.com/.well-known/agent-card.json");
    expect(openWarnings(warn)).toEqual([]);
  });
});
