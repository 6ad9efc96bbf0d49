/**
 * The resolved agent: `resolveAgent` checks the options an agent is defined with
 * (agent-config.ts) and applies every default, giving the `Agent` every other part reads.
 */
import * as z from "zod";
import type { Summarizer } from "../history/summarize";
import { AgentCard } from "../protocol/card/agent-card";
import {
  type Model,
  ModelRequest,
  type ModelRequestInput,
  type ModelSettings,
} from "../providers/base/types";
import { stripThinkTags } from "../providers/think-tags";
import { jsonSchemaOf } from "../providers/tool-spec";
import { type ApprovalSettings, resolveApprovals } from "./access/approval-options";
import { type AuthOptions, checkAuth, securitySchemesOf } from "./access/auth";
import { type ResolvedRateLimit, resolveRateLimit } from "./access/rate-limit";
import type { AgentConfig, CorsOptions, InferFn, PushOptions } from "./agent-config";
import { type AgentTools, checkAgentTools } from "./agent-tool-options";
import { refuseUnknownOptions } from "./config-keys";
import { type ContextWindowSettings, resolveContextWindow } from "./context-window-option";
import { checkEndpoints, type DeclaredEndpoint } from "./endpoints";
import { type Limits, resolveLimits } from "./limits";
import { checkMcpSource, type McpToolSource } from "./mcp-source";
import { checkMemorySource, type MemorySource } from "./memory-source";
import { modelInfer } from "./model-infer";
import { type PromptComposition, parsePromptComposition } from "./prompt";
import type { ReplyHook } from "./reply";
import type { AgentHandler, RunContext } from "./run-context";
import type { Tools } from "./tool";

/** Model settings as resolved: the output schema as JSON Schema. */
export type ResolvedModelSettings = Omit<ModelRequestInput, "messages" | "system" | "tools">;

/** A validated agent configuration with every default applied. */
export interface Agent<Env = unknown> {
  card: AgentCard;
  extendedCard: AgentCard | null;
  handler: AgentHandler<Env> | null;
  reply: ReplyHook<Env> | null;
  tools: Tools;
  mcp: McpToolSource | null;
  /** Long-term memory; null when off (the default). */
  memory: MemorySource | null;
  agents: AgentTools;
  endpoints: DeclaredEndpoint<Env>[];
  /** Whether a tool known only at run time (an MCP server's) passes allowed/blockedTools. */
  toolAllowed: (name: string) => boolean;
  infer: InferFn<Env> | null;
  /** Whether clients' `infer` parts are accepted (see `acceptInfer` in AgentConfig). */
  acceptInfer: boolean;
  /** Whether clients' `tool_call` parts are accepted (see `acceptToolCalls`). */
  acceptToolCalls: boolean;
  model: Model | null;
  instructions:
    | string
    | PromptComposition
    | ((ctx: RunContext<Env>) => string | Promise<string>)
    | null;
  modelSettings: ResolvedModelSettings;
  maxIterations: number;
  maxToolRounds: number;
  turnTimeoutMs: number;
  toolTimeoutMs: number;
  stopOnError: boolean;
  streamReasoning: boolean;
  trace: boolean;
  maxToolCallsPerTurn: number;
  parallelToolCalls: boolean;
  resumeOnRestart: boolean;
  approvals: ApprovalSettings;
  maxBodyBytes: number;
  cardMaxAgeSeconds: number;
  streaming: boolean;
  keepAliveMs: number;
  bindings: { context: string; index: string };
  summarizer: Summarizer | null;
  maxHistoryItemBytes: number;
  contextWindow: ContextWindowSettings;
  push: PushOptions | null;
  limits: Limits;
  auth: AuthOptions<Env> | null;
  /** null: no rate limits (`rateLimit: false`). */
  rateLimit: ResolvedRateLimit | null;
  cors: CorsOptions | null;
  clientContextIds: boolean;
  /** true/false when set; null: decided per request (see `inspector` in AgentConfig). */
  inspector: boolean | null;
}

