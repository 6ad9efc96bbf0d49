import { env, SELF } from "cloudflare:test";
import { beforeEach, describe, expect, it, vi } from "vitest";
import { resolveAgent } from "../../src/agent/definition";
import type { RunContext } from "../../src/agent/run-context";
import { runToolCalls } from "../../src/agent/tools/tool-runner";
import { openTurnTools } from "../../src/agent/tools/turn-tools";
import { defineAgent } from "../../src/index";
import { McpSession } from "../../src/mcp/catalog";
import type { McpServerConfig } from "../../src/mcp/config";
import { McpConnection } from "../../src/mcp/connection";
import { clearMcpCache, listMcp, McpError, mcpServers } from "../../src/mcp/index";
import { openai } from "../../src/providers/openai/openai-chat";
import { harness } from "../harness/agents/worker";
import { FakeProvider } from "../providers/fake-provider";
import { parseSse, userMessage } from "../support/helpers";

type Json = Record<string, unknown>;
const workerEnv = env as unknown as { MCP_URL: string; MCP_DOWN_URL: string; MCP_TOKEN: string };

const docs = (config: Partial<McpServerConfig> = {}) =>
  mcpServers({
    docs: {
      url: "${MCP_URL}/mcp",
      headers: { Authorization: "Bearer ${MCP_TOKEN}" },
      ...config,
    },
  });

interface Stats {
  methods: string[];
  calls: { name: string; args: unknown }[];
  canceled: number;
  unauthorized: number;
}
const stats = async (): Promise<Stats> =>
  (await (await fetch(`${workerEnv.MCP_URL}/stats`)).json()) as Stats;
const resetStats = () => fetch(`${workerEnv.MCP_URL}/stats`, { method: "POST" });

beforeEach(async () => {
  clearMcpCache();
  await resetStats();
});

describe("MCP server configuration (M1, M2)", () => {
  it("M1: a stdio server is a configuration error naming the server, raised at definition", () => {
    const define = (mcp: Record<string, unknown>) => () =>
      defineAgent({ card: { name: "x", description: "x" }, mcp: mcpServers(mcp as never) });
    expect(define({ local: { transport: "stdio", url: "x" } })).toThrow(
      /mcp\.local: stdio MCP servers cannot run on Cloudflare Workers/,
    );
    expect(define({ local: { command: "npx", args: ["server"] } })).toThrow(
      /mcp\.local: stdio MCP servers cannot run/,
    );
    expect(define({ web: { url: "ftp://example.com" } })).toThrow(/mcp\.web: url must be http/);
    expect(define({ web: { url: "https://example.com", transport: "ws" } })).toThrow(
      /mcp\.web: transport must be "streamable-http" or "sse"/,
    );
    expect(define({ web: {} })).toThrow(/mcp\.web: url is required/);
  });

  it("M1: servers given to defineAgent as a plain object (not mcpServers) are refused at definition", () => {
    const plain = { docs: { url: "https://mcp.example.com/mcp" } };
    expect(() =>
      defineAgent({ card: { name: "x", description: "x" }, mcp: plain as never }),
    ).toThrow('mcp must be mcpServers({ name: { url, headers, transport } }) from "edgelink/mcp"');
  });

  it("M2: ${VAR} in the url and headers comes from the Worker's env; the server accepts the expanded token", async () => {
    const listing = await listMcp(docs(), workerEnv);
    expect(listing.tools.map((t) => t.name).sort()).toEqual([
      "add",
      "broken",
      "get_capital",
      "slow",
    ]);
    expect((await stats()).unauthorized).toBe(0);
  });

  it("M2: a missing variable is an error naming the server, the header and the variable", async () => {
    const servers = docs({ headers: { Authorization: "Bearer ${NO_SUCH_SECRET}" } });
    await expect(listMcp(servers, workerEnv)).rejects.toThrow(
      'MCP server "docs": headers.Authorization uses ${NO_SUCH_SECRET}, but the Worker has no variable or secret NO_SUCH_SECRET',
    );
  });

  it("M1: a wrong token is refused by the server; the error names the server", async () => {
    const error = await listMcp(docs(), { ...workerEnv, MCP_TOKEN: "wrong" }).catch((e) => e);
    expect(error).toBeInstanceOf(McpError);
    expect((error as McpError).server).toBe("docs");
    expect(String(error.message)).toMatch(/^MCP server "docs": could not connect/);
    expect((await stats()).unauthorized).toBeGreaterThan(0);
  });

  it("M1: a server that is down fails with an error naming the server and its address", async () => {
    const servers = mcpServers({ gone: { url: "${MCP_DOWN_URL}/mcp" } });
    const error = await listMcp(servers, workerEnv).catch((e) => e);
    expect(error).toBeInstanceOf(McpError);
    expect(error.message).toContain('MCP server "gone": could not connect to http://127.0.0.1:');
  });
});

