import { ToolCallAssembler } from "../base/assemble";
import { inStreamError, nonEmpty, StreamMessage } from "../base/decoder";
import type { ProviderError } from "../base/errors";
import { isObject } from "../base/http";
import { type Frame, parseFrame, type StreamDecoder } from "../base/sse";
import {
  type ModelCapabilities,
  type ReasoningBlock,
  type StopReason,
  type StreamEvent,
  type Usage,
  usage,
} from "../base/types";
import { ANTHROPIC } from "./anthropic-messages";

/**
 * Decodes an Anthropic Messages stream (`message_start` → `content_block_start/delta/stop`
 * → `message_delta` → `message_stop`) into normalized events.
 *
 * - Thinking deltas become `reasoning_delta`; each thinking block (with its signature) and
 *   each `redacted_thinking` block is returned in `message_end.reasoning`, in block order,
 *   to be replayed on the next turn.
 * - A `tool_use` block that never got its `content_block_stop` (the answer hit
 *   `max_tokens`) still ends, with the partial arguments and `input: null`: never a
 *   callable call, and the stop reason says `length`.
 * - An `error` event is thrown as a `stream` error; a body that ends without
 *   `message_stop` is a `stream` error too.
 */

export interface AnthropicDecoderOptions {
  /** The model asked for; the stream's own `message.model` wins when present. */
  model: string;
  capabilities: ModelCapabilities;
  /** The `request-id` response header, when there was one. */
  requestId: string | null;
  /** The forced output tool: its input is streamed as text, not as a tool call. */
  outputTool?: string | null;
  /** `false` keeps thinking out of `reasoning_delta` (the blocks are still returned). */
  includeReasoning?: boolean;
}

const STOP_REASONS: Record<string, StopReason> = {
  end_turn: "stop",
  stop_sequence: "stop",
  max_tokens: "length",
  model_context_window_exceeded: "length",
  tool_use: "tool_calls",
  refusal: "content_filter",
};

/** Error types worth another try: overload, rate limit, server error, timeout. */
const RETRYABLE_ERRORS = new Set([
  "overloaded_error",
  "rate_limit_error",
  "api_error",
  "timeout_error",
]);

type Block =
  | { kind: "text" }
  | { kind: "tool" }
  | { kind: "output" }
  | { kind: "thinking"; text: string[]; signature: string }
  | { kind: "redacted"; data: string }
  | { kind: "other" };

interface RawUsage {
  input_tokens?: unknown;
  output_tokens?: unknown;
  cache_read_input_tokens?: unknown;
  cache_creation_input_tokens?: unknown;
  output_tokens_details?: unknown;
}

interface WireEvent {
  type?: unknown;
  index?: unknown;
  message?: { id?: unknown; model?: unknown; usage?: RawUsage };
  content_block?: Record<string, unknown>;
  delta?: Record<string, unknown>;
  usage?: RawUsage;
  error?: unknown;
  request_id?: unknown;
}

/**
 * The decoder for one Anthropic response body, for `decodeBody`.
 * @example
 * yield* decodeBody(response.body, anthropicDecoder({ model, capabilities, requestId }), {
 *   provider: "anthropic",
 *   stallMs: 60_000,
 * });
 */
export function anthropicDecoder(options: AnthropicDecoderOptions): StreamDecoder {
  return new AnthropicDecoder(options);
}

