import { ToolCallAssembler } from "../base/assemble";
import { StreamMessage } from "../base/decoder";
import { ProviderError } from "../base/errors";
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
import { OPENAI_RESPONSES } from "./openai-responses-body";

/**
 * Decodes a Responses API stream (`event: <type>` + `data: {type, ..., sequence_number}`)
 * into normalized events. There is no `[DONE]`: the stream ends with
 * `response.completed`, `response.incomplete` or `response.failed`, and a body that stops
 * before one of them is an error. Event types we do not know are ignored.
 */

interface WireUsage {
  input_tokens?: number;
  output_tokens?: number;
  total_tokens?: number;
  input_tokens_details?: { cached_tokens?: number } | null;
  output_tokens_details?: { reasoning_tokens?: number } | null;
}

interface WireResponse {
  id?: string;
  model?: string;
  status?: string;
  usage?: WireUsage | null;
  error?: { code?: string | null; message?: string } | null;
  incomplete_details?: { reason?: string } | null;
}

interface WireItem {
  type?: string;
  id?: string;
  call_id?: string;
  name?: string;
  arguments?: string;
  encrypted_content?: string | null;
  summary?: { type?: string; text?: string }[];
}

interface WireEvent {
  type?: string;
  response?: WireResponse;
  item?: WireItem;
  output_index?: number;
  item_id?: string;
  summary_index?: number;
  content_index?: number;
  delta?: string;
  arguments?: string;
  /** `error` events: the fields at the top level (API reference) or under `error`. */
  error?: unknown;
  code?: string | null;
  message?: string;
}

/** Error codes that may succeed when tried again; `insufficient_quota` never does. */
const RETRYABLE_CODE = /rate_limit|server_error|overloaded|unavailable|timeout|internal_error/i;

export interface ResponsesDecoderInit {
  /** The model asked for; the stream's own model id replaces it once known. */
  model: string;
  /** From the response headers; the stream's response id stands in when absent. */
  requestId: string | null;
  capabilities: ModelCapabilities;
}

/**
 * A decoder for one Responses stream.
 * @example
 * const decoder = responsesDecoder({ model: "gpt-5", requestId: null, capabilities });
 * for await (const batch of decodeBody(body, decoder, { provider: "openai-responses", stallMs: 60_000 })) {}
 */
export function responsesDecoder(init: ResponsesDecoderInit): StreamDecoder {
  return new ResponsesDecoder(init);
}

class ResponsesDecoder implements StreamDecoder {
  readonly #message: StreamMessage;
  readonly #calls = new ToolCallAssembler();
  /** `fc_` item id → assembler index: argument deltas name the item, not the call. */
  readonly #callIndex = new Map<string, number>();
  readonly #args = new Map<number, string>();
  readonly #reasoning: ReasoningBlock[] = [];
  #lastReasoningPart: string | null = null;

  constructor(init: ResponsesDecoderInit) {
    this.#message = new StreamMessage({ provider: OPENAI_RESPONSES, ...init });
  }

  frame(frame: Frame, out: StreamEvent[]): void {
    if (this.#message.ended) return;
    const event = parseFrame<WireEvent>(OPENAI_RESPONSES, frame.data);
    const type = typeof event.type === "string" ? event.type : frame.event;
    switch (type) {
      case "response.created":
      case "response.in_progress":
        this.#start(out, event.response);
        return;
      case "response.output_text.delta":
      case "response.refusal.delta":
        if (event.delta) {
          this.#start(out);
          out.push({ type: "text_delta", text: event.delta });
        }
        return;
      case "response.reasoning_summary_text.delta":
      case "response.reasoning_text.delta":
        this.#reasoningDelta(event, out);
        return;
      case "response.output_item.added":
        this.#itemAdded(event, out);
        return;
      case "response.function_call_arguments.delta":
        this.#argumentsDelta(event, out);
        return;
      case "response.function_call_arguments.done":
        this.#callDone(event.item_id, event.arguments, out);
        return;
      case "response.output_item.done":
        this.#itemDone(event, out);
        return;
      case "response.completed":
        this.#finish(out, event.response, "stop");
        return;
      case "response.incomplete":
        this.#finish(out, event.response, incompleteReason(event.response));
        return;
      case "response.failed":
        throw this.#failure(event.response?.error ?? null, event.response);
      case "error":
        throw this.#failure(isObject(event.error) ? event.error : event, undefined);
      default:
        return;
    }
  }

  end(_out: StreamEvent[]): void {
    this.#message.assertEnded();
  }

  #start(out: StreamEvent[], response?: WireResponse): void {
    // The response id names the answer in errors even when it arrives after the start.
    if (response?.id) this.#message.requestId ??= response.id;
    this.#message.start(out, { model: response?.model ?? null });
  }

