import { createParser } from "eventsource-parser";

/** One Server-Sent Event: its `id:` (what `Last-Event-ID` resumes from) and `data:`. */
export interface SseMessage {
  id: string | undefined;
  data: string;
}

/** Largest event accepted: a peer cannot make the client buffer without bound. */
export const MAX_EVENT_BYTES = 16 * 1024 * 1024;

/**
 * Reads an SSE body event by event. Network errors while reading propagate to the
 * caller (that is how a dropped connection is seen); leaving the loop early cancels the
 * body. Comments (keep-alives) are skipped.
 */
export async function* readSse(body: ReadableStream<Uint8Array>): AsyncGenerator<SseMessage> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let queue: SseMessage[] = [];
  let pending = 0;
  const parser = createParser({
    onEvent: (event) => {
      queue.push({ id: event.id, data: event.data });
    },
  });
  let done = false;
  try {
    for (;;) {
      const { done: end, value } = await reader.read();
      if (end) break;
      pending += value.byteLength;
      parser.feed(decoder.decode(value, { stream: true }));
      if (queue.length) pending = 0;
      if (pending > MAX_EVENT_BYTES) {
        throw new Error(`an SSE event exceeded ${MAX_EVENT_BYTES} bytes`);
      }
      const batch = queue;
      queue = [];
      yield* batch;
    }
    // An event cut off by the end of the body is dropped, as the SSE spec says: it may
    // be half of what the agent sent.
    parser.feed(decoder.decode());
    done = true;
    yield* queue;
  } finally {
    if (!done) reader.cancel().catch(() => {});
    reader.releaseLock();
  }
}
