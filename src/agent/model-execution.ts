import type { z } from "zod";
import type { FunctionCallItem, Item, ItemInput, MessageItem } from "../history/items";
import { errorReference } from "../models/errors";
import type { JsonObject } from "../models/json";
import { newId, nowIso } from "../models/json";
import type { Message } from "../models/message";
import { Parts } from "../models/part";
import { isFirstToken } from "../providers/collect";
import { AllProvidersFailedError, ProviderError } from "../providers/errors";
import { jsonSchemaOf } from "../providers/tool-spec";
import {
  addUsage,
  type CallOptions,
  ModelRequest,
  type ReasoningBlock,
  type StreamEvent,
  type ToolCall,
  type Usage,
} from "../providers/types";
import type { TaskContext } from "./context";
import type { Agent } from "./definition";
import { runToolCalls, type ToolRunOptions } from "./tool-runner";
import type { Tools } from "./tools";
import { openTurnTools, resumeAgentCalls } from "./turn-tools";

const RequestSettings = ModelRequest.omit({ messages: true });
type RequestSettings = z.output<typeof RequestSettings>;

// An agent's tool schemas and settings are the same every turn: convert and validate
// them once per agent and instructions, not per task.
const settingsCache = new WeakMap<object, Map<string | null, RequestSettings>>();

function requestSettings<Env>(agent: Agent<Env>, system: string | null): RequestSettings {
  let byInstructions = settingsCache.get(agent);
  if (!byInstructions) {
    byInstructions = new Map();
    settingsCache.set(agent, byInstructions);
  }
  let settings = byInstructions.get(system);
  if (!settings) {
    const tools = Object.entries(agent.tools).map(([name, tool]) => ({
      name,
      description: tool.description,
      parameters: tool.jsonSchema ?? jsonSchemaOf(tool.input),
    }));
    settings = RequestSettings.parse({
      ...agent.modelSettings,
      system: system ?? undefined,
      tools,
    });
    // Instructions built per task would grow the cache without bound; keep the static ones.
    if (typeof agent.instructions !== "function") byInstructions.set(system, settings);
  }
  return settings;
}

/** The artifact an LLM agent streams its answer into. */
export const RESPONSE_ARTIFACT = "response";

/**
 * Runs a model-backed agent's turn: the conversation so far goes to the model; its text
 * streams into the `response` artifact (one `append` chunk per network read, so the event
 * log gets one row per read, not per token); tool calls run and their results go back to
 * the model until it answers (H15); every step is recorded in the context's history. The
 * task ends `completed` with usage, cost and timing in its metadata, or `failed` with the
 * provider's error. A failure after text was streamed is not retried or rerouted (H6):
 * the task fails, and what was sent stays as sent.
 */
export async function runModelAgent<Env>(
  ctx: TaskContext<Env>,
  agent: Agent<Env>,
  callOptions: Pick<CallOptions, "failoverStore"> = {},
): Promise<void> {
  const model = agent.model;
  if (!model) throw new TypeError("runModelAgent needs an agent with a model");
  const started = Date.now();
  const system =
    typeof agent.instructions === "function" ? await agent.instructions(ctx) : agent.instructions;
  const turn = await openTurnTools(agent, ctx);
  try {
    const tools: Tools = turn ? { ...agent.tools, ...turn.tools } : agent.tools;
    const settings = withTools(requestSettings(agent, system), turn?.tools);
    await resumeAgentCalls(ctx, agent, tools, toolOptions(ctx, agent));
    const items: Item[] = answerOrphanCalls(ctx.conversation.providerItems());
    await runTurn(ctx, agent, items, settings, tools, callOptions, started);
  } finally {
    await turn?.close();
  }
}

function toolOptions<Env>(ctx: TaskContext<Env>, agent: Agent<Env>): ToolRunOptions {
  return {
    signal: ctx.signal,
    timeoutMs: agent.toolTimeoutMs,
    maxCallsPerTurn: agent.maxToolCallsPerTurn,
    parallel: agent.parallelToolCalls,
  };
}

/** The settings with run-time tools (MCP) added after the agent's own. */
function withTools(settings: RequestSettings, extra: Tools | undefined): RequestSettings {
  if (!extra || Object.keys(extra).length === 0) return settings;
  const specs = Object.entries(extra).map(([name, tool]) => {
    const { $schema: _, ...parameters } = tool.jsonSchema ?? jsonSchemaOf(tool.input);
    return { name, description: tool.description, parameters };
  });
  return RequestSettings.parse({ ...settings, tools: [...(settings.tools ?? []), ...specs] });
}

