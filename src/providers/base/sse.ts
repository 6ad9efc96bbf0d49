import { createParser } from "eventsource-parser";
import { asProviderError, ProviderError } from "./errors";
import type { StreamEvent } from "./types";

/**
 * Turns a provider's response body into batches of normalized events: bytes → text (one
 * streaming `TextDecoder`, so a character split across network chunks survives) → frames
 * (SSE events, or the elements of a JSON array) → the adapter's decoder. One batch per
 * network read, so a consumer writes once per read instead of once per token.
 */

/** Splits text into frames; SSE by default, Gemini's JSON-array streams have their own. */
export interface Framer {
  feed(text: string): void;
  /** The body ended: deliver what is still buffered. */
  flush(): void;
}

/** A frame handed to a decoder: the SSE `data` and `event` fields. */
export interface Frame {
  data: string;
  event: string | undefined;
}

/**
 * An adapter's wire decoder. `frame` turns one frame into normalized events (throwing a
 * `ProviderError` for an error sent inside the stream); `end` runs at end of body and
 * throws when the stream stopped before its terminator.
 */
export interface StreamDecoder {
  frame(frame: Frame, out: StreamEvent[]): void;
  end(out: StreamEvent[]): void;
}

/** SSE framing per the HTML spec (comments, multi-line data, CR/LF/CRLF, no final blank line). */
export function sseFramer(onFrame: (frame: Frame) => void): Framer {
  const parser = createParser({
    onEvent: (message) => onFrame({ data: message.data, event: message.event }),
  });
  return {
    feed: (text) => parser.feed(text),
    // `reset({ consume: true })` parses a last unterminated line but never dispatches its
    // event; a blank line does (bodies recorded from Anthropic's SDK end without one).
    flush: () => {
      parser.feed("\n\n");
      parser.reset();
    },
  };
}

export interface ReadOptions {
  provider: string;
  signal?: AbortSignal | undefined;
  /** No bytes for this long → a `timeout` error (the stall watchdog). 0 disables it. */
  stallMs: number;
  /** Makes a framer for this body; SSE when omitted. */
  framer?: (onFrame: (frame: Frame) => void) => Framer;
  /** Attach each frame's payload to the events decoded from it (`CallOptions.raw`). */
  raw?: boolean | undefined;
}

/**
 * Reads a body to the end, yielding the events each network read produced.
 * Aborting the signal cancels the body at once and throws an `aborted` error.
 */
export function decodeBody(
  body: ReadableStream<Uint8Array>,
  decoder: StreamDecoder,
  options: ReadOptions,
): AsyncGenerator<StreamEvent[]> {
  return decodeOpened(() => Promise.resolve({ body, decoder }), options);
}

/** A response body and the decoder for it. */
export interface OpenedBody {
  body: ReadableStream<Uint8Array>;
  decoder: StreamDecoder;
}

/**
 * `decodeBody` of a body opened by the first read (`open` sends the request): an adapter
 * returns this generator itself rather than a generator of its own delegating to
 * `decodeBody` with `yield*`, which cost one more async-generator hop (promises and
 * microtask turns) per batch.
 */
export async function* decodeOpened(
  open: () => Promise<OpenedBody>,
  options: ReadOptions,
): AsyncGenerator<StreamEvent[]> {
  const { body, decoder } = await open();
  const reader = body.getReader();
  const watch = watchdog(options);
  const text = new TextDecoder();
  let out: StreamEvent[] = [];
  /** With `raw`: the last frame, for events decoded at end of body (Gemini's end). */
  let last: { data: string; payload?: unknown } | null = null;
  const onFrame = options.raw
    ? (frame: Frame) => {
        const from = out.length;
        last = { data: frame.data };
        decoder.frame(frame, out);
        attachRaw(out, from, last);
      }
    : (frame: Frame) => decoder.frame(frame, out);
  const framer = (options.framer ?? sseFramer)(onFrame);
  let done = false;
  try {
    for (;;) {
      const chunk = await watch.read(reader);
      if (chunk === null) break;
      const failure = settle(() => framer.feed(text.decode(chunk, { stream: true })));
      if (out.length) {
        const batch = out;
        out = [];
        yield batch;
      }
      // Events decoded before an in-stream error still reach the consumer, so what a
      // client saw does not depend on where the network split the bytes.
      if (failure) throw failure.error;
    }
    const failure = settle(() => {
      const tail = text.decode();
      if (tail) framer.feed(tail);
      framer.flush();
      const from = out.length;
      decoder.end(out);
      if (last !== null) attachRaw(out, from, last);
    });
    done = failure === null;
    if (out.length) yield out;
    if (failure) throw failure.error;
  } finally {
    watch.dispose();
    // A consumer that stops early (or an error) must not leave the upstream open.
    if (!done) reader.cancel().catch(() => {});
    reader.releaseLock();
  }
}

