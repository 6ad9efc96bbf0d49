/**
 * The one writer of Server-Sent Events frames. Every stream Edgelink serves (the A2A
 * streams of both bindings, the chat view, declared stream endpoints) frames its events
 * here, so they agree byte for byte.
 */

/**
 * One SSE frame: `id:` when given (a client resumes after it with `Last-Event-ID`), then
 * `event:` when given, then the data as a single `data:` line. JSON text never holds a raw
 * line break, so one line always carries the whole value.
 */
export function sseFrame(data: unknown, id?: number, event?: string): string {
  return sseJsonFrame(JSON.stringify(data), id, event);
}

/** `sseFrame` of a value already serialized: `json` is the output of `JSON.stringify`. */
export function sseJsonFrame(json: string, id?: number, event?: string): string {
  return `${id === undefined ? "" : `id: ${id}\n`}${event === undefined ? "" : `event: ${event}\n`}data: ${json}\n\n`;
}

/** An SSE comment line; keeps idle proxies from closing the connection. */
export const SSE_KEEP_ALIVE = ": keep-alive\n\n";

export const SSE_HEADERS = {
  "Content-Type": "text/event-stream; charset=utf-8",
  "Cache-Control": "no-cache, no-transform",
  "X-Accel-Buffering": "no",
} as const;
