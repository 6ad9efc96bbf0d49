/**
 * A real MCP server for the tests, built with the official SDK and served over streamable
 * HTTP (and the older SSE transport) on loopback, from Node. The workerd tests reach it
 * through `MCP_URL`. It requires `Authorization: Bearer <token>` (to prove `${VAR}`
 * expansion) and counts what it is asked (`GET /stats`, `POST /stats/reset`).
 */
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { SSEServerTransport } from "@modelcontextprotocol/sdk/server/sse.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { z } from "zod";

export const MCP_TOKEN = "mcp-test-token";

interface Stats {
  /** JSON-RPC methods received, in order. */
  methods: string[];
  /** Tool calls: name and arguments. */
  calls: { name: string; args: unknown }[];
  /** Calls of `slow` that were canceled by the client. */
  canceled: number;
  unauthorized: number;
  /** The `traceparent` header of each request that carried a tool call. */
  traceparents: (string | null)[];
}

function newStats(): Stats {
  return { methods: [], calls: [], canceled: 0, unauthorized: 0, traceparents: [] };
}

function mcpServer(stats: Stats): McpServer {
  const server = new McpServer({ name: "edgelink-test-docs", version: "1.0.0" });
  server.registerTool(
    "get_capital",
    {
      description: "The capital city of a country",
      inputSchema: { country: z.string().describe("The country") },
    },
    async ({ country }) => {
      stats.calls.push({ name: "get_capital", args: { country } });
      const capital = country === "UK" || country === "United Kingdom" ? "London" : "Paris";
      return { content: [{ type: "text", text: capital }] };
    },
  );
  server.registerTool(
    "add",
    {
      description: "Adds two numbers (the MCP server's own add)",
      inputSchema: { a: z.number(), b: z.number() },
    },
    async ({ a, b }) => {
      stats.calls.push({ name: "add", args: { a, b } });
      return { content: [{ type: "text", text: String(a + b) }] };
    },
  );
  server.registerTool(
    "slow",
    { description: "Answers after ms milliseconds", inputSchema: { ms: z.number() } },
    async ({ ms }, extra) => {
      stats.calls.push({ name: "slow", args: { ms } });
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, ms);
        extra.signal.addEventListener("abort", () => {
          stats.canceled++;
          clearTimeout(timer);
          resolve();
        });
      });
      return { content: [{ type: "text", text: `waited ${ms} ms` }] };
    },
  );
  server.registerTool("broken", { description: "Always fails", inputSchema: {} }, async () => ({
    isError: true,
    content: [{ type: "text", text: "the index is offline" }],
  }));
  server.registerResource(
    "readme",
    "docs://readme",
    { description: "How the docs are organised", mimeType: "text/markdown" },
    async (uri) => ({ contents: [{ uri: uri.href, text: "# Docs" }] }),
  );
  return server;
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString("utf8");
  return text ? JSON.parse(text) : undefined;
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
}

/** Starts the server on a free loopback port; returns its base URL and a stop function. */
export async function startMcpServer(): Promise<{ url: string; close: () => Promise<void> }> {
  let stats = newStats();
  const sse = new Map<string, SSEServerTransport>();
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const server: Server = createServer(async (req, res) => {
    try {
      const url = new URL(req.url ?? "/", "http://localhost");
      if (url.pathname === "/stats") {
        if (req.method === "POST") stats = newStats();
        return json(res, 200, stats);
      }
      if (req.headers.authorization !== `Bearer ${MCP_TOKEN}`) {
        stats.unauthorized++;
        return json(res, 401, { error: "unauthorized" });
      }
      if (url.pathname === "/mcp") {
        const body = req.method === "POST" ? await readBody(req) : undefined;
        for (const m of [body].flat()) {
          const method = (m as { method?: string } | undefined)?.method;
          if (method) stats.methods.push(method);
          if (method === "tools/call") {
            const parent = req.headers.traceparent;
            stats.traceparents.push(typeof parent === "string" ? parent : null);
          }
        }
        // One server and transport per MCP session, found by the Mcp-Session-Id header.
        const id = req.headers["mcp-session-id"];
        let transport = typeof id === "string" ? sessions.get(id) : undefined;
        if (!transport) {
          if (typeof id === "string") return json(res, 404, { error: "no such session" });
          const created = new StreamableHTTPServerTransport({
            sessionIdGenerator: () => randomUUID(),
            onsessioninitialized: (sid) => void sessions.set(sid, created),
            onsessionclosed: (sid) => void sessions.delete(sid),
          });
          transport = created;
          await mcpServer(stats).connect(created);
        }
        await transport.handleRequest(req, res, body);
        return;
      }
      if (url.pathname === "/sse" && req.method === "GET") {
        const transport = new SSEServerTransport("/messages", res);
        sse.set(transport.sessionId, transport);
        res.on("close", () => sse.delete(transport.sessionId));
        await mcpServer(stats).connect(transport);
        return;
      }
      if (url.pathname === "/messages" && req.method === "POST") {
        const transport = sse.get(url.searchParams.get("sessionId") ?? "");
        if (!transport) return json(res, 404, { error: "no such session" });
        const body = await readBody(req);
        const method = (body as { method?: string }).method;
        if (method) stats.methods.push(method);
        await transport.handlePostMessage(req, res, body);
        return;
      }
      json(res, 404, { error: "not found" });
    } catch (error) {
      if (!res.headersSent) json(res, 500, { error: String(error) });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A loopback URL where nothing listens (a server that is down). */
export async function deadUrl(): Promise<string> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}
