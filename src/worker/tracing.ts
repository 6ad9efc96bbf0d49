import type { Context, MiddlewareHandler, Next } from "hono";
import {
  A2A_METHOD_NAME,
  A2A_PROTOCOL_VERSION,
  A2A_TASK_ID,
  A2A_TASK_STATE,
  activeTracer,
  contextOfRequest,
  ERROR_TYPE,
  HTTP_REQUEST_METHOD,
  HTTP_RESPONSE_STATUS_CODE,
  HTTP_ROUTE,
  SpanKind,
  STATUS_ERROR,
  startSpan,
  type Traced,
} from "../telemetry";
import { routeOf } from "./route-table";

/** The server span of each request being served, by its Request (no Hono variable type). */
const spans = new WeakMap<Request, Traced>();

/** The server span of a request, when tracing is on. */
export function requestTrace(request: Request): Traced | undefined {
  return spans.get(request);
}

/**
 * One SERVER span per request to a route of the table that declares `trace: true` (none
 * for a route declaring `false`), under the caller's `traceparent` (or the span a wrapper
 * such as otel-cf-workers opened), named after the route: `GET /tasks/:id`, its pattern in
 * `http.route`. An A2A operation renames it once known (`nameOperation`). Installed before
 * every guard, so it covers their refusals. With no tracer registered it is one lookup and
 * `next()`.
 */
export function traceRequests(
  attributes: Record<string, string> = {},
  /** Run first for every request (the open-agent warning): one layer instead of two. */
  first?: (url: string) => void,
): MiddlewareHandler {
  // Not async: untraced, a request passes through without a promise of this layer's own.
  return (c, next) => {
    first?.(c.req.url);
    if (!activeTracer()) return next();
    const route = routeOf(c);
    return route?.entry.guards.trace ? serveTraced(attributes, route.pattern, c, next) : next();
  };
}

async function serveTraced(
  attributes: Record<string, string>,
  pattern: string,
  c: Context,
  next: Next,
): Promise<void> {
  const request = c.req.raw;
  const traced = startSpan(
    `${request.method} ${pattern}`,
    SpanKind.SERVER,
    contextOfRequest(request.headers),
    { ...attributes, [HTTP_REQUEST_METHOD]: request.method, [HTTP_ROUTE]: pattern },
  ) as Traced;
  spans.set(request, traced);
  try {
    await next();
  } catch (error) {
    traced.span.setAttribute(ERROR_TYPE, error instanceof Error ? error.name : "_OTHER");
    traced.span.setStatus({ code: STATUS_ERROR });
    traced.span.end();
    throw error;
  }
  const status = c.res.status;
  traced.span.setAttribute(HTTP_RESPONSE_STATUS_CODE, status);
  if (status >= 500) {
    traced.span.setAttribute(ERROR_TYPE, String(status));
    traced.span.setStatus({ code: STATUS_ERROR });
  }
  traced.span.end();
}

/**
 * Names a request's server span after the A2A operation it turned out to be: its v1 method
 * name, or `details.method` (the JSON-RPC method as sent); the span's own name when it is
 * not the method's (the chat endpoint's `chat stream` and `chat subscribe`).
 */
export function nameOperation(
  traced: Traced | undefined,
  operation: string,
  details: { method?: string; version?: string; spanName?: string },
): void {
  if (!traced) return;
  const method = details.method ?? operation;
  traced.span.updateName(details.spanName ?? method);
  traced.span.setAttribute(A2A_METHOD_NAME, method);
  if (details.version) traced.span.setAttribute(A2A_PROTOCOL_VERSION, details.version);
}

const STATE_RE = /"state":"([A-Za-z_-]+)"/;

/** `a2a.task.state` from a rendered result (only read when tracing is on). */
export function stateOfRendered(traced: Traced | undefined, rendered: string): void {
  if (!traced) return;
  const state = STATE_RE.exec(rendered)?.[1];
  if (state) traced.span.setAttribute(A2A_TASK_STATE, state);
}

/**
 * `a2a.task.id` of a new task, from the text the object answered: the Worker sealed the
 * id's first part (`sealed`), and the object added the task's key (see task-keys.ts), so
 * the id is known only once the object has answered.
 */
export function newTaskIdOfRendered(traced: Traced | undefined, rendered: string, sealed: string) {
  if (!traced) return;
  const at = rendered.indexOf(`"${sealed}.`);
  if (at < 0) return;
  const end = rendered.indexOf('"', at + 1);
  if (end > at) traced.span.setAttribute(A2A_TASK_ID, rendered.slice(at + 1, end));
}

/**
 * The same for a streamed answer: its first chunk (the new task, written as the object
 * admits it) is read before the stream is handed on unchanged. Only while tracing.
 */
export async function newTaskIdOfStream(
  traced: Traced | undefined,
  stream: ReadableStream<Uint8Array>,
  sealed: string,
): Promise<ReadableStream<Uint8Array>> {
  if (!traced) return stream;
  const reader = stream.getReader();
  const first = await reader.read();
  if (first.value) {
    newTaskIdOfRendered(traced, new TextDecoder().decode(first.value), sealed);
  }
  return new ReadableStream<Uint8Array>({
    start(controller) {
      if (first.done) controller.close();
      else controller.enqueue(first.value);
    },
    async pull(controller) {
      const next = await reader.read();
      if (next.done) controller.close();
      else controller.enqueue(next.value);
    },
    cancel: (reason) => reader.cancel(reason),
  });
}
