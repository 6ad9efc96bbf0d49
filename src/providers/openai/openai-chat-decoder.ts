import { ToolCallAssembler } from "../base/assemble";
import { type DecoderInit, inStreamError, nonEmpty, StreamMessage } from "../base/decoder";
import type { ProviderError } from "../base/errors";
import { isObject } from "../base/http";
import { type Frame, parseFrame, parseLoose, type StreamDecoder } from "../base/sse";
import { usage as makeUsage, type StopReason, type StreamEvent, type Usage } from "../base/types";

/** Who is answering; the stream's own model id and id win over the asked-for ones. */
export type ChatDecoderInit = DecoderInit;

type Json = Record<string, unknown>;

/**
 * Decodes a Chat Completions stream (OpenAI, Azure, the OpenAI-compatible servers and the
 * OpenAI-style chunks of Workers AI) into normalized events.
 *
 * Tolerates what servers really send: chunks with no choices (Azure's prompt-filter chunk,
 * the usage chunk, gpt-5's moderation chunk after the usage), usage on the finish chunk
 * (Groq, also as `x_groq.usage`), tool calls in fragments keyed by `index` with the id on
 * the first one only, whole tool calls in one fragment, calls without `index` (keyed by
 * position), indexes that start at 1, thinking as `delta.reasoning_content` (DeepSeek,
 * vLLM) or `delta.reasoning` (Groq, OpenRouter), and refusals. An error inside the stream
 * (`event: error`, or a chunk with a top-level `error`) is thrown as a `stream` error.
 *
 * The stream ends at `[DONE]`. Some compatible servers never send it: a stream that ends
 * after a `finish_reason` ends normally; one that ends before any is cut off and throws.
 */
export class ChatCompletionsDecoder implements StreamDecoder {
  readonly #message: StreamMessage;
  readonly #tools = new ToolCallAssembler();
  /** The server's key for a call (its index, or its position) → our index and its id. */
  readonly #slots = new Map<number, { index: number; id: string | null }>();
  #nextIndex = 0;
  #finishReason: string | null = null;
  #usage: Usage | null = null;
  #refused = false;

  constructor(init: ChatDecoderInit) {
    this.#message = new StreamMessage(init);
  }

  get ended(): boolean {
    return this.#message.ended;
  }

  get finishReason(): string | null {
    return this.#finishReason;
  }

