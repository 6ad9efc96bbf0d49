import { compact, type JsonObject, type JsonValue } from "../protocol/json";
import { addUsage, type ToolCall, type ToolResult, type Usage } from "../providers/base/types";

/** Where an agent's turn stands; a finished task's result says complete, failed or cancelled. */
export type AgentStatus =
  | "idle"
  | "planning"
  | "reasoning"
  | "executing"
  | "complete"
  | "failed"
  | "cancelled";

/** One tool call of a turn, as it ran. */
export interface ToolUse {
  name: string;
  callId: string;
  /** The arguments the model sent; absent when they were not a JSON object (cut off). */
  arguments?: JsonObject;
  outcome: "ok" | "error";
  /** The tool's result as the model saw it (an error message for errors). */
  content: string;
  durationMs: number;
  /** When it started, in milliseconds since the turn started (the waterfall's offset). */
  atMs?: number;
}

/** One model call of a turn. */
export interface ModelUse {
  /** The provider and model that answered (for a fallback, the member that did). */
  provider: string;
  model: string;
  usage?: Usage;
  /** US dollars; absent when the model's prices are unknown (never a made-up zero). */
  cost?: number;
  latencyMs: number;
  timeToFirstTokenMs?: number;
  /** When it started, in milliseconds since the turn started (the waterfall's offset). */
  atMs?: number;
}

/** One step of the optional trace (`trace: true`), in the order it happened. */
export interface TraceEntry {
  kind: "model_call" | "tool_call";
  name: string;
  /** Milliseconds since the turn started. */
  atMs: number;
  durationMs: number;
  outcome: "ok" | "error";
}

/**
 * What a model-backed turn produced, in the finished task's `metadata.result`. Totals
 * cover every model call of the turn, tool rounds included. Unknown values are absent,
 * not null (task metadata is merged as a JSON merge patch, where null means "remove").
 * @example
 * const task = await client.getTask({ id });
 * const result = task.metadata?.result as AgentResult;
 * console.log(result.answer, result.toolsUsed.map((t) => t.name), result.totalTokens);
 */
export interface AgentResult {
  taskId: string;
  status: AgentStatus;
  /** The visible answer: every text the model streamed in this turn. */
  answer: string;
  /** The model's thinking (reasoning deltas, `<think>` blocks); absent when it showed none. */
  thinking?: string;
  hasThinking: boolean;
  toolsUsed: ToolUse[];
  modelsUsed: ModelUse[];
  usage?: Usage;
  totalTokens: number;
  /** US dollars over every call; absent when any price is unknown. */
  cost?: number;
  totalTimeMs: number;
  /** When the turn started (milliseconds since the epoch): with each call's `atMs`, its place in time. */
  startedAt?: number;
  /** The answer parsed against `outputSchema` when one was set. */
  output?: JsonValue;
  /** Why the answer does not match `outputSchema`; absent when it does. */
  outputError?: string;
  /** Every model and tool call with its timing, when the agent sets `trace: true`. */
  trace?: TraceEntry[];
  /** Why the turn failed. */
  error?: string;
}

/** Collects a turn's model and tool calls into its `AgentResult`. */
export class ResultRecorder {
  readonly #started = Date.now();
  readonly #tools: ToolUse[] = [];
  readonly #models: ModelUse[] = [];
  readonly #trace: TraceEntry[] | null;
  #usage: Usage | null = null;
  #cost: number | null = 0;
  #answer: string[] = [];
  #thinking: string[] = [];

  constructor(trace: boolean) {
    this.#trace = trace ? [] : null;
  }

  get startedAt(): number {
    return this.#started;
  }

  get modelCalls(): number {
    return this.#models.length;
  }

  model(use: ModelUse, startedAt: number, answer: string, thinking: string): void {
    this.#models.push(compact({ ...use, atMs: startedAt - this.#started }));
    this.#usage = addUsage(this.#usage, use.usage ?? null);
    // One call of unknown price makes the whole turn's cost unknown, not lower.
    this.#cost = this.#cost === null || use.cost === undefined ? null : this.#cost + use.cost;
    if (answer) this.#answer.push(answer);
    if (thinking) this.#thinking.push(thinking);
    this.#step("model_call", `${use.provider}/${use.model}`, startedAt, use.latencyMs, "ok");
  }

  tool(call: ToolCall, run: ToolRun): void {
    const outcome: ToolUse["outcome"] = run.isError ? "error" : "ok";
    this.#tools.push(
      compact({
        name: call.name,
        callId: call.id,
        arguments: call.input ?? undefined,
        outcome,
        content: run.content,
        durationMs: run.durationMs,
        atMs: Date.now() - run.durationMs - this.#started,
      }),
    );
    this.#step("tool_call", call.name, Date.now() - run.durationMs, run.durationMs, outcome);
  }

  #step(kind: TraceEntry["kind"], name: string, at: number, ms: number, outcome: "ok" | "error") {
    this.#trace?.push({ kind, name, atMs: at - this.#started, durationMs: ms, outcome });
  }

  /** The turn's cost over every call; null when any price is unknown or nothing was called. */
  get cost(): number | null {
    if (this.#models.length === 0 || this.#cost === null) return null;
    return Math.round(this.#cost * 1e9) / 1e9;
  }

  get usage(): Usage | null {
    return this.#usage;
  }

  /** The provider and model of the latest call. */
  get lastModel(): { provider: string; model: string } | null {
    const last = this.#models.at(-1);
    return last ? { provider: last.provider, model: last.model } : null;
  }

  /** Time to first token of the turn: the first call's. */
  get firstTokenMs(): number | null {
    return this.#models.find((m) => m.timeToFirstTokenMs !== undefined)?.timeToFirstTokenMs ?? null;
  }

  result(taskId: string, status: AgentStatus, extra: Partial<AgentResult> = {}): AgentResult {
    const thinking = this.#thinking.join("\n\n");
    const out: AgentResult = compact({
      taskId,
      status,
      answer: this.#answer.join(""),
      thinking: thinking || undefined,
      hasThinking: thinking !== "",
      toolsUsed: this.#tools,
      modelsUsed: this.#models,
      usage: this.#usage ?? undefined,
      totalTokens: this.#usage?.totalTokens ?? 0,
      cost: this.cost ?? undefined,
      totalTimeMs: Date.now() - this.#started,
      startedAt: this.#started,
      ...extra,
    });
    if (this.#trace) out.trace = this.#trace;
    return out;
  }
}

/** A tool call's result with what the agent reports about it. */
export interface ToolRun extends ToolResult {
  /** The value the tool returned (`content` is its text); null for errors. */
  value: JsonValue;
  durationMs: number;
  /** The tool itself failed (threw or timed out), as opposed to a refused call. */
  threw: boolean;
}