export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;
/** Largest conversation item by default (4 MiB). */
export const DEFAULT_MAX_ITEM_BYTES = 4 * 1024 * 1024;

/** Validates a configuration; throws a clear error naming the bad field. */
export function resolveAgent<Env>(config: AgentConfig<Env>): Agent<Env> {
  refuseUnknownOptions(config);
  const parsed = AgentCard.safeParse(config.card);
  if (!parsed.success) {
    const why = parsed.error.issues.map((i) => `card.${i.path.join(".")}: ${i.message}`);
    throw new TypeError(`Invalid agent card: ${why.join("; ")}`);
  }
  const positive = (name: string, v: number | undefined, fallback: number): number => {
    if (v === undefined) return fallback;
    if (!Number.isFinite(v) || v <= 0) throw new TypeError(`${name} must be a positive number`);
    return v;
  };
  // The card's security schemes say what is enforced: derived from `auth`, never by hand.
  if (Object.keys(parsed.data.securitySchemes).length) {
    throw new TypeError(
      "card.securitySchemes is derived from the auth option; configure auth instead of declaring schemes",
    );
  }
  positive("push.unhealthyAfter", config.push?.unhealthyAfter, 0);
  const chunks = config.push?.artifactChunks;
  if (chunks !== undefined && chunks !== "coalesced" && chunks !== "each") {
    throw new TypeError(
      `push.artifactChunks must be "coalesced" or "each", got ${JSON.stringify(chunks)}`,
    );
  }
  const auth = config.auth ? checkAuth(config.auth) : null;
  if (config.extendedCard && !auth) {
    throw new TypeError("extendedCard is served only to authenticated callers; configure auth");
  }
  if (config.approvals?.approvers && !auth) {
    throw new TypeError(
      "approvals.approvers names principals, and without auth every caller is the same one; configure auth",
    );
  }
  const card = { ...parsed.data, securitySchemes: auth ? securitySchemesOf(auth) : {} };
  const agents = checkAgentTools(config.agents, config.tools ?? {});
  const toolAllowed = toolFilter(
    [
      ...Object.keys(config.tools ?? {}),
      ...Object.keys(agents),
      ...(checkMemorySource(config.memory)?.toolNames ?? []),
    ],
    config.mcp !== undefined,
    config.allowedTools,
    config.blockedTools,
  );
  const agent: Agent<Env> = {
    card,
    extendedCard: config.extendedCard
      ? { ...AgentCard.parse(config.extendedCard), securitySchemes: card.securitySchemes }
      : null,
    handler: config.handler ?? null,
    reply: config.reply ?? null,
    tools: Object.fromEntries(
      Object.entries(config.tools ?? {}).filter(([name]) => toolAllowed(name)),
    ),
    mcp: checkMcpSource(config.mcp),
    memory: checkMemorySource(config.memory),
    agents: Object.fromEntries(Object.entries(agents).filter(([name]) => toolAllowed(name))),
    toolAllowed,
    endpoints: checkEndpoints(config.endpoints),
    // Set below: answering with the agent's own model needs the agent's instructions.
    infer: config.infer ?? null,
    // A model spends the operator's money: clients reach it only through turns the agent
    // runs, unless the operator opts in.
    acceptInfer: config.acceptInfer ?? !config.model,
    acceptToolCalls: config.acceptToolCalls ?? !config.model,
    model: config.model
      ? config.stripThinkTags === false
        ? config.model
        : stripThinkTags(config.model)
      : null,
    instructions:
      typeof config.instructions === "object"
        ? parsePromptComposition(config.instructions)
        : (config.instructions ?? null),
    modelSettings: checkModelSettings(config.modelSettings ?? {}),
    maxIterations: positive("maxIterations", config.maxIterations, 20),
    maxToolRounds: positive("maxToolRounds", config.maxToolRounds, 10),
    turnTimeoutMs: positive("turnTimeoutMs", config.turnTimeoutMs, 300_000),
    toolTimeoutMs: positive("toolTimeoutMs", config.toolTimeoutMs, 60_000),
    stopOnError: config.stopOnError ?? false,
    streamReasoning: config.streamReasoning ?? false,
    trace: config.trace ?? false,
    maxToolCallsPerTurn: positive("maxToolCallsPerTurn", config.maxToolCallsPerTurn, 16),
    parallelToolCalls: config.parallelToolCalls ?? true,
    resumeOnRestart: config.resumeOnRestart ?? false,
    approvals: resolveApprovals(config.approvals),
    maxBodyBytes: positive("maxBodyBytes", config.maxBodyBytes, DEFAULT_MAX_BODY_BYTES),
    cardMaxAgeSeconds: positive("cardMaxAgeSeconds", config.cardMaxAgeSeconds, 300),
    streaming: config.streaming ?? true,
    keepAliveMs: positive("keepAliveMs", config.keepAliveMs, 15_000),
    bindings: {
      context: config.bindings?.context ?? "EDGELINK_CONTEXT",
      index: config.bindings?.index ?? "EDGELINK_INDEX",
    },
    summarizer: config.summarizer ?? null,
    contextWindow: resolveContextWindow(config.contextWindow),
    push: config.push ?? null,
    limits: resolveLimits(config.limits),
    auth,
    rateLimit: resolveRateLimit(config.rateLimit),
    cors: config.cors ?? null,
    clientContextIds: config.clientContextIds ?? false,
    inspector: config.inspector ?? null,
    maxHistoryItemBytes: positive(
      "maxHistoryItemBytes",
      config.maxHistoryItemBytes,
      DEFAULT_MAX_ITEM_BYTES,
    ),
  };
  // Without an infer function, infer parts go to the agent's own model, under its
  // instructions (read at call time, as model turns read them).
  if (!config.infer && config.model) agent.infer = modelInfer<Env>(config.model, agent);
  return agent;
}

