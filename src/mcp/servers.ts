import type { McpOpenOptions, McpToolSource } from "../agent/mcp-source";
import type { TurnTools } from "../agent/tools/turn-tools";
import { type McpListing, McpSession } from "./catalog";
import { checkMcpServers, type McpServer, type McpServers } from "./config";

/**
 * An agent's MCP servers, checked; give it to `defineAgent` as `mcp`. Made by `mcpServers`.
 */
export class McpServerSet implements McpToolSource {
  /** @internal Use `mcpServers`, which checks the configuration. */
  constructor(readonly servers: readonly McpServer[]) {}

  async open(env: object, options: McpOpenOptions): Promise<TurnTools> {
    const session = new McpSession(env, { signal: options.signal });
    try {
      const tools = await session.tools(this.servers, options.taken, options.timeoutMs);
      return { tools, close: () => session.close() };
    } catch (error) {
      await session.close();
      throw error;
    }
  }
}

/**
 * The MCP servers whose tools an agent's model may call beside its own, by name
 * (the name shows in errors and in prefixed tool names). The configuration is checked
 * here, when the Worker loads: a bad entry, or a stdio server (Workers cannot start
 * processes), throws an error naming the server. MCP lives in `edgelink/mcp` so that a
 * Worker without MCP servers does not bundle the MCP SDK.
 *
 * @example
 * ```ts
 * import { defineAgent } from "edgelink";
 * import { openai } from "edgelink/providers";
 * import { mcpServers } from "edgelink/mcp";
 *
 * export default defineAgent<Env>({
 *   card: { name: "Docs assistant", description: "Answers from our docs" },
 *   model: openai({ model: "gpt-4o-mini" }),
 *   mcp: mcpServers({
 *     docs: {
 *       url: "https://mcp.example.com/mcp",
 *       headers: { Authorization: "Bearer ${DOCS_MCP_TOKEN}" }, // a secret
 *     },
 *   }),
 * });
 * ```
 */
export function mcpServers(config: McpServers): McpServerSet {
  return new McpServerSet(checkMcpServers(config));
}

/**
 * Every tool and resource of the given servers, read through the same per-server
 * cache a model turn uses. A server that cannot be reached throws an `McpError` naming it.
 *
 * @example
 * ```ts
 * const mcp = mcpServers({ docs: { url: "${DOCS_MCP_URL}" } });
 * const { tools, resources } = await listMcp(mcp, env);
 * ```
 */
export async function listMcp(
  mcp: McpServerSet,
  env: object,
  options: { signal?: AbortSignal; fetch?: typeof fetch } = {},
): Promise<McpListing> {
  const session = new McpSession(env, options);
  try {
    const listed = await Promise.all(mcp.servers.map((s) => session.listing(s)));
    return {
      tools: listed.flatMap((l) => l.tools),
      resources: listed.flatMap((l) => l.resources),
    };
  } finally {
    await session.close();
  }
}
