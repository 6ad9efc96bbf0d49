/**
 * `edgelink/mcp`: tools from MCP servers for an agent's model. Opt-in: only a
 * Worker that imports this entry bundles the MCP SDK.
 *
 * @example
 * ```ts
 * import { mcpServers } from "edgelink/mcp";
 * defineAgent({ card, model, mcp: mcpServers({ docs: { url: "${DOCS_MCP_URL}" } }) });
 * ```
 * @packageDocumentation
 */

export { clearMcpCache, type McpListing } from "./catalog";
export {
  MCP_CACHE_TTL_MS,
  McpError,
  type McpServer,
  type McpServerConfig,
  type McpServers,
  type McpTransport,
} from "./config";
export type { McpResourceInfo, McpToolInfo } from "./connection";
export { listMcp, type McpServerSet, mcpServers } from "./servers";