async function runTurn<Env>(
  ctx: TaskContext<Env>,
  agent: Agent<Env>,
  items: Item[],
  settings: RequestSettings,
  tools: Tools,
  callOptions: Pick<CallOptions, "failoverStore">,
  started: number,
): Promise<void> {
  const model = agent.model as NonNullable<Agent<Env>["model"]>;
  const options: CallOptions = { signal: ctx.signal, env: ctx.env as object, ...callOptions };
  const stats = new TurnStats();
  const artifact = new ArtifactWriter(ctx);

  for (let call = 1; call <= agent.maxModelCalls; call++) {
    const request: ModelRequest = { ...settings, messages: items };
    let round: Round;
    try {
      round = await streamRound(model.streamBatches(request, options), artifact, stats);
    } catch (error) {
      if (ctx.signal.aborted) throw error;
      const failure = error instanceof ProviderError ? error : null;
      ctx.fail(publicFailure(failure, error), {
        metadata: {
          ...stats.metadata(started),
          ...(failure ? { providerError: describe(failure) } : {}),
        },
      });
      return;
    }
    items.push(...ctx.record(turnItems(round, ctx)));
    if (round.toolCalls.length === 0) {
      artifact.finish();
      ctx.complete(undefined, { metadata: stats.metadata(started) });
      return;
    }
    const results = await runToolCalls(round.toolCalls, tools, toolOptions(ctx, agent));
    const outputs: ItemInput[] = results.map((result) => ({
      type: "function_call_output",
      name: result.name,
      callId: result.toolCallId,
      output: result.content,
      isError: result.isError,
    }));
    items.push(...ctx.record(outputs));
  }
  ctx.fail(`Stopped after ${agent.maxModelCalls} model calls without a final answer`, {
    metadata: { ...stats.metadata(started), cutShort: true },
  });
}

/** What one model call produced. */
interface Round {
  text: string;
  reasoning: string;
  reasoningBlocks: ReasoningBlock[];
  toolCalls: ToolCall[];
}

async function streamRound(
  batches: AsyncIterable<StreamEvent[]>,
  artifact: ArtifactWriter,
  stats: TurnStats,
): Promise<Round> {
  const round: Round = { text: "", reasoning: "", reasoningBlocks: [], toolCalls: [] };
  const text: string[] = [];
  const reasoning: string[] = [];
  const callStarted = Date.now();
  let firstToken = false;
  let ended = false;
  for await (const batch of batches) {
    let chunk = "";
    for (const event of batch) {
      if (!firstToken && isFirstToken(event)) {
        firstToken = true;
        stats.firstToken(Date.now() - callStarted);
      }
      switch (event.type) {
        case "message_start":
          stats.model = { provider: event.provider, model: event.model };
          break;
        case "text_delta":
          chunk += event.text;
          break;
        case "reasoning_delta":
          reasoning.push(event.text);
          break;
        case "tool_call_end":
          round.toolCalls.push(event.call);
          break;
        case "message_end":
          ended = true;
          stats.end(event.usage, event.costEstimate);
          round.reasoningBlocks = event.reasoning;
          break;
        default:
          break;
      }
    }
    if (chunk) {
      text.push(chunk);
      // The batch that ends a turn with no tool calls ends the answer: mark it there.
      artifact.write(chunk, ended && round.toolCalls.length === 0);
    }
  }
  round.text = text.join("");
  round.reasoning = reasoning.join("");
  return round;
}

/**
 * The history items of one model turn, in the shape every converter replays: the
 * assistant's text (carrying its thinking), then its calls. With no text, the thinking
 * rides on the first call.
 */
function turnItems(round: Round, ids: { taskId: string; contextId: string }): ItemInput[] {
  const items: ItemInput[] = [];
  const reasoning = round.reasoningBlocks as unknown as JsonObject[];
  const hasMessage = round.text !== "" || round.toolCalls.length === 0;
  if (hasMessage) {
    const extra: JsonObject = { a2a: agentMessage(round.text, ids) as unknown as JsonObject };
    if (reasoning.length) extra.reasoning = reasoning;
    if (round.reasoning) extra.thinking = round.reasoning;
    const message: Omit<MessageItem, "id" | "createdAt" | "interrupted"> = {
      type: "message",
      role: "assistant",
      content: [round.text],
      extra,
    };
    items.push(message);
  }
  round.toolCalls.forEach((call, index) => {
    const metadata: JsonObject = { ...call.metadata };
    if (!hasMessage && index === 0 && reasoning.length) metadata.reasoning = reasoning;
    const item: Omit<FunctionCallItem, "id" | "createdAt"> = {
      type: "function_call",
      name: call.name,
      arguments: call.arguments,
      callId: call.id,
    };
    if (Object.keys(metadata).length) item.metadata = metadata;
    items.push(item);
  });
  return items;
}

function agentMessage(text: string, ids: { taskId: string; contextId: string }): Message {
  return {
    messageId: newId(),
    role: "agent",
    parts: [Parts.text(text)],
    taskId: ids.taskId,
    contextId: ids.contextId,
    timestamp: nowIso(),
  };
}