/** Runs `fn`, returning what it threw (boxed, so a thrown `undefined` still counts). */
function settle(fn: () => void): { error: unknown } | null {
  try {
    fn();
    return null;
  } catch (error) {
    return { error };
  }
}

/**
 * The stall watchdog and the abort signal of one body. Armed once per body, not per read
 * (a timer, a listener, a guard promise and a `Promise.race` per network read were most
 * of a short stream's reading cost): the one timer, when it fires, measures how long the
 * pending read has waited and sleeps the rest if that is under `stallMs`, so a stall is
 * still "no bytes for `stallMs` while reading" (the consumer's time between reads does
 * not count, and no timer runs between reads). A stall or an abort rejects the pending
 * read at once; the caller cancels the body.
 */
function watchdog(options: ReadOptions) {
  const { signal, stallMs, provider } = options;
  /** When the pending read started; null between reads. */
  let waitingSince: number | null = null;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let rejectRead: ((error: unknown) => void) | null = null;
  const check = () => {
    timer = undefined;
    if (waitingSince === null) return;
    const waited = Date.now() - waitingSince;
    if (waited < stallMs) {
      timer = setTimeout(check, stallMs - waited);
      return;
    }
    rejectRead?.(
      new ProviderError({
        provider,
        kind: "timeout",
        message: `the stream stalled: no bytes for ${stallMs} ms`,
      }),
    );
  };
  const onAbort = () => {
    if (signal) rejectRead?.(aborted(provider, signal));
  };
  signal?.addEventListener("abort", onAbort, { once: true });
  return {
    /** One `read()`, failed early by a stall or an abort. */
    read(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<Uint8Array | null> {
      if (signal?.aborted) return Promise.reject(aborted(provider, signal));
      if (stallMs > 0 && timer === undefined) timer = setTimeout(check, stallMs);
      waitingSince = Date.now();
      return new Promise<Uint8Array | null>((resolve, reject) => {
        // Whichever comes first settles this read; a read resolving after a stall or an
        // abort is ignored.
        let open = true;
        const settle = (outcome: () => void) => {
          if (!open) return;
          open = false;
          waitingSince = null;
          rejectRead = null;
          outcome();
        };
        rejectRead = (error) => settle(() => reject(error));
        reader.read().then(
          (result) => settle(() => resolve(result.done ? null : result.value)),
          (error) => settle(() => reject(asProviderError(provider, error, signal))),
        );
      });
    },
    dispose(): void {
      if (timer !== undefined) clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
    },
  };
}

function aborted(provider: string, signal: AbortSignal): ProviderError {
  return new ProviderError({
    provider,
    kind: "aborted",
    message: "the call was canceled",
    cause: signal.reason,
  });
}

/** Sets `raw` on the events from `from` on; a frame is parsed once, and only if it is used. */
function attachRaw(
  out: StreamEvent[],
  from: number,
  frame: { data: string; payload?: unknown },
): void {
  if (out.length === from) return;
  if (!("payload" in frame)) frame.payload = parseLoose(frame.data);
  for (let i = from; i < out.length; i++) (out[i] as StreamEvent).raw = frame.payload;
}

/**
 * A frame's data parsed as JSON, or the text itself when it is not JSON (`[DONE]`, an
 * error event's plain message).
 */
export function parseLoose(data: string): unknown {
  try {
    return JSON.parse(data);
  } catch {
    return data;
  }
}

/** Parses a frame's JSON, or throws a `stream` error naming the provider. */
export function parseFrame<T = Record<string, unknown>>(provider: string, data: string): T {
  try {
    return JSON.parse(data) as T;
  } catch {
    throw new ProviderError({
      provider,
      kind: "stream",
      message: `the stream sent data that is not JSON: ${data.slice(0, 200)}`,
    });
  }
}