class AnthropicDecoder implements StreamDecoder {
  readonly #options: AnthropicDecoderOptions;
  readonly #message: StreamMessage;
  readonly #tools = new ToolCallAssembler();
  /** Open blocks by index; a block leaves at its `content_block_stop`. */
  readonly #open = new Map<number, Block>();
  readonly #reasoning = new Map<number, ReasoningBlock>();
  /** Arguments a `tool_use` start already carried (a proxy may send them whole). */
  readonly #startInput = new Map<number, string>();
  readonly #usage = {
    input: 0,
    output: 0,
    cacheRead: undefined as number | undefined,
    cacheWrite: undefined as number | undefined,
    thinking: undefined as number | undefined,
  };
  #sawUsage = false;
  #usedOutputTool = false;
  #stopReason: string | null = null;

  constructor(options: AnthropicDecoderOptions) {
    this.#options = options;
    const { model, capabilities, requestId } = options;
    this.#message = new StreamMessage({ provider: ANTHROPIC, model, capabilities, requestId });
  }

  frame(frame: Frame, out: StreamEvent[]): void {
    if (this.#message.ended) return;
    const event = parseFrame<WireEvent>(ANTHROPIC, frame.data);
    if (!isObject(event)) return;
    if (frame.event === "error" || event.type === "error") throw this.#streamError(event);
    switch (event.type) {
      case "message_start":
        this.#messageStart(event, out);
        break;
      case "content_block_start":
        this.#blockStart(event, out);
        break;
      case "content_block_delta":
        this.#blockDelta(event, out);
        break;
      case "content_block_stop":
        this.#blockStop(event, out);
        break;
      case "message_delta":
        this.#messageDelta(event, out);
        break;
      case "message_stop":
        this.#messageStop(out);
        break;
      default:
        // ping, and event types newer than this adapter
        break;
    }
  }

  end(): void {
    this.#message.assertEnded();
  }

  #start(out: StreamEvent[], model?: unknown, id?: unknown): void {
    // No request-id header (a proxy stripped it): the message id still names the answer.
    this.#message.start(out, {
      model: nonEmpty(model),
      requestId: typeof id === "string" ? id : null,
    });
  }

  #messageStart(event: WireEvent, out: StreamEvent[]): void {
    this.#start(out, event.message?.model, event.message?.id);
    this.#absorbUsage(event.message?.usage, out);
  }

  #blockStart(event: WireEvent, out: StreamEvent[]): void {
    this.#start(out);
    const index = indexOf(event);
    const block = event.content_block;
    if (index === null || !isObject(block)) return;
    switch (block.type) {
      case "text": {
        this.#open.set(index, { kind: "text" });
        this.#text(str(block.text), out);
        return;
      }
      case "thinking": {
        const thinking = str(block.thinking);
        this.#open.set(index, {
          kind: "thinking",
          text: [thinking],
          signature: str(block.signature),
        });
        this.#thinkingDelta(thinking, out);
        return;
      }
      case "redacted_thinking":
        this.#open.set(index, { kind: "redacted", data: str(block.data) });
        return;
      case "tool_use": {
        const name = str(block.name);
        if (this.#options.outputTool && name === this.#options.outputTool) {
          this.#usedOutputTool = true;
          this.#open.set(index, { kind: "output" });
          return;
        }
        this.#open.set(index, { kind: "tool" });
        this.#tools.start(index, str(block.id), name, out);
        if (isObject(block.input) && Object.keys(block.input).length > 0) {
          this.#startInput.set(index, JSON.stringify(block.input));
        }
        return;
      }
      default:
        this.#open.set(index, { kind: "other" });
    }
  }

  #blockDelta(event: WireEvent, out: StreamEvent[]): void {
    this.#start(out);
    const index = indexOf(event);
    const delta = event.delta;
    const block = index === null ? undefined : this.#open.get(index);
    if (index === null || !block || !isObject(delta)) return;
    switch (delta.type) {
      case "text_delta":
        if (block.kind === "text") this.#text(str(delta.text), out);
        return;
      case "thinking_delta":
        if (block.kind === "thinking") {
          block.text.push(str(delta.thinking));
          this.#thinkingDelta(str(delta.thinking), out);
        }
        return;
      case "signature_delta":
        if (block.kind === "thinking") block.signature += str(delta.signature);
        return;
      case "input_json_delta":
        if (block.kind === "tool") {
          this.#startInput.delete(index);
          this.#tools.delta(index, str(delta.partial_json), out);
        } else if (block.kind === "output") {
          this.#text(str(delta.partial_json), out);
        }
        return;
      default:
        return;
    }
  }

  #blockStop(event: WireEvent, out: StreamEvent[]): void {
    const index = indexOf(event);
    if (index !== null) this.#close(index, out, true);
  }

  #close(index: number, out: StreamEvent[], complete: boolean): void {
    const block = this.#open.get(index);
    if (!block) return;
    this.#open.delete(index);
    if (block.kind === "thinking") {
      const text = block.text.join("");
      this.#reasoning.set(
        index,
        block.signature
          ? { provider: ANTHROPIC, text, signature: block.signature }
          : { provider: ANTHROPIC, text },
      );
    } else if (block.kind === "redacted") {
      this.#reasoning.set(index, { provider: ANTHROPIC, text: "", redacted: block.data });
    } else if (block.kind === "tool") {
      const whole = this.#startInput.get(index);
      if (whole !== undefined) this.#tools.delta(index, whole, out);
      const from = out.length;
      this.#tools.end(out, index);
      // A call cut off before its stop is never callable, even if its JSON happens to parse.
      if (!complete) {
        for (const e of out.slice(from)) if (e.type === "tool_call_end") e.call.input = null;
      }
    }
  }

  #messageDelta(event: WireEvent, out: StreamEvent[]): void {
    this.#start(out);
    const reason = event.delta?.stop_reason;
    if (typeof reason === "string") this.#stopReason = reason;
    this.#absorbUsage(event.usage, out);
  }

  #messageStop(out: StreamEvent[]): void {
    this.#start(out);
    for (const index of [...this.#open.keys()].sort((a, b) => a - b)) {
      this.#close(index, out, false);
    }
    const final = this.#sawUsage ? this.#currentUsage() : null;
    const reasoning = [...this.#reasoning.entries()]
      .sort(([a], [b]) => a - b)
      .map(([, block]) => block);
    this.#message.finish(out, {
      stopReason: this.#normalizedStop(),
      providerStopReason: this.#stopReason,
      usage: final,
      reasoning,
    });
  }

  #normalizedStop(): StopReason {
    const reason = this.#stopReason;
    if (reason === null) return "other";
    // The forced output tool is how the answer was given, not a call to run.
    if (reason === "tool_use" && this.#usedOutputTool && this.#tools.startedCount === 0) {
      return "stop";
    }
    return STOP_REASONS[reason] ?? "other";
  }

  #text(text: string, out: StreamEvent[]): void {
    if (text) out.push({ type: "text_delta", text });
  }

  #thinkingDelta(text: string, out: StreamEvent[]): void {
    if (text && this.#options.includeReasoning !== false) {
      out.push({ type: "reasoning_delta", text });
    }
  }

  /** Usage in the stream is cumulative: a later number replaces an earlier one. */
  #absorbUsage(raw: RawUsage | undefined, out: StreamEvent[]): void {
    if (!isObject(raw)) return;
    const u = this.#usage;
    const input = num(raw.input_tokens);
    const output = num(raw.output_tokens);
    const cacheRead = num(raw.cache_read_input_tokens);
    const cacheCreation = num(raw.cache_creation_input_tokens);
    const details = raw.output_tokens_details;
    const thinking = isObject(details) ? num(details.thinking_tokens) : undefined;
    if (input !== undefined) u.input = input;
    if (output !== undefined) u.output = output;
    if (cacheRead !== undefined) u.cacheRead = cacheRead;
    if (cacheCreation !== undefined) u.cacheWrite = cacheCreation;
    if (thinking !== undefined) u.thinking = thinking;
    this.#sawUsage = true;
    out.push({ type: "usage", usage: this.#currentUsage() });
  }

  /** Cache reads and cache writes are prompt tokens too, each reported as its part. */
  #currentUsage(): Usage {
    const u = this.#usage;
    return usage({
      promptTokens: u.input + (u.cacheRead ?? 0) + (u.cacheWrite ?? 0),
      completionTokens: u.output,
      reasoningTokens: u.thinking,
      cachedPromptTokens: u.cacheRead,
      cacheWritePromptTokens: u.cacheWrite,
    });
  }

  #streamError(event: WireEvent): ProviderError {
    const error = isObject(event.error) ? event.error : {};
    const code = typeof error.type === "string" ? error.type : null;
    const message = typeof error.message === "string" ? error.message : "unknown error";
    return inStreamError(ANTHROPIC, {
      detail: `${code ?? "error"}: ${message}`,
      code,
      requestId: typeof event.request_id === "string" ? event.request_id : this.#options.requestId,
      retryable: code !== null && RETRYABLE_ERRORS.has(code),
    });
  }
}

function indexOf(event: WireEvent): number | null {
  return typeof event.index === "number" && Number.isInteger(event.index) ? event.index : null;
}

function str(value: unknown): string {
  return typeof value === "string" ? value : "";
}

function num(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : undefined;
}
