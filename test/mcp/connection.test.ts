import { env, SELF } from "cloudflare:test";
import { context, trace } from "@opentelemetry/api";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { McpSession } from "../../src/mcp/catalog";
import { clearMcpCache, mcpServers } from "../../src/mcp/index";
import { openai } from "../../src/providers/openai/openai-chat";
import { harness } from "../harness/agents/worker";
import { FakeProvider } from "../providers/fake-provider";
import { parseSse, userMessage } from "../support/helpers";

type Json = Record<string, unknown>;
const workerEnv = env as unknown as { MCP_URL: string };
const stats = async () =>
  (await (await fetch(`${workerEnv.MCP_URL}/stats`)).json()) as {
    traceparents: (string | null)[];
  };

const exporter = new InMemorySpanExporter();
const register = () =>
  trace.setGlobalTracerProvider(
    new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }),
  );
beforeAll(register);
afterAll(() => {
  trace.disable();
});

const hex = (n: number) =>
  Array.from(crypto.getRandomValues(new Uint8Array(n)), (b) =>
    b.toString(16).padStart(2, "0"),
  ).join("");

let fake: FakeProvider;
beforeEach(async () => {
  clearMcpCache();
  await fetch(`${workerEnv.MCP_URL}/stats`, { method: "POST" });
  fake = new FakeProvider({ seed: 5, maxChunk: 11 });
  harness.fetch = fake.fetch;
  harness.requests = [];
  harness.model = openai({
    model: "gpt-4o-mini",
    apiKey: "sk-test",
    baseUrl: "https://fake.test/v1",
  });
});

/** Asks the MCP agent a question its model answers with the server's tool, in a trace. */
async function askWithTrace(traceId: string): Promise<Json[]> {
  fake.reply(
    { fixture: "openai-chat/tool-call-split-args.sse" },
    { fixture: "openai-chat/after-tool-result-text.sse" },
  );
  const response = await SELF.fetch("http://mcp.test/", {
    method: "POST",
    headers: {
      "Content-Type": "application/json",
      "A2A-Version": "1.0",
      traceparent: `00-${traceId}-${hex(8)}-01`,
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "SendStreamingMessage",
      params: { message: userMessage("What is the capital of the UK? Use the tool.") },
    }),
  });
  return parseSse(await response.text()).map((e) => (e.data as { result: Json }).result);
}

describe("MCP calls in the trace", () => {
  it("a tool call to an MCP server is a `tools/call` CLIENT span under its execute_tool span, and the server receives that span as traceparent", async () => {
    const traceId = hex(16);
    const events = await askWithTrace(traceId);
    const end = events.at(-1)?.statusUpdate as Json;
    expect((end.status as Json).state).toBe("TASK_STATE_COMPLETED");

    const spans = exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === traceId);
    const tool = spans.find((s) => s.name === "execute_tool get_capital");
    const call = spans.find((s) => s.name === "tools/call get_capital");
    expect(call?.kind).toBe(2); // CLIENT
    expect(call?.parentSpanContext?.spanId).toBe(tool?.spanContext().spanId);
    expect(call?.attributes["mcp.method.name"]).toBe("tools/call");
    expect((await stats()).traceparents).toEqual([
      `00-${traceId}-${call?.spanContext().spanId}-01`,
    ]);
  });

  it("an MCP tool's error text stays off its span without the opt-in: the status names the failure, not the text", async () => {
    const servers = mcpServers({
      docs: { url: "${MCP_URL}/mcp", headers: { Authorization: "Bearer ${MCP_TOKEN}" } },
    });
    const session = new McpSession(env);
    const tools = await session.tools(servers.servers, new Set(), 2000);
    const traceId = hex(16);
    const parent = trace.setSpanContext(context.active(), {
      traceId,
      spanId: hex(8),
      traceFlags: 1,
    });
    await expect(
      tools.broken?.run({}, { signal: new AbortController().signal, traceContext: parent }),
    ).rejects.toThrow("the index is offline");
    await session.close();
    const call = exporter
      .getFinishedSpans()
      .find((s) => s.spanContext().traceId === traceId && s.name === "tools/call broken");
    expect(call?.status.code).toBe(2);
    const everything = JSON.stringify({ status: call?.status, events: call?.events });
    expect(everything).not.toContain("the index is offline");
    expect(call?.status.message).toBe("UserFacingError");
    expect(call?.events.find((e) => e.name === "exception")).toBeDefined();
  });

  it("with no tracer provider registered, the MCP server receives no traceparent", async () => {
    trace.disable();
    try {
      const events = await askWithTrace(hex(16));
      const end = events.at(-1)?.statusUpdate as Json;
      expect((end.status as Json).state).toBe("TASK_STATE_COMPLETED");
      expect((await stats()).traceparents).toEqual([null]);
    } finally {
      register();
    }
  });
});
