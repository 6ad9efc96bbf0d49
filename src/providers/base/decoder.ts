import { ProviderError } from "./errors";
import { estimateCost } from "./pricing";
import type { ModelCapabilities, ReasoningBlock, StopReason, StreamEvent, Usage } from "./types";

/**
 * What every stream decoder does around its vendor's wire format: announce the answer once
 * (`message_start`), close it once (`message_end` with the cost estimate), refuse frames
 * after the end, and throw when the body stopped before the end. A decoder holds one of
 * these and keeps only the parsing its vendor needs.
 */

/** Who is answering: fixed when the call is made. */
export interface DecoderInit {
  provider: string;
  /** The model asked for; the stream's own model id wins when it sends one. */
  model: string;
  capabilities: ModelCapabilities;
  /** From the response headers; else an id the stream carries stands in. */
  requestId: string | null;
}

/** How one answer ended, in the provider's words and ours. */
export interface MessageEnding {
  stopReason: StopReason;
  providerStopReason: string | null;
  usage: Usage | null;
  reasoning: ReasoningBlock[];
}

/**
 * The start and end of one streamed answer.
 * @example
 * const message = new StreamMessage({ provider: "acme", model, capabilities, requestId: null });
 * message.start(out, { model: chunk.model, requestId: chunk.id });
 * out.push({ type: "text_delta", text: "hi" });
 * message.finish(out, { stopReason: "stop", providerStopReason: "stop", usage: null, reasoning: [] });
 * message.assertEnded(); // throws a retryable `stream` error if finish never ran
 */
export class StreamMessage {
  readonly provider: string;
  readonly #model: string;
  readonly #capabilities: ModelCapabilities;
  /** The header's id, else the first one the stream sent; errors name it. */
  requestId: string | null;
  #started = false;
  #ended = false;

  constructor(init: DecoderInit) {
    this.provider = init.provider;
    this.#model = init.model;
    this.#capabilities = init.capabilities;
    this.requestId = init.requestId;
  }

  get started(): boolean {
    return this.#started;
  }

  /** True once `message_end` went out: later frames add nothing. */
  get ended(): boolean {
    return this.#ended;
  }

  /**
   * Sends `message_start` the first time only. `seen` is what the stream says about
   * itself; an id fills in a missing header id, a model id replaces the asked-for one.
   */
  start(out: StreamEvent[], seen?: { model?: string | null; requestId?: string | null }): void {
    if (this.#started) return;
    this.#started = true;
    this.requestId ??= seen?.requestId ?? null;
    out.push({
      type: "message_start",
      provider: this.provider,
      model: seen?.model ?? this.#model,
      requestId: this.requestId,
    });
  }

  /** Sends `message_end` (starting the message first if nothing did) and marks the end. */
  finish(out: StreamEvent[], ending: MessageEnding): void {
    this.start(out);
    this.#ended = true;
    out.push({
      type: "message_end",
      ...ending,
      costEstimate: estimateCost(this.#capabilities, ending.usage),
    });
  }

  /** At end of body: a message that never finished was cut off, worth another try. */
  assertEnded(message = "the stream ended before the response was complete"): void {
    if (this.#ended) return;
    throw new ProviderError({
      provider: this.provider,
      kind: "stream",
      message,
      requestId: this.requestId,
      retryable: true,
    });
  }
}

/** What a provider said about an error it sent inside a 200 stream. */
export interface InStreamError {
  /** The text after "`<provider>` sent an error in the stream: ". */
  detail: string;
  code?: string | null;
  status?: number | null;
  requestId?: string | null;
  retryable: boolean;
  retryAfterMs?: number | null;
  /** Who the message names, when not the provider's configured name. */
  speaker?: string;
}

/**
 * A `stream` error for an error a provider sent inside its stream, worded the same for
 * every vendor so logs and clients read one shape.
 * @example
 * throw inStreamError("acme", { detail: "overloaded", code: "overloaded", retryable: true });
 */
export function inStreamError(provider: string, error: InStreamError): ProviderError {
  return new ProviderError({
    provider,
    kind: "stream",
    message: `${error.speaker ?? provider} sent an error in the stream: ${error.detail}`,
    status: error.status ?? null,
    code: error.code ?? null,
    requestId: error.requestId ?? null,
    retryable: error.retryable,
    retryAfterMs: error.retryAfterMs ?? null,
  });
}

/** A string with something in it, else null (wire fields are often `""` for "none"). */
export function nonEmpty(value: unknown): string | null {
  return typeof value === "string" && value !== "" ? value : null;
}
