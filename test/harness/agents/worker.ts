/**
 * The agents the `agents` test project serves: a model-backed agent with MCP servers (its
 * provider is the fake one, replaying recorded streams). Tests choose its model through
 * `harness`: the Durable Objects run in the tests' isolate, so they share module state.
 */
import { z } from "zod";
import { type AgentHandler, defineAgent, tool } from "../../../src/index";
import { mcpServers } from "../../../src/mcp/index";
import { textOf } from "../../../src/protocol/part";
import { capabilitiesFor } from "../../../src/providers/base/pricing";
import type {
  CallOptions,
  Model,
  ModelRequest,
  StreamEvent,
} from "../../../src/providers/base/types";

export interface Env {
  MCP_URL: string;
  MCP_DOWN_URL: string;
  MCP_TOKEN: string;
  /** The demo agent, a second Worker (see vitest.config.ts). */
  DEMO: Fetcher;
  PARENT_CONTEXT: DurableObjectNamespace;
  MCP_CONTEXT: DurableObjectNamespace;
  ORCH_CONTEXT: DurableObjectNamespace;
  /** This Worker again, through a service binding: the relay agent's child (`child.*`). */
  CHILD: Fetcher;
  RELAY_CONTEXT: DurableObjectNamespace;
  CHILD_CONTEXT: DurableObjectNamespace;
}

export const harness: {
  model: Model | null;
  fetch: typeof fetch | null;
  requests: ModelRequest[];
  /** What the parent agent does with a message (set by each delegation test). */
  parent: AgentHandler<Env> | null;
  /** How many times the parent's handler started (a restart runs it again). */
  parentRuns: number;
  /** The refunds the child agent made, as their arguments' JSON. */
  refunds: string[];
  /** What the child agent asks: an approval (default) or a question in words. */
  childAsks: "approval" | "question";
} = {
  model: null,
  fetch: null,
  requests: [],
  parent: null,
  parentRuns: 0,
  refunds: [],
  childAsks: "approval",
};

const switchable: Model = {
  provider: "test",
  model: "switchable",
  get capabilities() {
    return harness.model?.capabilities ?? capabilitiesFor("switchable");
  },
  streamBatches(request: ModelRequest, options: CallOptions = {}): AsyncIterable<StreamEvent[]> {
    if (!harness.model) throw new Error("no model set for this test");
    harness.requests.push(structuredClone(request));
    return harness.model.streamBatches(request, {
      ...options,
      ...(harness.fetch ? { fetch: harness.fetch } : {}),
    });
  },
};

/** A model-backed agent whose tools come partly from the test MCP server. */
export const mcpAgent = defineAgent<Env>({
  card: { name: "MCP agent", description: "Answers with tools from an MCP server" },
  model: switchable,
  instructions: "Use the tools.",
  tools: {
    add: tool({
      description: "Adds two numbers (the agent's own add)",
      input: z.object({ a: z.number(), b: z.number() }),
      run: ({ a, b }) => a + b,
    }),
  },
  mcp: mcpServers({
    docs: {
      url: "${MCP_URL}/mcp",
      headers: { Authorization: "Bearer ${MCP_TOKEN}" },
    },
  }),
  toolTimeoutMs: 2_000,
  bindings: { context: "MCP_CONTEXT", index: "MCP_INDEX" },
});

export const { EdgelinkContext: McpContext, EdgelinkIndex: McpIndex } = mcpAgent;

/** A handler-based agent that delegates to the demo agent; tests choose what it does. */
export const parentAgent = defineAgent<Env>({
  card: { name: "Parent", description: "Delegates to the demo agent" },
  handler: (ctx) => {
    harness.parentRuns++;
    if (!harness.parent) throw new Error("no parent handler set for this test");
    return harness.parent(ctx);
  },
  bindings: { context: "PARENT_CONTEXT", index: "PARENT_INDEX" },
  // Its delegations' steps are recorded, and read through the inspector's steps route.
  inspector: true,
});

export const { EdgelinkContext: ParentContext, EdgelinkIndex: ParentIndex } = parentAgent;

/** A model-backed agent given the demo agent as a tool (`agents`). */
export const orchestratorAgent = defineAgent<Env>({
  card: { name: "Orchestrator", description: "Answers with the help of other agents" },
  model: switchable,
  instructions: "Ask the other agents.",
  agents: {
    // Named like the tool of the recorded stream the fake provider replays.
    get_capital: { binding: "DEMO", description: "Knows capitals (the demo agent)" },
  },
  bindings: { context: "ORCH_CONTEXT", index: "ORCH_INDEX" },
});

export const { EdgelinkContext: OrchContext, EdgelinkIndex: OrchIndex } = orchestratorAgent;

/** A handler-based agent that refunds only once a person approves (or answers). */
export const childAgent = defineAgent<Env>({
  card: { name: "Refunds", description: "Refunds orders once approved" },
  handler: (ctx) => {
    if (harness.childAsks === "question") {
      const said = textOf(ctx.message.parts);
      if (said.startsWith("A-")) return `Order ${said} noted`;
      ctx.requestInput("Which order?");
      return;
    }
    const d = ctx.approval({
      id: "refund",
      action: "refund",
      arguments: { order: "A-17", amount: 150 },
      reason: "Refunds over 100 need approval",
    });
    if (!d) return;
    if (d.decision !== "approve") return `Not refunded (${d.reason ?? d.decision})`;
    harness.refunds.push(JSON.stringify(d.arguments));
    return `Refunded ${d.arguments.amount} on order ${d.arguments.order}`;
  },
  bindings: { context: "CHILD_CONTEXT", index: "CHILD_INDEX" },
});

export const { EdgelinkContext: ChildContext, EdgelinkIndex: ChildIndex } = childAgent;

/** A model-backed agent given the refunds agent (this Worker, `env.CHILD`) as a tool. */
export const relayAgent = defineAgent<Env>({
  card: { name: "Front desk", description: "Refunds through the refunds agent" },
  model: switchable,
  instructions: "Ask the refunds agent.",
  agents: {
    // Named like the tool of the recorded stream the fake provider replays.
    get_capital: { binding: "CHILD", description: "The refunds agent" },
  },
  bindings: { context: "RELAY_CONTEXT", index: "RELAY_INDEX" },
});

export const { EdgelinkContext: RelayContext, EdgelinkIndex: RelayIndex } = relayAgent;

/** Routes by the first label of the host name: `mcp.test` → the MCP agent, ... */
const byHost: Record<string, { fetch: typeof mcpAgent.fetch }> = {
  mcp: mcpAgent,
  parent: parentAgent,
  orch: orchestratorAgent,
  child: childAgent,
  relay: relayAgent,
};

export default {
  fetch(request: Request, env: Env, ctx: ExecutionContext) {
    const label = new URL(request.url).hostname.split(".")[0] ?? "";
    const agent = byHost[label];
    if (!agent) return new Response("no agent at this host", { status: 404 });
    return agent.fetch(request, env, ctx);
  },
};