/** What a model is told about a call whose turn ended before it had a result. */
export const INTERRUPTED_CALL_OUTPUT = "No result: the call was interrupted before it finished";

/**
 * Providers refuse a conversation in which a tool call has no result, so one canceled
 * mid-tool would break every later turn. Such calls get an error result, right after
 * their turn, in what is sent (the stored history is left as it happened).
 */
export function answerOrphanCalls(items: readonly Item[]): Item[] {
  const answered = new Set<string>();
  for (const item of items) if (item.type === "function_call_output") answered.add(item.callId);
  const out: Item[] = [];
  let pending: FunctionCallItem[] = [];
  const flush = () => {
    for (const call of pending) {
      out.push({
        type: "function_call_output",
        id: `${call.id}:interrupted`,
        createdAt: call.createdAt,
        name: call.name,
        callId: call.callId,
        output: INTERRUPTED_CALL_OUTPUT,
        isError: true,
      });
    }
    pending = [];
  };
  for (const item of items) {
    if (item.type === "function_call") {
      out.push(item);
      if (!answered.has(item.callId)) pending.push(item);
      continue;
    }
    // The turn's calls end at the first item that is neither a call nor a result.
    if (item.type !== "function_call_output") flush();
    out.push(item);
  }
  flush();
  return out;
}

/**
 * Streams text into one artifact: the first write creates it, later writes append. The
 * chunk that ends the answer is marked `lastChunk`.
 */
class ArtifactWriter {
  #id: string | null = null;
  #closed = false;
  constructor(private readonly ctx: TaskContext<unknown>) {}

  /** Writes a chunk; `last` marks it as the answer's end (no separate closing write). */
  write(text: string, last = false): void {
    if (this.#id === null) {
      this.#id = this.ctx.artifact({
        name: RESPONSE_ARTIFACT,
        parts: [Parts.text(text)],
        ...(last ? { lastChunk: true } : {}),
      });
    } else {
      this.ctx.artifact({
        artifactId: this.#id,
        append: true,
        parts: [Parts.text(text)],
        ...(last ? { lastChunk: true } : {}),
      });
    }
    this.#closed = last;
  }

  /** Marks the end of the answer when the last text chunk could not carry the mark. */
  finish(): void {
    if (this.#id !== null && !this.#closed) {
      this.ctx.artifact({
        artifactId: this.#id,
        append: true,
        lastChunk: true,
        parts: [Parts.text("")],
      });
      this.#closed = true;
    }
  }
}

/** Usage, cost and timing summed over every model call of the turn (G14, G15). */
class TurnStats {
  model: { provider: string; model: string } | null = null;
  #usage: Usage | null = null;
  #cost: number | null = 0;
  #calls = 0;
  #firstTokenMs: number | null = null;

  firstToken(ms: number): void {
    this.#firstTokenMs ??= ms;
  }

  end(usage: Usage | null, cost: number | null): void {
    this.#calls++;
    this.#usage = addUsage(this.#usage, usage);
    // One call of unknown price makes the whole turn's cost unknown, not lower.
    this.#cost = this.#cost === null || cost === null ? null : this.#cost + cost;
  }

  metadata(started: number): JsonObject {
    const out: JsonObject = {
      modelCalls: this.#calls,
      latencyMs: Date.now() - started,
      timeToFirstTokenMs: this.#firstTokenMs,
      cost:
        this.#calls === 0 ? null : this.#cost === null ? null : Math.round(this.#cost * 1e9) / 1e9,
    };
    if (this.#usage) out.usage = { ...this.#usage };
    if (this.model) out.model = { ...this.model };
    return out;
  }
}

/**
 * The failure a task reports, public by design: which provider failed and how (status,
 * code), never the provider's error body, which may echo the request or account details.
 * The full error is logged under a reference id given in the reason.
 */
function publicFailure(failure: ProviderError | null, error: unknown): string {
  const reference = errorReference();
  console.error(`edgelink: model call failed ${reference}`, error);
  if (!failure) return `The model call failed (reference ${reference})`;
  const how = [failure.kind === "http" ? `HTTP ${failure.status}` : failure.kind, failure.code]
    .filter(Boolean)
    .join(", ");
  return `The model provider ${failure.provider} failed (${how}; reference ${reference})`;
}

function describe(error: ProviderError): JsonObject {
  const out: JsonObject = {
    provider: error.provider,
    kind: error.kind,
    status: error.status,
    code: error.code,
    requestId: error.requestId,
    retryable: error.retryable,
  };
  // A fallback's error lists each member's failure, so the first (usually real) cause shows.
  if (error instanceof AllProvidersFailedError) {
    out.failures = error.failures.map(describe);
  }
  return out;
}
