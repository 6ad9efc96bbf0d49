import type { Tools } from "./tool";

/**
 * Where an agent's MCP tools come from, as the core sees it. The MCP client lives in
 * `edgelink/mcp` (`mcpServers({...})` returns one of these), so a Worker that configures
 * no MCP server never bundles the MCP SDK: the core only ever imports this type.
 */
export interface McpToolSource {
  /**
   * Opens one turn's view of the servers: their tools as agent tools, named so none
   * clashes with `taken`, each call bounded by `timeoutMs` and aborted with `signal`.
   * `close()` ends the sessions it opened. A server that cannot be listed rejects, naming it.
   */
  open(env: object, options: McpOpenOptions): Promise<TurnTools>;
}

export interface McpOpenOptions {
  signal: AbortSignal;
  /** Tool names already in use (the agent's own and its agents-as-tools). */
  taken: ReadonlySet<string>;
  timeoutMs: number;
}

/** Checks the `mcp` option of `defineAgent` when the Worker loads: it comes from `mcpServers`. */
export function checkMcpSource(mcp: McpToolSource | undefined): McpToolSource | null {
  if (mcp === undefined) return null;
  if (typeof mcp !== "object" || mcp === null || typeof mcp.open !== "function") {
    throw new TypeError(
      'mcp must be mcpServers({ name: { url, headers, transport } }) from "edgelink/mcp"',
    );
  }
  return mcp;
}

/** Tools a model turn gets beyond the agent's own, and what to release when the turn ends. */
export interface TurnTools {
  tools: Tools;
  close(): Promise<void>;
}
