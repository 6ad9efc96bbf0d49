import { UserFacingError } from "../protocol/errors";

/** MCP servers an agent takes tools from. */

/** How to reach one MCP server. */
export interface McpServerConfig {
  /**
   * The server's endpoint, `http(s)://`. `${VAR}` is replaced by the Worker's variable or
   * secret of that name, so one definition serves every environment.
   */
  url: string;
  /** Request headers; values expand `${VAR}` from the Worker's env and secrets. */
  headers?: Record<string, string>;
  /** `"streamable-http"` (default) or the older `"sse"`. `"stdio"` cannot run on Workers. */
  transport?: McpTransport;
  /** How long the server's tool and resource lists are reused, in ms. Default 5 min. */
  cacheTtlMs?: number;
}

export type McpTransport = "streamable-http" | "sse";

/** What `mcpServers` takes: servers by name (the name shows in errors and tool names). */
export type McpServers = Record<string, McpServerConfig>;

/** A checked server definition, placeholders still unexpanded. */
export interface McpServer {
  name: string;
  url: string;
  headers: Record<string, string>;
  transport: McpTransport;
  cacheTtlMs: number;
}

/** Default lifetime of a server's cached tool and resource lists: 5 minutes. */
export const MCP_CACHE_TTL_MS = 5 * 60_000;

/**
 * An MCP failure; the message always names the server. Meant for users (a task that fails
 * on it shows the message), so it never carries header values or the URL's path.
 */
export class McpError extends UserFacingError {
  constructor(
    readonly server: string,
    message: string,
    options?: ErrorOptions,
  ) {
    super(`MCP server "${server}": ${message}`, options);
  }
}

const NAME = /^[A-Za-z0-9_-]{1,48}$/;
const PLACEHOLDER = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/**
 * Checks the configuration given to `mcpServers`: a bad entry is an error naming the
 * server, raised when the Worker loads rather than at the first task.
 */
export function checkMcpServers(servers: McpServers | undefined): McpServer[] {
  if (servers === undefined) return [];
  if (typeof servers !== "object" || servers === null || Array.isArray(servers)) {
    throw new TypeError(
      "mcpServers takes an object mapping server names to { url, headers, transport }",
    );
  }
  return Object.entries(servers).map(([name, raw]) => {
    const fail = (why: string): never => {
      throw new TypeError(`mcp.${name}: ${why}`);
    };
    if (!NAME.test(name)) fail("a server name is 1-48 letters, digits, '_' or '-'");
    if (typeof raw !== "object" || raw === null) fail("expected { url, headers?, transport? }");
    const config = raw as McpServerConfig & { command?: unknown };
    const transport = config.transport ?? "streamable-http";
    if ((transport as string) === "stdio" || config.command !== undefined) {
      fail(
        'stdio MCP servers cannot run on Cloudflare Workers (a Worker cannot start processes); serve the server over "streamable-http" or "sse" and give its url',
      );
    }
    if (transport !== "streamable-http" && transport !== "sse") {
      fail(`transport must be "streamable-http" or "sse", not ${JSON.stringify(transport)}`);
    }
    if (typeof config.url !== "string" || config.url === "") fail("url is required");
    // With placeholders the URL is checked once they are expanded, at the first use.
    if (!config.url.includes("${")) checkUrl(name, config.url, TypeError);
    const headers = config.headers ?? {};
    for (const [key, value] of Object.entries(headers)) {
      if (typeof value !== "string") fail(`headers.${key} must be a string`);
    }
    const ttl = config.cacheTtlMs ?? MCP_CACHE_TTL_MS;
    if (!Number.isFinite(ttl) || ttl < 0) fail("cacheTtlMs must be a number ≥ 0");
    return { name, url: config.url, headers: { ...headers }, transport, cacheTtlMs: ttl };
  });
}

function checkUrl(server: string, url: string, Kind: new (message: string) => Error): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Kind(`mcp.${server}: url is not a valid URL: ${url}`);
  }
  if (parsed.protocol !== "https:" && parsed.protocol !== "http:") {
    throw new Kind(`mcp.${server}: url must be http(s), not ${parsed.protocol}`);
  }
  return parsed;
}

/** Replaces each `${VAR}` with the env's string value; a missing one is an error naming it. */
function expand(server: string, field: string, value: string, env: object): string {
  return value.replace(PLACEHOLDER, (_, variable: string) => {
    const found = (env as Record<string, unknown>)[variable];
    if (typeof found !== "string") {
      throw new McpError(
        server,
        `${field} uses \${${variable}}, but the Worker has no variable or secret ${variable}`,
      );
    }
    return found;
  });
}

/** The server's URL and headers with `${VAR}` expanded from the Worker's env. */
export function expandServer(
  server: McpServer,
  env: object,
): { url: URL; headers: Record<string, string> } {
  const url = expand(server.name, "url", server.url, env);
  const headers: Record<string, string> = {};
  for (const [key, value] of Object.entries(server.headers)) {
    headers[key] = expand(server.name, `headers.${key}`, value, env);
  }
  let parsed: URL;
  try {
    parsed = checkUrl(server.name, url, Error);
  } catch (error) {
    throw new McpError(server.name, (error as Error).message.replace(/^mcp\.[^:]+: /, ""));
  }
  return { url: parsed, headers };
}
