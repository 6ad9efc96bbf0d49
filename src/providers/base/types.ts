import type { Context } from "@opentelemetry/api";
import * as z from "zod";
import { Item } from "../../history/items";
import { fromLlmMessages } from "../../history/llm-message";
import { JsonObject } from "../../protocol/json";

/**
 * The one provider-neutral vocabulary every adapter speaks: a request built from
 * conversation items, a stream of normalized events, and the response those events add up
 * to. Adapters translate to and from the wire; nothing above `providers/` sees a provider
 * format.
 */

/**
 * A tool as a model sees it: name, description and a JSON Schema for its arguments.
 * Build one from a zod schema with `toolSpec`.
 * @example
 * ToolSpec.parse({ name: "get_weather", description: "", parameters: { type: "object" } });
 */
export const ToolSpec = z.object({
  name: z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/, "tool names are 1-64 of [a-zA-Z0-9_-]"),
  description: z.string().default(""),
  parameters: JsonObject.default(() => ({ type: "object", properties: {} })),
});
export type ToolSpec = z.output<typeof ToolSpec>;
export type ToolSpecInput = z.input<typeof ToolSpec>;

/** Which tool the model must use: any (`auto`), none, at least one (`required`), or one by name. */
export const ToolChoice = z.union([
  z.enum(["auto", "none", "required"]),
  z.object({ name: z.string().min(1) }),
]);
export type ToolChoice = z.output<typeof ToolChoice>;

/**
 * How much the model should think, for models that can. `effort` for OpenAI-style
 * reasoning models, `budgetTokens` for Anthropic and Gemini thinking.
 */
export const ReasoningOptions = z.object({
  effort: z.enum(["minimal", "low", "medium", "high"]).optional(),
  budgetTokens: z.number().int().positive().optional(),
  /** Ask for the model's thinking (or its summary) to be streamed as `reasoning_delta`. */
  include: z.boolean().default(true),
});
export type ReasoningOptions = z.output<typeof ReasoningOptions>;

/**
 * Messages of a request: conversation items (the history model), or a plain list of
 * `{ role, content }` LLM messages, which are turned into items. Either way adapters see
 * items only.
 */
