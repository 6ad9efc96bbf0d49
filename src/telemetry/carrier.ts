import type { Context, SpanContext } from "@opentelemetry/api";
import {
  activeContext,
  createTraceState,
  getSpanContext,
  isSpanContextValid,
  setSpanContext,
} from "./otel";

/**
 * W3C trace context, carried by hand where the platform does not: over Durable Object
 * RPC, in stored rows (a task's run, so that its push deliveries, delegations and a
 * resumed run an hour later stay in its trace), and on outbound requests. A carrier is
 * the `traceparent` value, then a newline and the `tracestate` value when there is one.
 */
export type TraceCarrier = string;

export const TRACEPARENT = "traceparent";
export const TRACESTATE = "tracestate";

/** Longest `tracestate` kept (W3C allows 32 members; longer ones are dropped whole). */
const MAX_TRACESTATE = 512;

const TRACEPARENT_RE = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;
const ZERO_TRACE = "00000000000000000000000000000000";
const ZERO_SPAN = "0000000000000000";

/**
 * The remote span a `traceparent` names, or null when it is not one (any malformed value
 * is ignored, as W3C says: the request is served, in a new trace).
 */
export function parseTraceparent(
  traceparent: string | null | undefined,
  tracestate?: string | null,
): SpanContext | null {
  if (!traceparent || traceparent.length > 128) return null;
  const m = TRACEPARENT_RE.exec(traceparent.trim());
  if (!m) return null;
  const [, version, traceId, spanId, flags, rest] = m;
  if (version === "ff" || (version === "00" && rest !== undefined)) return null;
  if (traceId === ZERO_TRACE || spanId === ZERO_SPAN) return null;
  const span: SpanContext = {
    traceId: traceId as string,
    spanId: spanId as string,
    traceFlags: Number.parseInt(flags as string, 16) & 1,
    isRemote: true,
  };
  if (tracestate && tracestate.length <= MAX_TRACESTATE) {
    span.traceState = createTraceState(tracestate);
  }
  return span;
}

/** The `traceparent` of a context's span, or undefined when it has no valid span. */
export function traceparentOf(ctx: Context): string | undefined {
  const span = getSpanContext(ctx);
  if (!span || !isSpanContextValid(span)) return undefined;
  const flags = (span.traceFlags & 0xff).toString(16).padStart(2, "0");
  return `00-${span.traceId}-${span.spanId}-${flags}`;
}

/** A context's span as a carrier, to send over RPC or store with queued work. */
export function carrierOf(ctx: Context): TraceCarrier | undefined {
  const parent = traceparentOf(ctx);
  if (!parent) return undefined;
  const state = getSpanContext(ctx)?.traceState?.serialize();
  return state ? `${parent}\n${state}` : parent;
}

/** The context a carrier stands for (a remote parent), or undefined for none or garbage. */
export function contextOfCarrier(carrier: TraceCarrier | null | undefined): Context | undefined {
  if (!carrier) return undefined;
  const cut = carrier.indexOf("\n");
  const span =
    cut < 0
      ? parseTraceparent(carrier)
      : parseTraceparent(carrier.slice(0, cut), carrier.slice(cut + 1));
  // On the active context, not the root: a context manager's context may hold what its
  // SDK needs (otel-cf-workers keeps its configuration there).
  return span ? setSpanContext(activeContext(), span) : undefined;
}

/**
 * The parent of a request's server span: the caller's `traceparent` when it sent a valid
 * one, else whatever context is active (a wrapper such as otel-cf-workers may have
 * started a span for the request already; without a context manager this is the root).
 */
export function contextOfRequest(headers: Headers): Context {
  const active = activeContext();
  if (getSpanContext(active)) return active;
  const span = parseTraceparent(headers.get(TRACEPARENT), headers.get(TRACESTATE));
  return span ? setSpanContext(active, span) : active;
}

/** Sets `traceparent` (and `tracestate`) for a context's span on outgoing headers. */
export function injectHeaders(ctx: Context, headers: Record<string, string>): void {
  const parent = traceparentOf(ctx);
  if (!parent) return;
  headers[TRACEPARENT] = parent;
  const state = getSpanContext(ctx)?.traceState?.serialize();
  if (state) headers[TRACESTATE] = state;
}

/** The trace headers of a context's span, or undefined when there is none. */
export function traceHeaders(ctx: Context | undefined): Record<string, string> | undefined {
  if (!ctx) return undefined;
  const headers: Record<string, string> = {};
  injectHeaders(ctx, headers);
  return headers[TRACEPARENT] ? headers : undefined;
}
