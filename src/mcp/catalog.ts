import * as z from "zod";
import type { Tool, Tools } from "../agent/tool";
import type { JsonObject, JsonValue } from "../protocol/json";
import { setBounded } from "../storage/bounded-map";
import { expandServer, type McpServer } from "./config";
import { McpConnection, type McpResourceInfo, type McpToolInfo } from "./connection";

/** What one server offers. */
export interface McpListing {
  tools: McpToolInfo[];
  resources: McpResourceInfo[];
}

interface Cached {
  expires: number;
  listing: McpListing;
}

/**
 * Listings by server (name, expanded URL and headers), per isolate. An entry lives
 * `cacheTtlMs` (default 5 min); failures are not cached, so a server that was down is asked
 * again on the next turn. Bounded: the oldest entry goes first.
 */
const listings = new Map<string, Cached>();
const MAX_CACHED_SERVERS = 64;

function cacheKey(server: McpServer, env: object): string {
  const { url, headers } = expandServer(server, env);
  return JSON.stringify([server.name, server.transport, url.href, headers]);
}

/**
 * Forgets every cached listing (tests, or after changing a server), so the next turn
 * lists each server's tools again.
 * @example
 * ```ts
 * afterEach(() => clearMcpCache());
 * ```
 */
export function clearMcpCache(): void {
  listings.clear();
}

/**
 * One turn's view of the agent's MCP servers: each server's listing (from the cache when
 * fresh), and a connection opened on the first call and reused for the rest of the turn.
 * `close()` ends the sessions it opened.
 */
export class McpSession {
  private readonly connections = new Map<string, Promise<McpConnection>>();

  constructor(
    private readonly env: object,
    private readonly options: { signal?: AbortSignal; fetch?: typeof fetch } = {},
  ) {}

  /** The server's tools and resources; the cached listing while it is fresh. */
  async listing(server: McpServer): Promise<McpListing> {
    const key = cacheKey(server, this.env);
    const hit = server.cacheTtlMs > 0 ? listings.get(key) : undefined;
    if (hit && hit.expires > Date.now()) return hit.listing;
    const connection = await this.connection(server);
    const [tools, resources] = await Promise.all([
      connection.listTools(this.options.signal),
      connection.listResources(this.options.signal),
    ]);
    const listing = { tools, resources };
    listings.delete(key);
    if (server.cacheTtlMs > 0) {
      setBounded(
        listings,
        key,
        { expires: Date.now() + server.cacheTtlMs, listing },
        MAX_CACHED_SERVERS,
      );
    }
    return listing;
  }

  connection(server: McpServer): Promise<McpConnection> {
    let open = this.connections.get(server.name);
    if (!open) {
      open = McpConnection.open(server, this.env, this.options);
      // A failed attempt is not kept: the next call tries again.
      open.catch(() => this.connections.delete(server.name));
      this.connections.set(server.name, open);
    }
    return open;
  }

  async close(): Promise<void> {
    const open = [...this.connections.values()];
    this.connections.clear();
    await Promise.all(open.map((p) => p.then((c) => c.close()).catch(() => {})));
  }

  /**
   * The servers' tools as agent tools, named so none clashes with `taken` (the agent's own
   * tools) or another server's: a tool keeps its name when it is free, else becomes
   * `<server>_<name>`. Each call goes through this session with the runner's signal (the
   * turn's, aborted on cancel or timeout) and `timeoutMs`.
   */
  async tools(
    servers: readonly McpServer[],
    taken: ReadonlySet<string>,
    timeoutMs: number,
  ): Promise<Tools> {
    const listed = await Promise.all(servers.map((s) => this.listing(s)));
    const names = new Set(taken);
    const out: Tools = {};
    servers.forEach((server, index) => {
      for (const info of listed[index]?.tools ?? []) {
        const name = freeName(info, names);
        names.add(name);
        out[name] = this.tool(server, info, timeoutMs);
      }
    });
    return out;
  }

  private tool(server: McpServer, info: McpToolInfo, timeoutMs: number): Tool {
    const tool: Tool = {
      description: info.description || `${info.name} (MCP server ${server.name})`,
      // The server validates its own arguments; the model is shown the server's schema.
      input: McpArguments,
      jsonSchema: info.inputSchema,
      run: async (args, { signal, traceContext }) => {
        const connection = await this.connection(server);
        return connection.callTool(info.name, args as JsonObject, {
          signal,
          timeoutMs,
          traceContext,
        });
      },
    };
    return tool;
  }
}

const McpArguments = z.record(z.string(), z.custom<JsonValue>());

/** Providers accept tool names of 1-64 letters, digits, '_' and '-'. */
function freeName(info: McpToolInfo, taken: ReadonlySet<string>): string {
  const clean = (s: string) => s.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 64) || "tool";
  const own = clean(info.name);
  if (!taken.has(own)) return own;
  const prefixed = clean(`${info.server}_${info.name}`);
  if (!taken.has(prefixed)) return prefixed;
  for (let n = 2; ; n++) {
    const numbered = `${prefixed.slice(0, 60)}_${n}`;
    if (!taken.has(numbered)) return numbered;
  }
}