const Messages = z.array(z.unknown()).transform((list, ctx): Item[] => {
  const items: Item[] = [];
  list.forEach((entry, index) => {
    const isItem = typeof entry === "object" && entry !== null && "type" in entry;
    try {
      if (isItem) items.push(Item.parse(entry));
      else items.push(...fromLlmMessages([entry as never]));
    } catch (error) {
      const detail =
        error instanceof z.ZodError
          ? error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`).join("; ")
          : String(error);
      ctx.addIssue({ code: "custom", path: [index], message: detail });
    }
  });
  return items;
});

/**
 * What to ask a model. `system` goes before the messages; `temperature: 0` is sent
 * (a zero is a value, not "unset").
 * @example
 * const request = ModelRequest.parse({
 *   system: "Answer in one word.",
 *   messages: [{ role: "user", content: "Capital of France?" }],
 *   temperature: 0,
 * });
 */
export const ModelRequest = z.object({
  messages: Messages,
  system: z.string().optional(),
  tools: z.array(ToolSpec).default([]),
  toolChoice: ToolChoice.optional(),
  /** JSON Schema the answer must match; `outputName` names it where providers want one. */
  outputSchema: JsonObject.optional(),
  outputName: z.string().default("output"),
  temperature: z.number().min(0).max(2).optional(),
  maxTokens: z.number().int().positive().optional(),
  topP: z.number().min(0).max(1).optional(),
  stop: z.array(z.string()).optional(),
  reasoning: ReasoningOptions.optional(),
  /** Sent to providers that accept request metadata (OpenAI); others ignore it. */
  metadata: z.record(z.string(), z.string()).optional(),
  /** Merged last into the provider's request body: an escape hatch for knobs not modelled here. */
  providerOptions: JsonObject.optional(),
});
export type ModelRequest = z.output<typeof ModelRequest>;
export type ModelRequestInput = z.input<typeof ModelRequest>;

/**
 * Request settings of an agent's model calls; messages, system and tools come from the
 * agent. `outputSchema` may be a zod schema or a JSON Schema: it is sent natively
 * where the provider supports it, as instructions otherwise, and the answer is validated
 * against it (`metadata.result.output`, or `outputError` saying what does not match).
 * @example
 * const modelSettings: ModelSettings = { temperature: 0.2, maxTokens: 800 };
 * defineAgent({ card, model, modelSettings });
 */
export type ModelSettings = Omit<
  ModelRequestInput,
  "messages" | "system" | "tools" | "outputSchema"
> & {
  outputSchema?: JsonObject | z.ZodType;
};

/**
 * Token counts. `totalTokens` is derived when a provider omits it.
 * @example
 * Usage.parse({ promptTokens: 10, completionTokens: 5 }).totalTokens; // 15
 */
export const Usage = z
  .object({
    promptTokens: z.number().int().nonnegative().default(0),
    completionTokens: z.number().int().nonnegative().default(0),
    totalTokens: z.number().int().nonnegative().optional(),
    /** Part of `completionTokens` spent thinking. */
    reasoningTokens: z.number().int().nonnegative().optional(),
    /** Part of `promptTokens` read from the provider's cache. */
    cachedPromptTokens: z.number().int().nonnegative().optional(),
    /** Part of `promptTokens` written to the provider's cache (Anthropic prompt caching). */
    cacheWritePromptTokens: z.number().int().nonnegative().optional(),
  })
  .transform((u) => ({ ...u, totalTokens: u.totalTokens ?? u.promptTokens + u.completionTokens }));
export type Usage = z.output<typeof Usage>;
export type UsageInput = z.input<typeof Usage>;

/** Builds a usage with the total derived when missing, without a schema pass (hot path). */
export function usage(input: {
  promptTokens?: number | null | undefined;
  completionTokens?: number | null | undefined;
  totalTokens?: number | null | undefined;
  reasoningTokens?: number | null | undefined;
  cachedPromptTokens?: number | null | undefined;
  cacheWritePromptTokens?: number | null | undefined;
}): Usage {
  const promptTokens = input.promptTokens ?? 0;
  const completionTokens = input.completionTokens ?? 0;
  const out: Usage = {
    promptTokens,
    completionTokens,
    totalTokens: input.totalTokens ?? promptTokens + completionTokens,
  };
  if (input.reasoningTokens != null) out.reasoningTokens = input.reasoningTokens;
  if (input.cachedPromptTokens != null) out.cachedPromptTokens = input.cachedPromptTokens;
  if (input.cacheWritePromptTokens != null) {
    out.cacheWritePromptTokens = input.cacheWritePromptTokens;
  }
  return out;
}

/** Sums usages of several model calls (a tool loop's rounds). */
export function addUsage(a: Usage | null, b: Usage | null): Usage | null {
  if (!a) return b;
  if (!b) return a;
  const sum = (x?: number, y?: number) =>
    x === undefined && y === undefined ? undefined : (x ?? 0) + (y ?? 0);
  return usage({
    promptTokens: a.promptTokens + b.promptTokens,
    completionTokens: a.completionTokens + b.completionTokens,
    totalTokens: a.totalTokens + b.totalTokens,
    reasoningTokens: sum(a.reasoningTokens, b.reasoningTokens),
    cachedPromptTokens: sum(a.cachedPromptTokens, b.cachedPromptTokens),
    cacheWritePromptTokens: sum(a.cacheWritePromptTokens, b.cacheWritePromptTokens),
  });
}

/**
 * A tool call the model made: `arguments` verbatim as the model produced them,
 * `input` the parsed object (`null` when the arguments are not a JSON object, e.g. cut off
 * by the token limit). `metadata` holds provider data that must be replayed with the call
 * (a Gemini thought signature).
 */
export const ToolCall = z.object({
  id: z.string().min(1),
  name: z.string().min(1),
  arguments: z.string(),
  input: JsonObject.nullable(),
  metadata: JsonObject.optional(),
});
export type ToolCall = z.output<typeof ToolCall>;

/** A tool's answer to one call. */
export const ToolResult = z.object({
  toolCallId: z.string().min(1),
  name: z.string(),
  content: z.string(),
  isError: z.boolean().default(false),
});
export type ToolResult = z.output<typeof ToolResult>;

/**
 * Thinking a provider wants back on the next turn, exactly as it was sent: Anthropic
 * thinking blocks with their signature (or redacted data), OpenAI Responses reasoning
 * items with encrypted content, Gemini thought signatures on text.
 */
export const ReasoningBlock = z.object({
  provider: z.string(),
  text: z.string().default(""),
  signature: z.string().optional(),
  /** Anthropic `redacted_thinking` data. */
  redacted: z.string().optional(),
  /** OpenAI Responses reasoning item id and encrypted content. */
  id: z.string().optional(),
  encrypted: z.string().optional(),
});
export type ReasoningBlock = z.output<typeof ReasoningBlock>;

/** Why the model stopped, normalized; the provider's own word is in `providerStopReason`. */
export const StopReason = z.enum([
  "stop",
  "length",
  "tool_calls",
  "content_filter",
  "error",
  "other",
]);
export type StopReason = z.infer<typeof StopReason>;

/**
 * The normalized stream. Text deltas concatenate to the final text; a tool call's
 * `tool_call_end` carries its fully assembled arguments; `message_end` comes last with the
 * stop reason, the final usage and any thinking the provider wants replayed.
 */
export type StreamEvent = (
  | { type: "message_start"; provider: string; model: string; requestId: string | null }
  | { type: "text_delta"; text: string }
  | { type: "reasoning_delta"; text: string }
  | { type: "tool_call_start"; index: number; id: string; name: string }
  | { type: "tool_call_delta"; index: number; id: string; argumentsDelta: string }
  | { type: "tool_call_end"; index: number; call: ToolCall }
  | { type: "usage"; usage: Usage }
  | {
      type: "message_end";
      stopReason: StopReason;
      providerStopReason: string | null;
      usage: Usage | null;
      reasoning: ReasoningBlock[];
      /** US dollars for this call from the model's prices; `null` when unknown. */
      costEstimate: number | null;
    }
  /**
   * A failure a wrapper recovered from (a retry, a fallback to the next provider). A
   * failure that ends the stream is thrown, not sent as an event.
   */
  | { type: "error"; error: Error; provider: string; model: string; recovered: true }
) & {
  /**
   * Only with `raw: true` in the call options: the provider's own event this one was
   * decoded from (its JSON parsed; text when it is not JSON), for debugging. Several
   * events decoded from one provider event share it.
   */
  raw?: unknown;
};

export type StreamEventType = StreamEvent["type"];

/**
 * Flags and limits of a model and its prices per million tokens (decision 6).
 * Unknown prices are `null`, so a cost estimate is `null` rather than a wrong zero.
 */
export interface ModelCapabilities {
  streaming: boolean;
  tools: boolean;
  parallelToolCalls: boolean;
  structuredOutput: boolean;
  vision: boolean;
  reasoning: boolean;
  contextWindow: number | null;
  maxOutputTokens: number | null;
  inputPricePerMillion: number | null;
  outputPricePerMillion: number | null;
  cachedInputPricePerMillion: number | null;
  /**
   * Price of prompt tokens written to the cache (Anthropic charges 1.25× input for the
   * 5-minute cache). Absent or `null`: charged as ordinary input.
   */
  cacheWriteInputPricePerMillion?: number | null;
}

/** Per-call options: cancellation, where keys come from, and the transport. */
export interface CallOptions {
  /** Aborting stops the upstream fetch at once. */
  signal?: AbortSignal;
  /** The Worker's env: API keys (`OPENAI_API_KEY`, ...), base URLs and the `AI` binding. */
  env?: object;
  /** Replaces the global `fetch` (tests, or a service binding's `fetch`). */
  fetch?: typeof fetch;
  /**
   * Where a fallback keeps its failure counts for this call. Default: the
   * fallback's own `store`, else its memory, shared by every call in the isolate (an
   * agent passes none, so its conversations share one health).
   */
  failoverStore?: FailoverStore;
  /**
   * The OpenTelemetry context of the call's span: its `traceparent` goes on the
   * provider's request (the agent sets it while tracing is on).
   */
  traceContext?: Context;
  /**
   * Keep the provider's payloads for debugging: every stream event carries the provider
   * event it was decoded from (`event.raw`), and `generate` returns them all in
   * `response.raw`. Off by default: nothing is kept or parsed twice.
   */
  raw?: boolean;
}

/**
 * Failover bookkeeping, keyed by a fallback's name: plain JSON, so it can live anywhere
 * (KV, a Durable Object) when health should be shared wider than one isolate.
 */
export interface FailoverStore {
  load(key: string): Promise<JsonObject | null> | JsonObject | null;
  save(key: string, state: JsonObject): Promise<void> | void;
}

/**
 * Anything that answers a request with a stream: a provider adapter, a retry wrapper, a
 * fallback, a router. Events arrive in batches (one per network read) so that consumers
 * can write a batch at once; `streamEvents` flattens them.
 */
export interface Model {
  /** The provider's name, e.g. `openai`, or the wrapper's, e.g. `fallback`. */
  readonly provider: string;
  /** The model id sent to the provider, or a wrapper's description of its members. */
  readonly model: string;
  readonly capabilities: ModelCapabilities;
  /** Throws a `ProviderError` (or subclass) when the call fails. */
  streamBatches(request: ModelRequest, options?: CallOptions): AsyncIterable<StreamEvent[]>;
  /**
   * What is wrong with this model's configuration in `env` (a missing key, a base URL that
   * cannot work), one sentence each naming what to fix; empty when it can be called. The
   * agent checks it once per isolate, before serving its first request.
   * @example
   * openai({ model: "gpt-4o-mini" }).configProblems?.({}); // ["OPENAI_API_KEY is not set: ..."]
   */
  configProblems?(env: object | undefined): string[];
}

/**
 * What a finished call adds up to.
 */
export interface ModelResponse {
  text: string;
  /** Thinking shown by the model (reasoning deltas joined, or `<think>` blocks). */
  reasoning: string;
  reasoningBlocks: ReasoningBlock[];
  /** The answer parsed against `outputSchema` when one was asked for. */
  output: unknown;
  /** Why `output` is missing when a schema was asked for. */
  outputError: string | null;
  provider: string;
  model: string;
  usage: Usage | null;
  stopReason: StopReason;
  providerStopReason: string | null;
  toolCalls: ToolCall[];
  latencyMs: number;
  timeToFirstTokenMs: number | null;
  /** In US dollars; `null` when the model's prices are unknown. */
  costEstimate: number | null;
  requestId: string | null;
  /**
   * Only with `raw: true` in the call options: the provider events the response was
   * decoded from, in order (each once; events that decoded to nothing, such as pings, are
   * not kept).
   */
  raw?: unknown[];
}