  /** Summary parts arrive one after another; a blank line keeps them apart in the text. */
  #reasoningDelta(event: WireEvent, out: StreamEvent[]): void {
    if (!event.delta) return;
    this.#start(out);
    const part = `${event.item_id}:${event.summary_index ?? event.content_index ?? 0}`;
    if (this.#lastReasoningPart !== null && this.#lastReasoningPart !== part) {
      out.push({ type: "reasoning_delta", text: "\n\n" });
    }
    this.#lastReasoningPart = part;
    out.push({ type: "reasoning_delta", text: event.delta });
  }

  #itemAdded(event: WireEvent, out: StreamEvent[]): void {
    const item = event.item;
    if (item?.type !== "function_call" || !item.id) return;
    this.#start(out);
    const index = event.output_index ?? this.#callIndex.size;
    this.#callIndex.set(item.id, index);
    this.#calls.start(index, item.call_id, item.name ?? "", out);
    this.#calls.setMetadata(index, { itemId: item.id });
    if (item.arguments) this.#appendArgs(index, item.arguments, out);
  }

  #argumentsDelta(event: WireEvent, out: StreamEvent[]): void {
    const index = event.item_id === undefined ? undefined : this.#callIndex.get(event.item_id);
    if (index === undefined || !event.delta) return;
    this.#appendArgs(index, event.delta, out);
  }

  #appendArgs(index: number, fragment: string, out: StreamEvent[]): void {
    this.#args.set(index, (this.#args.get(index) ?? "") + fragment);
    this.#calls.delta(index, fragment, out);
  }

  /**
   * Ends a call. The full arguments sent with the end fill in whatever the deltas did not
   * carry (a server that sends a call whole); when they disagree, the deltas stand.
   */
  #callDone(itemId: string | undefined, full: string | undefined, out: StreamEvent[]): void {
    const index = itemId === undefined ? undefined : this.#callIndex.get(itemId);
    if (index === undefined || !this.#calls.has(index)) return;
    const sofar = this.#args.get(index) ?? "";
    if (full && full.length > sofar.length && full.startsWith(sofar)) {
      this.#appendArgs(index, full.slice(sofar.length), out);
    }
    this.#calls.end(out, index);
  }

  #itemDone(event: WireEvent, out: StreamEvent[]): void {
    const item = event.item;
    if (item?.type === "function_call") this.#callDone(item.id, item.arguments, out);
    else if (item?.type === "reasoning" && item.id) this.#reasoning.push(...reasoningBlocks(item));
  }

  #finish(out: StreamEvent[], response: WireResponse | undefined, stop: StopReason): void {
    this.#start(out, response);
    this.#calls.end(out);
    const used = response?.usage ? usageOf(response.usage) : null;
    if (used) out.push({ type: "usage", usage: used });
    this.#message.finish(out, {
      stopReason: stop === "stop" && this.#calls.startedCount > 0 ? "tool_calls" : stop,
      providerStopReason: response?.incomplete_details?.reason ?? response?.status ?? null,
      usage: used,
      reasoning: this.#reasoning,
    });
  }

  #failure(error: unknown, response: WireResponse | undefined): ProviderError {
    const fields = isObject(error) ? error : {};
    const code =
      typeof fields.code === "string"
        ? fields.code
        : typeof fields.type === "string"
          ? fields.type
          : null;
    const detail = typeof fields.message === "string" ? fields.message : "the response failed";
    return new ProviderError({
      provider: OPENAI_RESPONSES,
      kind: "stream",
      message: `${OPENAI_RESPONSES} failed mid-stream: ${detail}`,
      code,
      requestId: this.#message.requestId ?? response?.id ?? null,
      retryable: code !== null && RETRYABLE_CODE.test(code),
    });
  }
}

function incompleteReason(response: WireResponse | undefined): StopReason {
  const reason = response?.incomplete_details?.reason;
  if (reason === "max_output_tokens") return "length";
  if (reason === "content_filter") return "content_filter";
  return "other";
}

function usageOf(wire: WireUsage): Usage {
  return usage({
    promptTokens: wire.input_tokens,
    completionTokens: wire.output_tokens,
    totalTokens: wire.total_tokens,
    reasoningTokens: wire.output_tokens_details?.reasoning_tokens,
    cachedPromptTokens: wire.input_tokens_details?.cached_tokens,
  });
}

/**
 * A finished reasoning item as blocks to replay: one per summary part (so each keeps its
 * text), all with the item's id; the first also carries the encrypted content. An item
 * without summary parts is one block with empty text.
 */
function reasoningBlocks(item: WireItem): ReasoningBlock[] {
  const texts = (item.summary ?? []).map((part) => part.text ?? "");
  return (texts.length ? texts : [""]).map((text, i) => {
    const block: ReasoningBlock = { provider: OPENAI_RESPONSES, text, id: item.id };
    if (i === 0 && item.encrypted_content) block.encrypted = item.encrypted_content;
    return block;
  });
}