describe("MCP tools and resources (M3)", () => {
  it("M3: lists tools (name, description, input schema, server) and resources", async () => {
    const listing = await listMcp(docs(), workerEnv);
    const capital = listing.tools.find((t) => t.name === "get_capital");
    expect(capital).toMatchObject({
      server: "docs",
      name: "get_capital",
      description: "The capital city of a country",
      inputSchema: {
        type: "object",
        properties: { country: { type: "string", description: "The country" } },
        required: ["country"],
      },
    });
    expect(listing.resources).toEqual([
      {
        server: "docs",
        uri: "docs://readme",
        name: "readme",
        description: "How the docs are organised",
        mimeType: "text/markdown",
      },
    ]);
  });

  it("H16: allowedTools and blockedTools filter the MCP tools a turn is offered, by listed name", async () => {
    const agent = resolveAgent<unknown>({
      card: { name: "x", description: "x" },
      mcp: docs(),
      allowedTools: ["add", "get_capital", "slow"],
      blockedTools: ["slow"],
    });
    const ctx = { env: workerEnv, signal: new AbortController().signal };
    const turn = await openTurnTools(agent, ctx as unknown as RunContext<unknown>);
    expect(Object.keys(turn?.tools ?? {}).sort()).toEqual(["add", "get_capital"]);
    await turn?.close();
  });

  it("M3: the listing is cached per server for its lifetime; a zero lifetime asks every time", async () => {
    await listMcp(docs(), workerEnv);
    await listMcp(docs(), workerEnv);
    expect((await stats()).methods.filter((m) => m === "tools/list")).toHaveLength(1);
    await resetStats();
    await listMcp(docs({ cacheTtlMs: 0 }), workerEnv);
    await listMcp(docs({ cacheTtlMs: 0 }), workerEnv);
    expect((await stats()).methods.filter((m) => m === "tools/list")).toHaveLength(2);
  });

  it("M3: the same tools over the older SSE transport", async () => {
    const servers = docs({ url: "${MCP_URL}/sse", transport: "sse" });
    const listing = await listMcp(servers, workerEnv);
    expect(listing.tools.map((t) => t.name)).toContain("get_capital");
    const session = new McpSession(workerEnv);
    const tools = await session.tools(servers.servers, new Set(), 2000);
    await expect(
      tools.get_capital?.run({ country: "UK" }, { signal: new AbortController().signal }),
    ).resolves.toBe("London");
    await session.close();
  });

  it("names are disambiguated: a tool named like one of the agent's own gets the server's prefix", async () => {
    const session = new McpSession(workerEnv);
    const tools = await session.tools(docs().servers, new Set(["add"]), 2000);
    await session.close();
    expect(Object.keys(tools).sort()).toEqual(["broken", "docs_add", "get_capital", "slow"]);
  });

  it("calls a tool through the tool runner; a tool error comes back as an error result naming the server", async () => {
    const session = new McpSession(workerEnv);
    const tools = await session.tools(docs().servers, new Set(), 2000);
    const results = await runToolCalls(
      [
        { id: "c1", name: "get_capital", arguments: '{"country":"UK"}', input: { country: "UK" } },
        { id: "c2", name: "broken", arguments: "{}", input: {} },
      ],
      tools,
      { signal: new AbortController().signal, timeoutMs: 2000, maxCallsPerTurn: 8, parallel: true },
    );
    await session.close();
    expect(results).toEqual([
      expect.objectContaining({
        toolCallId: "c1",
        name: "get_capital",
        content: "London",
        isError: false,
      }),
      expect.objectContaining({
        toolCallId: "c2",
        name: "broken",
        content: 'MCP server "docs": tool broken failed: the index is offline',
        isError: true,
      }),
    ]);
    expect((await stats()).calls).toEqual([{ name: "get_capital", args: { country: "UK" } }]);
  });

  it("H12: a tool that runs past the tool timeout gets a timeout result, and the server is told to cancel", async () => {
    const session = new McpSession(workerEnv);
    const tools = await session.tools(docs().servers, new Set(), 200);
    // The tool would answer "waited 5000 ms"; the 200 ms limit's result is the proof, not a
    // stopwatch (a loaded machine may take seconds to get there).
    const [result] = await runToolCalls(
      [{ id: "c1", name: "slow", arguments: '{"ms":5000}', input: { ms: 5000 } }],
      tools,
      { signal: new AbortController().signal, timeoutMs: 200, maxCallsPerTurn: 8, parallel: true },
    );
    expect(result).toMatchObject({ isError: true, content: "Tool slow timed out after 200 ms" });
    // The abort reached the server as a cancellation (notifications/cancelled).
    await vi.waitFor(async () => expect((await stats()).canceled).toBe(1), {
      timeout: 10_000,
      interval: 25,
    });
    await session.close();
    const seen = await stats();
    expect(seen.methods).toContain("notifications/cancelled");
    expect(seen.canceled).toBe(1);
  });

  it("a canceled turn aborts the call at once", async () => {
    const connection = await McpConnection.open(docs().servers[0] as never, workerEnv);
    const controller = new AbortController();
    const call = connection.callTool(
      "slow",
      { ms: 5000 },
      { signal: controller.signal, timeoutMs: 60_000 },
    );
    setTimeout(() => controller.abort(new Error("canceled")), 50);
    await expect(call).rejects.toThrow(/MCP server "docs": calling tool slow/);
    await connection.close();
  });
});

