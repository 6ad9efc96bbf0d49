import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/cfworker";
import type { Context } from "@opentelemetry/api";
import type { JsonObject } from "../protocol/json";
import {
  endSpan,
  GEN_AI_OPERATION_NAME,
  GEN_AI_TOOL_NAME,
  MCP_METHOD_NAME,
  OP_EXECUTE_TOOL,
  SERVER_ADDRESS,
  SpanKind,
  startSpan,
  traceHeaders,
} from "../telemetry";
import { expandServer, McpError, type McpServer } from "./config";

/** A tool an MCP server offers. */
export interface McpToolInfo {
  server: string;
  name: string;
  description: string;
  /** The tool's input as JSON Schema, as the server sent it. */
  inputSchema: JsonObject;
}

/** A resource an MCP server offers. */
export interface McpResourceInfo {
  server: string;
  uri: string;
  name: string;
  description: string;
  mimeType: string | null;
}

/** Most list pages read from one server, and most tools and resources kept from it. */
export const MCP_MAX_PAGES = 10;
export const MCP_MAX_TOOLS = 128;
export const MCP_MAX_RESOURCES = 256;
/** A connection attempt (initialize) still unanswered after this long fails. */
const CONNECT_TIMEOUT_MS = 15_000;

/**
 * One session with an MCP server through the official SDK's client: streamable HTTP or
 * SSE over the Worker's `fetch` (no Node APIs), schemas validated with
 * `@cfworker/json-schema` (Workers forbid the code generation Ajv relies on). Only Workers
 * importing `edgelink/mcp` bundle the SDK. Its imports are static on purpose: a dynamic
 * import makes esbuild (wrangler) wrap every module it reaches, zod included, in lazy
 * initializers, and then the framework's `import * as z from "zod"` reads zod before it is
 * initialized (the Worker fails at start-up: "… is not a constructor").
 */
export class McpConnection {
  private constructor(
    readonly server: string,
    private readonly client: Client,
    private readonly calls: { trace?: Context } = {},
  ) {}

  /** Connects and initializes; failures name the server. */
  static async open(
    server: McpServer,
    env: object,
    options: { signal?: AbortSignal; fetch?: typeof fetch } = {},
  ): Promise<McpConnection> {
    const { url, headers } = expandServer(server, env);
    const client = new Client(
      { name: "edgelink", version: "0.1.0" },
      { jsonSchemaValidator: new CfWorkerJsonSchemaValidator() },
    );
    const requestInit: RequestInit = { headers };
    // Bound so that a test or a proxy can supply its own; Workers' fetch needs no `this`.
    const plain = options.fetch ?? ((input, init) => fetch(input, init));
    // While a traced call is in flight its requests carry its span (`traceparent`).
    const calls: { trace?: Context } = {};
    const fetcher: typeof fetch = (input, init) =>
      calls.trace
        ? plain(input, withHeaders(init, traceHeaders(calls.trace) ?? {}))
        : plain(input, init);
    const transport =
      server.transport === "sse"
        ? new SSEClientTransport(url, {
            requestInit,
            fetch: fetcher,
            eventSourceInit: { fetch: (input, init) => fetcher(input, withHeaders(init, headers)) },
          })
        : new StreamableHTTPClientTransport(url, {
            requestInit,
            fetch: fetcher,
            // A tool call is one request; a dropped stream is reported, not retried forever.
            reconnectionOptions: {
              maxRetries: 0,
              initialReconnectionDelay: 1000,
              maxReconnectionDelay: 1000,
              reconnectionDelayGrowFactor: 1,
            },
          });
    try {
      await client.connect(transport, { signal: options.signal, timeout: CONNECT_TIMEOUT_MS });
    } catch (error) {
      await client.close().catch(() => {});
      throw new McpError(server.name, `could not connect to ${url.origin}: ${reason(error)}`, {
        cause: error,
      });
    }
    return new McpConnection(server.name, client, calls);
  }

