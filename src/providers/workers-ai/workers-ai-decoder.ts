import { isObject } from "../base/http";
import { type Frame, parseFrame, parseLoose, type StreamDecoder } from "../base/sse";
import type { StreamEvent } from "../base/types";
import {
  ChatCompletionsDecoder,
  type ChatDecoderInit,
  chatUsage,
} from "../openai/openai-chat-decoder";

/**
 * Decodes the SSE stream of `env.AI.run(model, { stream: true })`. It comes in two shapes,
 * both ending with `data: [DONE]`, and this one decoder takes both:
 *
 * - native chunks `{"response":"tok","p":"<padding>"}`, tool calls as a `tool_calls` list
 *   (`{name, arguments:{...}}` with no id, or OpenAI-style entries, maybe closed by an
 *   entry with no name that carries nothing), and last `{"response":"","usage":{...}}`;
 * - OpenAI chunks (newer models): `choices[].delta` with `content`, `reasoning_content` or
 *   `reasoning`, an increment of `usage` (with `neurons`) on every chunk, a `choices:[]`
 *   chunk, then the native cumulative usage chunk.
 *
 * Only a native `usage` is taken, and it replaces the one before: it is cumulative, while
 * the OpenAI-style ones are increments that must not be added up or mistaken for a total.
 */
export class WorkersAiDecoder implements StreamDecoder {
  readonly #provider: string;
  readonly #chat: ChatCompletionsDecoder;
  readonly #errorOf: (payload: unknown) => Error;

  /** `errorOf` turns an error sent inside the stream into what gets thrown. */
  constructor(init: ChatDecoderInit, errorOf: (payload: unknown) => Error) {
    this.#provider = init.provider;
    this.#chat = new ChatCompletionsDecoder(init);
    this.#errorOf = errorOf;
  }

  frame(frame: Frame, out: StreamEvent[]): void {
    const data = frame.data.trim();
    if (data === "[DONE]") {
      this.#chat.done(out);
      return;
    }
    if (this.#chat.ended || data === "") return;
    if (frame.event === "error") throw this.#errorOf(parseLoose(data));
    this.chunk(parseFrame<unknown>(this.#provider, data), out);
  }

  /** One parsed chunk of either shape; a whole non-streamed result is one native chunk. */
  chunk(chunk: unknown, out: StreamEvent[]): void {
    if (this.#chat.ended || !isObject(chunk)) return;
    if (chunk.error != null || (Array.isArray(chunk.errors) && chunk.errors.length > 0)) {
      throw this.#errorOf(chunk);
    }
    if (Array.isArray(chunk.choices)) {
      const { usage: _increment, ...rest } = chunk;
      this.#chat.chunk(rest, out);
      return;
    }
    const response = chunk.response;
    if (typeof response === "string") this.#chat.text(response, out);
    // JSON mode answers with the object itself.
    else if (response != null && typeof response === "object") {
      this.#chat.text(JSON.stringify(response), out);
    }
    if (Array.isArray(chunk.tool_calls)) {
      chunk.tool_calls.forEach((call, position) => {
        if (isObject(call)) this.#chat.toolCall(call, position, out);
      });
    }
    const usage = chatUsage(chunk.usage);
    if (usage) this.#chat.setUsage(usage, out);
  }

  /** The end of a result that was not streamed. */
  done(out: StreamEvent[]): void {
    this.#chat.done(out);
  }

  end(out: StreamEvent[]): void {
    this.#chat.end(out);
  }
}
