import { ToolCallAssembler } from "../base/assemble";
import { type DecoderInit, inStreamError, nonEmpty, StreamMessage } from "../base/decoder";
import { ProviderError } from "../base/errors";
import { errorFields, isObject } from "../base/http";
import { type Frame, parseFrame, type StreamDecoder } from "../base/sse";
import {
  type ModelCapabilities,
  type ReasoningBlock,
  type StopReason,
  type StreamEvent,
  type Usage,
  usage,
} from "../base/types";
import { StreamedArgs } from "./gemini-partial-args";

/**
 * Gemini `GenerateContentResponse` chunks → normalized events. The same decoder reads SSE
 * frames (`alt=sse`), the elements of a JSON-array stream and a non-streaming
 * `generateContent` answer, since all three carry the same objects.
 *
 * Gemini has no end-of-stream sentinel: the body ends after the chunk with a
 * `finishReason`. A body that ends without one was cut off and fails with a `stream`
 * error. Usage is cumulative on every chunk, so the last one wins.
 * @example
 * const decoder = new GeminiDecoder({ provider: "gemini", model, capabilities, requestId: null });
 * yield* decodeBody(response.body, decoder, { provider: "gemini", stallMs: 60_000 });
 */
export class GeminiDecoder implements StreamDecoder {
  readonly #message: StreamMessage;
  readonly #assembler = new ToolCallAssembler();
  readonly #reasoning: ReasoningBlock[] = [];
  #nextIndex = 0;
  #streamed: { index: number; args: StreamedArgs } | null = null;
  #finishReason: string | null = null;
  #blockReason: string | null = null;
  #usage: Usage | null = null;

  constructor(init: DecoderInit) {
    this.#message = new StreamMessage(init);
  }

  frame(frame: Frame, out: StreamEvent[]): void {
    const chunk = parseFrame<unknown>(this.#message.provider, frame.data);
    if (!isObject(chunk)) {
      throw new ProviderError({
        provider: this.#message.provider,
        kind: "stream",
        message: `the stream sent something that is not a response chunk: ${frame.data.slice(0, 200)}`,
      });
    }
    if (chunk.error !== undefined) throw this.#streamError(frame.data, chunk.error);
    // Gemini's chunks name the model version, not the model asked for; the asked one stays.
    this.#message.start(out, {
      requestId: typeof chunk.responseId === "string" ? chunk.responseId : null,
    });
    const feedback = chunk.promptFeedback;
    if (isObject(feedback) && typeof feedback.blockReason === "string") {
      this.#blockReason = feedback.blockReason;
    }
    const candidate = Array.isArray(chunk.candidates)
      ? chunk.candidates.find((c) => isObject(c) && (c.index ?? 0) === 0)
      : undefined;
    if (isObject(candidate)) this.#candidate(candidate, out);
    this.#readUsage(chunk.usageMetadata, out);
  }

  end(out: StreamEvent[]): void {
    if (this.#finishReason === null && this.#blockReason === null) {
      this.#message.assertEnded("the stream ended before Gemini sent a finishReason");
    }
    this.#endStreamed(out);
    this.#assembler.end(out);
    this.#message.finish(out, {
      stopReason: stopReasonOf(
        this.#finishReason,
        this.#blockReason,
        this.#assembler.startedCount > 0,
      ),
      providerStopReason: this.#finishReason ?? this.#blockReason,
      usage: this.#usage,
      reasoning: this.#reasoning,
    });
  }

  #candidate(candidate: Record<string, unknown>, out: StreamEvent[]): void {
    const content = candidate.content;
    const parts = isObject(content) && Array.isArray(content.parts) ? content.parts : [];
    for (const part of parts) if (isObject(part)) this.#part(part, out);
    if (typeof candidate.finishReason === "string") {
      this.#finishReason = candidate.finishReason;
      // Nothing follows a finish reason; a streamed call still open is complete.
      this.#endStreamed(out);
    }
  }

  #part(part: Record<string, unknown>, out: StreamEvent[]): void {
    const signature = nonEmpty(part.thoughtSignature) ?? undefined;
    if (isObject(part.functionCall)) {
      this.#functionCall(part.functionCall, signature, out);
      return;
    }
    if (typeof part.text === "string" && part.text !== "") {
      out.push(
        part.thought === true
          ? { type: "reasoning_delta", text: part.text }
          : { type: "text_delta", text: part.text },
      );
    }
    // A signature on a text (or empty) part belongs to the turn; it must be sent back
    // with the model's answer next time.
    if (signature !== undefined) {
      this.#reasoning.push({ provider: "gemini", text: "", signature });
    }
  }

  /**
   * A whole call (`{name, args, id?}`), or a streamed one: `{name, willContinue: true}`,
   * then pieces `{partialArgs, willContinue: true}`, then an empty `{}` that closes it.
   */
  #functionCall(
    call: Record<string, unknown>,
    signature: string | undefined,
    out: StreamEvent[],
  ): void {
    const name = nonEmpty(call.name);
    const pieces = Array.isArray(call.partialArgs) ? call.partialArgs : null;
    const more = call.willContinue === true;
    if (name === null) {
      const open = this.#streamed;
      if (!open) return;
      if (signature) this.#assembler.setMetadata(open.index, { thoughtSignature: signature });
      if (pieces) this.#assembler.delta(open.index, open.args.apply(pieces), out);
      if (!more) this.#endStreamed(out);
      return;
    }
    this.#endStreamed(out);
    const index = this.#nextIndex++;
    this.#assembler.start(index, nonEmpty(call.id), name, out);
    if (signature) this.#assembler.setMetadata(index, { thoughtSignature: signature });
    if (more || pieces) {
      const args = new StreamedArgs();
      this.#streamed = { index, args };
      if (pieces) this.#assembler.delta(index, args.apply(pieces), out);
      if (!more) this.#endStreamed(out);
      return;
    }
    this.#assembler.delta(index, JSON.stringify(isObject(call.args) ? call.args : {}), out);
    this.#assembler.end(out, index);
  }

  #endStreamed(out: StreamEvent[]): void {
    const open = this.#streamed;
    if (!open) return;
    this.#streamed = null;
    this.#assembler.delta(open.index, open.args.finish(), out);
    const ended: StreamEvent[] = [];
    this.#assembler.end(ended, open.index);
    for (const event of ended) {
      if (event.type === "tool_call_end" && event.call.arguments !== open.args.arguments) {
        // Pieces came out of order, so the streamed text is off; the call must not be.
        event.call.arguments = open.args.arguments;
        event.call.input = open.args.value;
      }
      out.push(event);
    }
  }

  #readUsage(metadata: unknown, out: StreamEvent[]): void {
    const next = usageOf(metadata);
    if (next === null) return;
    const previous = this.#usage;
    this.#usage = next;
    if (!previous || JSON.stringify(previous) !== JSON.stringify(next)) {
      out.push({ type: "usage", usage: next });
    }
  }

  #streamError(data: string, error: unknown): ProviderError {
    const fields = errorFields(data);
    const status = isObject(error) && typeof error.code === "number" ? error.code : null;
    const code = fields.code;
    return inStreamError(this.#message.provider, {
      speaker: "gemini",
      detail: fields.message ?? data.slice(0, 300),
      status,
      code,
      requestId: this.#message.requestId,
      retryable:
        (code !== null && RETRYABLE_STATUSES.has(code)) ||
        (status !== null && (status === 429 || status >= 500)),
      retryAfterMs: fields.retryAfterMs,
    });
  }
}