  /** Every tool of the server (paged, bounded by MCP_MAX_TOOLS). */
  async listTools(signal?: AbortSignal): Promise<McpToolInfo[]> {
    if (!this.client.getServerCapabilities()?.tools) return [];
    const tools: McpToolInfo[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MCP_MAX_PAGES && tools.length < MCP_MAX_TOOLS; page++) {
      const result = await this.guard("listing tools", () =>
        this.client.listTools(cursor ? { cursor } : undefined, { signal }),
      );
      for (const tool of result.tools) {
        if (tools.length >= MCP_MAX_TOOLS) break;
        tools.push({
          server: this.server,
          name: tool.name,
          description: tool.description ?? "",
          inputSchema: tool.inputSchema as JsonObject,
        });
      }
      cursor = result.nextCursor;
      if (!cursor) break;
    }
    return tools;
  }

  /** Every resource of the server (paged, bounded by MCP_MAX_RESOURCES). */
  async listResources(signal?: AbortSignal): Promise<McpResourceInfo[]> {
    if (!this.client.getServerCapabilities()?.resources) return [];
    const resources: McpResourceInfo[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MCP_MAX_PAGES && resources.length < MCP_MAX_RESOURCES; page++) {
      const result = await this.guard("listing resources", () =>
        this.client.listResources(cursor ? { cursor } : undefined, { signal }),
      );
      for (const resource of result.resources) {
        if (resources.length >= MCP_MAX_RESOURCES) break;
        resources.push({
          server: this.server,
          uri: resource.uri,
          name: resource.name,
          description: resource.description ?? "",
          mimeType: resource.mimeType ?? null,
        });
      }
      cursor = result.nextCursor;
      if (!cursor) break;
    }
    return resources;
  }

  /**
   * Calls a tool; its text content is the result. A result the server marks as an error is
   * thrown (the tool runner turns it into an error result the model sees).
   */
  async callTool(
    name: string,
    args: JsonObject,
    options: { signal: AbortSignal; timeoutMs: number; traceContext?: Context },
  ): Promise<string> {
    const traced = options.traceContext
      ? startSpan(`tools/call ${name}`, SpanKind.CLIENT, options.traceContext, {
          [MCP_METHOD_NAME]: "tools/call",
          [GEN_AI_TOOL_NAME]: name,
          [GEN_AI_OPERATION_NAME]: OP_EXECUTE_TOOL,
          [SERVER_ADDRESS]: this.server,
        })
      : undefined;
    if (traced) this.calls.trace = traced.ctx;
    try {
      const result = await this.guard(`calling tool ${name}`, () =>
        this.client.callTool({ name, arguments: args }, undefined, {
          signal: options.signal,
          timeout: options.timeoutMs,
        }),
      );
      const text = contentText(result as CallResult);
      if (result.isError) throw new McpError(this.server, `tool ${name} failed: ${text}`);
      endSpan(traced);
      return text;
    } catch (error) {
      endSpan(traced, error);
      throw error;
    } finally {
      if (traced && this.calls.trace === traced.ctx) this.calls.trace = undefined;
    }
  }

  /** Ends the session (best effort: a server that is gone needs no goodbye). */
  async close(): Promise<void> {
    await this.client.close().catch(() => {});
  }

  private async guard<T>(what: string, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      if (error instanceof McpError) throw error;
      throw new McpError(this.server, `${what}: ${reason(error)}`, { cause: error });
    }
  }
}

interface CallResult {
  content?: { type: string; text?: string; mimeType?: string; resource?: { uri?: string } }[];
  structuredContent?: unknown;
}

/** A call result as text: text parts joined; other parts described; else the structured value. */
function contentText(result: CallResult): string {
  const parts = (result.content ?? []).map((part) => {
    if (part.type === "text") return part.text ?? "";
    if (part.type === "resource") return `[resource ${part.resource?.uri ?? ""}]`;
    return `[${part.type}${part.mimeType ? ` ${part.mimeType}` : ""}]`;
  });
  if (parts.length === 0 && result.structuredContent !== undefined) {
    return JSON.stringify(result.structuredContent);
  }
  return parts.join("\n");
}

function withHeaders(init: RequestInit | undefined, headers: Record<string, string>): RequestInit {
  const merged = new Headers(init?.headers);
  for (const [key, value] of Object.entries(headers)) merged.set(key, value);
  return { ...init, headers: merged };
}

function reason(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