  frame(frame: Frame, out: StreamEvent[]): void {
    if (this.#message.ended) return;
    const data = frame.data.trim();
    if (data === "[DONE]") {
      this.done(out);
      return;
    }
    if (frame.event === "error") {
      throw chatStreamError(this.#message.provider, parseLoose(data), this.#message.requestId);
    }
    if (data === "") return;
    this.chunk(parseFrame<unknown>(this.#message.provider, data), out);
  }

  /** One parsed chunk; usable by adapters that frame the stream themselves. */
  chunk(chunk: unknown, out: StreamEvent[]): void {
    if (this.#message.ended || !isObject(chunk)) return;
    if (chunk.error != null) {
      throw chatStreamError(this.#message.provider, chunk, this.#message.requestId);
    }
    const choices = Array.isArray(chunk.choices) ? chunk.choices : [];
    const rawUsage = chunk.usage ?? (isObject(chunk.x_groq) ? chunk.x_groq.usage : undefined);
    const usage = chatUsage(rawUsage);
    if (choices.length === 0 && !usage) return;
    this.#start(out, chunk);
    for (const choice of choices) {
      // Only one answer is asked for; a second choice would interleave with the first.
      if (!isObject(choice) || (typeof choice.index === "number" && choice.index !== 0)) continue;
      if (isObject(choice.delta)) this.#delta(choice.delta, out);
      if (typeof choice.finish_reason === "string" && choice.finish_reason !== "") {
        this.#finishReason = choice.finish_reason;
        this.#tools.end(out);
      }
    }
    if (usage) this.setUsage(usage, out);
  }

  /** Visible text. */
  text(text: string, out: StreamEvent[]): void {
    if (text === "") return;
    this.#start(out);
    out.push({ type: "text_delta", text });
  }

  /** Thinking shown by the model. */
  reasoning(text: string, out: StreamEvent[]): void {
    if (text === "") return;
    this.#start(out);
    out.push({ type: "reasoning_delta", text });
  }

  /**
   * One tool-call fragment: `{index?, id?, function: {name?, arguments?}}`, or a whole
   * call `{name, arguments}` with arguments as a string or an object. `position` is its
   * place in the chunk's list, the key when the server sends no index.
   */
  toolCall(fragment: Json, position: number, out: StreamEvent[]): void {
    const fn = isObject(fragment.function) ? fragment.function : fragment;
    const id = nonEmpty(fragment.id);
    const name = nonEmpty(fn.name);
    const raw = fn.arguments;
    const args = raw == null || typeof raw === "string" ? raw : JSON.stringify(raw);
    const explicit = typeof fragment.index === "number";
    const key = explicit ? (fragment.index as number) : position;
    let slot = this.#slots.get(key);
    // A different id, or a name without an index (whole calls, one per chunk), is a new call.
    const fresh =
      !slot || (id !== null && slot.id !== null && id !== slot.id) || (!explicit && name !== null);
    if (fresh) {
      // A fragment that names no call (a "null finalization" entry) adds nothing.
      if (name === null) return;
      this.#start(out);
      slot = { index: this.#nextIndex++, id };
      this.#slots.set(key, slot);
      this.#tools.start(slot.index, id, name, out);
    }
    if (slot && typeof args === "string") this.#tools.delta(slot.index, args, out);
  }

  /** Records the usage so far (it replaces, never adds to, what came before). */
  setUsage(usage: Usage, out: StreamEvent[]): void {
    this.#start(out);
    this.#usage = usage;
    out.push({ type: "usage", usage });
  }

  /** The stream's terminator: closes open calls and sends `message_end`. */
  done(out: StreamEvent[]): void {
    if (this.#message.ended) return;
    this.#start(out);
    this.#tools.end(out);
    this.#message.finish(out, {
      stopReason: normalizeStop(this.#finishReason, this.#tools.startedCount > 0, this.#refused),
      providerStopReason: this.#finishReason,
      usage: this.#usage,
      reasoning: [],
    });
  }

  end(out: StreamEvent[]): void {
    if (this.#finishReason !== null) this.done(out);
    this.#message.assertEnded(
      "the stream ended before it was complete (no [DONE] and no finish_reason)",
    );
  }

  #delta(delta: Json, out: StreamEvent[]): void {
    // Servers that send both carry the same text in each; take one.
    const thinking = nonEmpty(delta.reasoning_content) ?? nonEmpty(delta.reasoning);
    if (thinking !== null) this.reasoning(thinking, out);
    if (typeof delta.content === "string") this.text(delta.content, out);
    if (typeof delta.refusal === "string" && delta.refusal !== "") {
      this.#refused = true;
      this.text(delta.refusal, out);
    }
    if (Array.isArray(delta.tool_calls)) {
      delta.tool_calls.forEach((fragment, position) => {
        if (isObject(fragment)) this.toolCall(fragment, position, out);
      });
    }
  }

  #start(out: StreamEvent[], chunk?: Json): void {
    if (this.#message.started) return;
    const groq = chunk && isObject(chunk.x_groq) ? nonEmpty(chunk.x_groq.id) : null;
    this.#message.start(out, {
      model: nonEmpty(chunk?.model),
      requestId: groq ?? nonEmpty(chunk?.id),
    });
  }
}

/**
 * Token counts of a Chat Completions `usage` object, or null when it holds none.
 * Cached prompt tokens come from `prompt_tokens_details` or DeepSeek's
 * `prompt_cache_hit_tokens`.
 */
export function chatUsage(raw: unknown): Usage | null {
  if (!isObject(raw)) return null;
  const prompt = count(raw.prompt_tokens);
  const completion = count(raw.completion_tokens);
  const total = count(raw.total_tokens);
  if (prompt === null && completion === null && total === null) return null;
  const completionDetails = isObject(raw.completion_tokens_details)
    ? raw.completion_tokens_details
    : {};
  const promptDetails = isObject(raw.prompt_tokens_details) ? raw.prompt_tokens_details : {};
  return makeUsage({
    promptTokens: prompt,
    completionTokens: completion,
    totalTokens: total,
    reasoningTokens: count(completionDetails.reasoning_tokens),
    cachedPromptTokens: count(promptDetails.cached_tokens) ?? count(raw.prompt_cache_hit_tokens),
  });
}

/**
 * A `stream` error from an error a server sent inside a 200 stream: `{"error":{message,
 * type, code, status_code}}` (OpenAI, Groq), `{"error":{code: 400, message}}` next to normal
 * fields (OpenRouter), `{"error":"text"}`, or plain text. `code` is the provider's code
 * (else its type); rate limits, overload and server errors are retryable.
 */
export function chatStreamError(
  provider: string,
  payload: unknown,
  requestId: string | null,
): ProviderError {
  const error = isObject(payload) && "error" in payload ? payload.error : payload;
  let message: string | null = null;
  let code: string | null = null;
  let status: number | null = null;
  if (typeof error === "string") message = error;
  else if (isObject(error)) {
    message = nonEmpty(error.message);
    const numeric = typeof error.code === "number" ? error.code : null;
    code =
      nonEmpty(error.code) ?? nonEmpty(error.type) ?? (numeric === null ? null : String(numeric));
    status =
      count(error.status_code) ??
      count(error.status) ??
      (numeric !== null && numeric >= 400 && numeric < 600 ? numeric : null);
  }
  message ??= JSON.stringify(error)?.slice(0, 300) ?? "unknown error";
  const retryable =
    (status !== null && (status === 408 || status === 409 || status === 429 || status >= 500)) ||
    /rate.?limit|overload|server.?error|internal|unavailable|capacity|timeout|temporar/i.test(
      code ?? "",
    );
  return inStreamError(provider, { detail: message, status, code, requestId, retryable });
}

/**
 * The provider's finish reason in our words. A plain stop after tool calls is a tool
 * turn (Ollama said `stop`); a stop after a refusal is a content filter; no reason at all
 * (a stream ended by `[DONE]` alone) is a stop.
 */
export function normalizeStop(
  reason: string | null,
  calledTools: boolean,
  refused = false,
): StopReason {
  switch (reason) {
    case null:
    case "stop":
    case "end_turn":
    case "eos":
    case "stop_sequence":
      if (calledTools) return "tool_calls";
      return refused ? "content_filter" : "stop";
    case "length":
    case "max_tokens":
    case "model_length":
      return "length";
    case "tool_calls":
    case "function_call":
    case "tool_use":
      return "tool_calls";
    case "content_filter":
    case "safety":
      return "content_filter";
    case "error":
      return "error";
    default:
      return "other";
  }
}

function count(value: unknown): number | null {
  return typeof value === "number" && Number.isFinite(value) && value >= 0
    ? Math.round(value)
    : null;
}