describe("a model-backed agent using MCP tools", () => {
  let fake: FakeProvider;
  beforeEach(() => {
    fake = new FakeProvider({ seed: 5, maxChunk: 11 });
    harness.fetch = fake.fetch;
    harness.requests = [];
    harness.model = openai({
      model: "gpt-4o-mini",
      apiKey: "sk-test",
      baseUrl: "https://fake.test/v1",
    });
  });

  async function stream(text: string): Promise<Json[]> {
    const response = await SELF.fetch("http://mcp.test/", {
      method: "POST",
      headers: { "Content-Type": "application/json", "A2A-Version": "1.0" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "SendStreamingMessage",
        params: { message: userMessage(text) },
      }),
    });
    return parseSse(await response.text()).map((e) => (e.data as { result: Json }).result);
  }

  it("M3: offers the server's tools beside its own, runs the one the model calls on the server, then answers", async () => {
    fake.reply(
      { fixture: "openai-chat/tool-call-split-args.sse" },
      { fixture: "openai-chat/after-tool-result-text.sse" },
    );
    const events = await stream("What is the capital of the UK? Use the tool, then answer.");
    const end = events.at(-1)?.statusUpdate as Json;
    expect((end.status as Json).state).toBe("TASK_STATE_COMPLETED");

    // The model saw the agent's add, then the server's tools with their own schemas.
    const first = fake.requests[0]?.body as { tools: { function: Json }[] };
    const offered = first.tools.map((t) => t.function.name);
    expect(offered).toEqual(["add", "get_capital", "docs_add", "slow", "broken"]);
    expect(first.tools[1]?.function.parameters).toMatchObject({
      type: "object",
      properties: { country: { type: "string", description: "The country" } },
    });
    // The recorded call went to the MCP server; its answer went back to the model.
    expect((await stats()).calls).toEqual([{ name: "get_capital", args: { country: "UK" } }]);
    const second = fake.requests[1]?.body as { messages: Json[] };
    expect(second.messages.at(-1)).toMatchObject({ role: "tool", content: "London" });
    const text = events
      .flatMap((e) => (e.artifactUpdate ? [(e.artifactUpdate as Json).artifact as Json] : []))
      .flatMap((a) => (a.parts as { text?: string }[]).map((p) => p.text ?? ""))
      .join("");
    expect(text).toBe("The capital of the UK is London.");
  });

  it("M1: when its MCP server cannot be listed, the task fails with an error naming the server", async () => {
    // The turn throws before any model call; the object then fails the task with the message.
    const broken = defineAgent({
      card: { name: "x", description: "x" },
      model: harness.model ?? undefined,
      mcp: mcpServers({ gone: { url: "${MCP_DOWN_URL}/mcp" } }),
    });
    const { runModelAgent } = await import("../../src/agent/model/model-execution");
    const ctx = {
      env: workerEnv,
      signal: new AbortController().signal,
      message: userMessage("hello"),
      conversation: { providerItems: () => [] },
    };
    await expect(runModelAgent(ctx as never, broken.agent as never)).rejects.toThrow(
      /MCP server "gone": could not connect/,
    );
    expect(fake.requests).toHaveLength(0);
  });
});