/**
 * Which tools an agent offers and runs: `allowed` (unset or empty: all) minus
 * `blocked`. A name in either list that is no tool and no agent is a definition error,
 * unless the agent has MCP servers, whose tools are known only when listed.
 */
function toolFilter(
  known: readonly string[],
  hasMcp: boolean,
  allowed: readonly string[] | undefined,
  blocked: readonly string[] | undefined,
): (name: string) => boolean {
  if (!hasMcp) {
    const names = new Set(known);
    for (const [field, list] of [
      ["allowedTools", allowed],
      ["blockedTools", blocked],
    ] as const) {
      const unknown = (list ?? []).filter((name) => !names.has(name));
      if (unknown.length) throw new TypeError(`${field}: no tool named ${unknown.join(", ")}`);
    }
  }
  const keep = allowed?.length ? new Set(allowed) : null;
  const drop = new Set(blocked ?? []);
  return (name) => (keep === null || keep.has(name)) && !drop.has(name);
}

const Settings = ModelRequest.omit({ messages: true, system: true, tools: true }).partial();

/** Bad model settings are a definition error, named at startup, not at the first task. */
function checkModelSettings(input: ModelSettings): ResolvedModelSettings {
  const { outputSchema, ...rest } = input;
  const settings: ResolvedModelSettings =
    outputSchema === undefined
      ? rest
      : {
          ...rest,
          outputSchema:
            outputSchema instanceof z.ZodType ? jsonSchemaOf(outputSchema) : outputSchema,
        };
  const parsed = Settings.safeParse(settings);
  if (!parsed.success) {
    const why = parsed.error.issues.map((i) => `modelSettings.${i.path.join(".")}: ${i.message}`);
    throw new TypeError(`Invalid model settings: ${why.join("; ")}`);
  }
  return settings;
}
