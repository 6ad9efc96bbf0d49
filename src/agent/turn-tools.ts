import type { TaskContext } from "./context";
import type { Agent } from "./definition";
import { McpSession } from "./mcp/catalog";
import type { Tools } from "./tools";

/** Tools a model turn gets beyond the agent's own, and what to release when the turn ends. */
export interface TurnTools {
  tools: Tools;
  close(): Promise<void>;
}

/**
 * The tools that exist only at run time: the agent's MCP servers' tools, listed (or taken
 * from the cache) at the start of the turn. Null when the agent has none, so a plain agent
 * pays nothing. A server that cannot be listed fails the turn with an error naming it.
 */
export async function openTurnTools<Env>(
  agent: Agent<Env>,
  ctx: TaskContext<Env>,
): Promise<TurnTools | null> {
  if (agent.mcp.length === 0) return null;
  const session = new McpSession(ctx.env as object, { signal: ctx.signal });
  try {
    const tools = await session.tools(
      agent.mcp,
      new Set(Object.keys(agent.tools)),
      agent.toolTimeoutMs,
    );
    return { tools, close: () => session.close() };
  } catch (error) {
    await session.close();
    throw error;
  }
}