/** Google RPC statuses worth trying again: overload, quota, transient server faults. */
const RETRYABLE_STATUSES = new Set([
  "RESOURCE_EXHAUSTED",
  "UNAVAILABLE",
  "INTERNAL",
  "DEADLINE_EXCEEDED",
]);

const FILTERED = new Set([
  "SAFETY",
  "RECITATION",
  "PROHIBITED_CONTENT",
  "BLOCKLIST",
  "SPII",
  "IMAGE_SAFETY",
  "IMAGE_PROHIBITED_CONTENT",
  "IMAGE_RECITATION",
]);

/** The model's call could not be used: a malformed or unexpected function call. */
const FAILED = new Set(["MALFORMED_FUNCTION_CALL", "UNEXPECTED_TOOL_CALL", "TOO_MANY_TOOL_CALLS"]);

/**
 * Gemini's finish reason normalized. Gemini says STOP after function calls too, so a
 * turn that made calls is `tool_calls`. A prompt blocked before any answer is
 * `content_filter`.
 */
export function stopReasonOf(
  finishReason: string | null,
  blockReason: string | null,
  madeCalls: boolean,
): StopReason {
  if (finishReason === null) return blockReason === null ? "other" : "content_filter";
  if (finishReason === "STOP") return madeCalls ? "tool_calls" : "stop";
  if (finishReason === "MAX_TOKENS") return "length";
  if (FILTERED.has(finishReason)) return "content_filter";
  if (FAILED.has(finishReason)) return "error";
  return "other";
}

/**
 * `usageMetadata` → usage. Thinking is billed as output, so it is counted in
 * `completionTokens` and reported as `reasoningTokens`; tool-use prompt tokens are input.
 * `null` when the object has no counts (early chunks may carry only `trafficType`).
 */
export function usageOf(metadata: unknown): Usage | null {
  if (!isObject(metadata)) return null;
  const count = (key: string) => {
    const value = metadata[key];
    return typeof value === "number" && Number.isFinite(value) ? value : undefined;
  };
  const prompt = count("promptTokenCount");
  const toolPrompt = count("toolUsePromptTokenCount");
  const candidates = count("candidatesTokenCount");
  const thoughts = count("thoughtsTokenCount");
  const total = count("totalTokenCount");
  if ([prompt, toolPrompt, candidates, thoughts, total].every((v) => v === undefined)) return null;
  return usage({
    promptTokens: (prompt ?? 0) + (toolPrompt ?? 0),
    completionTokens: (candidates ?? 0) + (thoughts ?? 0),
    totalTokens: total,
    reasoningTokens: thoughts,
    cachedPromptTokens: count("cachedContentTokenCount"),
  });
}

/**
 * Decodes a non-streaming `generateContent` answer (a `GenerateContentResponse` object or
 * its JSON text) into the same events a stream gives.
 * @example
 * const events = decodeGenerateContent(await response.json(), {
 *   model: "gemini-2.5-flash",
 *   capabilities: capabilitiesFor("gemini-2.5-flash"),
 * });
 */
export function decodeGenerateContent(
  body: unknown,
  init: {
    model: string;
    capabilities: ModelCapabilities;
    requestId?: string | null;
    provider?: string;
  },
): StreamEvent[] {
  const decoder = new GeminiDecoder({
    provider: init.provider ?? "gemini",
    model: init.model,
    capabilities: init.capabilities,
    requestId: init.requestId ?? null,
  });
  const out: StreamEvent[] = [];
  const data = typeof body === "string" ? body : JSON.stringify(body);
  decoder.frame({ data, event: undefined }, out);
  decoder.end(out);
  return out;
}
