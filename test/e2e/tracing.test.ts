import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { attr, startReceiver } from "./support/otlp-receiver";
import { type DemoAgent, startWorker } from "./support/worker";

let receiver: Awaited<ReturnType<typeof startReceiver>>;
let peer: DemoAgent;
let parent: DemoAgent;

beforeAll(async () => {
  receiver = await startReceiver();
  peer = await startWorker("test/e2e/support/traced.wrangler.toml", {
    OTLP_URL: receiver.url,
    SERVICE_NAME: "peer",
  });
  parent = await startWorker("test/e2e/support/traced.wrangler.toml", {
    OTLP_URL: receiver.url,
    SERVICE_NAME: "parent",
    PEER_URL: `${peer.baseUrl}/`,
  });
}, 120_000);

afterAll(async () => {
  await parent?.stop();
  await peer?.stop();
  receiver?.server.close();
});

describe("tracing end to end (otel-cf-workers, OTLP/HTTP)", () => {
  it("T5 one request's spans across the Worker, its Durable Object and a delegated agent arrive as one trace", async () => {
    const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
    const response = await fetch(`${parent.baseUrl}/`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "a2a-version": "1.0",
        traceparent: `00-${traceId}-00f067aa0ba902b7-01`,
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "SendMessage",
        params: {
          message: { messageId: "m1", role: "ROLE_USER", parts: [{ text: "delegate it" }] },
        },
      }),
    });
    const body = (await response.json()) as { result?: { task?: { status?: { state?: string } } } };
    expect(body.result?.task?.status?.state, JSON.stringify(body)).toBe("TASK_STATE_COMPLETED");
    const deadline = Date.now() + 30_000;
    const inTrace = () => receiver.spans.filter((s) => s.traceId === traceId);
    const runs = () => inTrace().filter((s) => s.name.startsWith("invoke_agent Traced"));
    while (runs().length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    const spans = inTrace();
    const names = spans.map((s) => s.name);
    // The parent's server span, its run in the Durable Object, the delegation, the peer's
    // server span and the peer's run: all in the caller's trace.
    const seen = receiver.spans.map((s) => `${s.traceId.slice(0, 6)} ${s.name}`).join(" | ");
    expect(names, seen).toContain("SendMessage");
    expect(names, seen).toContain("SendStreamingMessage");
    expect(runs()).toHaveLength(2);
    const delegation = spans.find((s) => s.name.startsWith("invoke_agent http"));
    expect(delegation?.kind).toBe(3); // OTLP's SPAN_KIND_CLIENT
    const peerServer = spans.find((s) => s.name === "SendStreamingMessage");
    const conversations = new Set(runs().map((r) => attr(r, "gen_ai.conversation.id")));
    expect(conversations.size).toBe(2);
    expect(attr(peerServer, "a2a.method.name")).toBe("SendStreamingMessage");
    // No span of any other trace was made for this request's work.
    const strays = receiver.spans.filter(
      (s) => s.traceId !== traceId && s.name.startsWith("invoke_agent"),
    );
    expect(strays).toEqual([]);
  }, 60_000);
});
