import type { FunctionCallItem, Item } from "../../history/items";
import type { ToolCall } from "../../providers/base/types";
import type { Agent } from "../definition";
import type { ChildRelay } from "../delegation";
import type { TurnTools } from "../mcp-source";
import type { RunContext } from "../run-context";
import type { Tools } from "../tool";
import { agentTools } from "./agent-tools";
import { runToolCalls, type ToolRunOptions } from "./tool-runner";

export type { TurnTools } from "../mcp-source";

/**
 * The tools that exist only at run time: the agent's MCP servers' tools, listed (or taken
 * from the cache) at the start of the turn, and its `agents` as tools. Null when the agent
 * has neither, so a plain agent pays nothing. A server that cannot be listed fails the
 * turn with an error naming it.
 */
export async function openTurnTools<Env>(
  agent: Agent<Env>,
  ctx: RunContext<Env>,
  /** Where agents that ask for input have their requests relayed to the caller. */
  relay?: ChildRelay,
): Promise<TurnTools | null> {
  const hasAgents = Object.keys(agent.agents).length > 0;
  if (!agent.mcp && !hasAgents) return null;
  const delegates = agentTools(agent.agents, ctx, relay);
  if (!agent.mcp) return { tools: delegates, close: async () => {} };
  const taken = new Set([...Object.keys(agent.tools), ...Object.keys(delegates)]);
  const mcp = await agent.mcp.open(ctx.env as object, {
    signal: ctx.signal,
    taken,
    timeoutMs: agent.toolTimeoutMs,
  });
  const allowed = Object.entries(mcp.tools).filter(([name]) => agent.toolAllowed(name));
  return { tools: { ...delegates, ...Object.fromEntries(allowed) }, close: () => mcp.close() };
}

/**
 * After a restart, a turn may have stopped while its agents-as-tools calls were running.
 * Those calls (made after the last user message, so in this task, and still without a
 * result) run again: each re-attaches to its child by call id instead of asking again.
 * Their results are recorded, and the turn goes on as if nothing happened. `items` is
 * the turn's window (it always holds the last user message and the calls after it);
 * true when results were recorded, so the window is read again.
 */
export async function resumeAgentCalls<Env>(
  ctx: RunContext<Env>,
  agent: Agent<Env>,
  tools: Tools,
  options: ToolRunOptions,
  items: readonly Item[],
): Promise<boolean> {
  if (Object.keys(agent.agents).length === 0) return false;
  let lastUser = -1;
  items.forEach((item, index) => {
    if (item.type === "message" && item.role === "user") lastUser = index;
  });
  const tail = items.slice(lastUser + 1);
  const answered = new Set(
    tail.flatMap((i) => (i.type === "function_call_output" ? [i.callId] : [])),
  );
  const pending = tail.filter(
    (i): i is FunctionCallItem =>
      i.type === "function_call" && !answered.has(i.callId) && Object.hasOwn(agent.agents, i.name),
  );
  if (pending.length === 0) return false;
  const calls: ToolCall[] = pending.map((item) => ({
    id: item.callId,
    name: item.name,
    arguments: item.arguments,
    input: parseArguments(item.arguments),
  }));
  const results = await runToolCalls(calls, tools, options);
  ctx.record(
    results.map((result) => ({
      type: "function_call_output",
      name: result.name,
      callId: result.toolCallId,
      output: result.content,
      isError: result.isError,
    })),
  );
  return true;
}

function parseArguments(text: string): ToolCall["input"] {
  try {
    const value = JSON.parse(text) as unknown;
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? (value as ToolCall["input"])
      : null;
  } catch {
    return null;
  }
}
