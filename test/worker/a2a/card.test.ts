import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { servedFeatures } from "../../../src/worker/a2a/card";
import { defineAgent } from "../../../src/worker/app/define-agent";
import { BASE, rpc } from "../../support/helpers";

type Json = Record<string, unknown>;

describe("agent card (A2, A3)", () => {
  it("serves the v1 card with interfaces built from the request origin", async () => {
    const response = await SELF.fetch("https://my-agent.example.com/.well-known/agent-card.json");
    expect(response.status).toBe(200);
    const card = (await response.json()) as Json;
    expect(card.name).toBe("Edgelink demo agent");
    expect(card.supportedInterfaces).toEqual([
      { url: "https://my-agent.example.com/", protocolBinding: "JSONRPC", protocolVersion: "1.0" },
      { url: "https://my-agent.example.com", protocolBinding: "HTTP+JSON", protocolVersion: "1.0" },
    ]);
    expect((card.skills as Json[]).map((s) => s.id)).toEqual([
      "echo",
      "greet",
      "recap",
      "count",
      "tools",
    ]);
    // Non-string skill examples travel as JSON text (A4).
    expect((card.skills as Json[])[4]?.examples).toEqual([
      '{"toolName":"add","args":{"a":2,"b":3}}',
    ]);
  });

  it("declares exactly what is served: streaming on, push on, no extended card (A3)", async () => {
    const card = (await (await SELF.fetch(`${BASE}/.well-known/agent-card.json`)).json()) as Json;
    const caps = card.capabilities as Json;
    expect(caps).toMatchObject({
      streaming: true,
      pushNotifications: true,
      extendedAgentCard: false,
    });
    const profile = (caps.extensions as Json[])[0]?.params as Json;
    expect(profile).toMatchObject({
      role: "worker",
      transport: "sse",
      // The demo has tools but no model, and delegates nothing.
      capabilities: { toolCalling: true, hasLlm: false, delegation: false },
    });
    expect((profile.capabilities as Json).maxConcurrency).toBeUndefined();
    // The declaration holds: push configs are served (an unknown task is the only error).
    expect(
      ((await rpc("ListTaskPushNotificationConfigs", { taskId: "x" })).body.error as Json).code,
    ).toBe(-32001);
  });

  it("has caching headers and answers If-None-Match with 304", async () => {
    const first = await SELF.fetch(`${BASE}/.well-known/agent-card.json`);
    const etag = first.headers.get("ETag");
    expect(first.headers.get("Cache-Control")).toBe("public, max-age=300");
    expect(etag).toMatch(/^"[0-9a-f]{40}"$/);
    expect(Date.parse(first.headers.get("Last-Modified") ?? "")).not.toBeNaN();
    const second = await SELF.fetch(`${BASE}/.well-known/agent-card.json`, {
      headers: { "If-None-Match": etag ?? "" },
    });
    expect(second.status).toBe(304);
    const other = await SELF.fetch(`${BASE}/.well-known/agent-card.json`, {
      headers: { "If-None-Match": '"different"' },
    });
    expect(other.status).toBe(200);
  });

  it("serves the v0.3 card at the legacy path", async () => {
    const card = (await (await SELF.fetch(`${BASE}/.well-known/agent.json`)).json()) as Json;
    expect(card).toMatchObject({
      protocolVersion: "0.3.0",
      url: `${BASE}/`,
      preferredTransport: "JSONRPC",
      capabilities: { streaming: true, pushNotifications: true, stateTransitionHistory: true },
    });
  });
});

describe("served flags of a delegating agent (A3)", () => {
  it("A3 an agent given other agents as tools declares delegation and tool calling", () => {
    const plain = defineAgent({ card: { name: "p", description: "p" }, handler: () => "hi" });
    expect(servedFeatures(plain.agent as never, BASE)).toMatchObject({
      delegation: false,
      toolCalling: false,
    });
    const orchestrator = defineAgent({
      card: { name: "o", description: "o" },
      handler: () => "hi",
      agents: { writer: { url: "https://writer.example.com", description: "Writes" } },
    });
    expect(servedFeatures(orchestrator.agent as never, BASE)).toMatchObject({
      delegation: true,
      toolCalling: true,
    });
  });
});
