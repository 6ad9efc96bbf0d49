import type { Context, Tracer, TracerProvider } from "@opentelemetry/api";
import { SCHEMA_URL } from "./attributes";
import { otelGlobal } from "./otel";

/** The instrumentation scope of every Edgelink span. */
export const TRACER_NAME = "edgelink";

let seen: TracerProvider | undefined;
let tracer: Tracer | undefined;

/**
 * Edgelink's tracer, or undefined while no tracer provider is registered. Every hook asks
 * this first and does nothing more when it is undefined, so an agent without tracing
 * pays one global lookup per hook and allocates nothing. The answer follows the
 * registration (a provider registered later, or removed, is seen at the next call).
 */
export function activeTracer(): Tracer | undefined {
  // `trace.setGlobalTracerProvider` registers the provider here; `trace.disable` removes it.
  const provider = otelGlobal()?.trace;
  if (provider !== seen) {
    seen = provider;
    tracer = provider?.getTracer(TRACER_NAME, undefined, { schemaUrl: SCHEMA_URL });
  }
  return tracer;
}

/** Where a task's run keeps its trace context (not a public property of the run). */
export const TRACE_CONTEXT: unique symbol = Symbol.for("edgelink.traceContext");

/** Something that may carry a trace context: a task's run. */
export interface TraceHolder {
  [TRACE_CONTEXT]?: Context;
}

/**
 * The trace context of a task's run (its `invoke_agent` span), for spans of your own
 * under it; undefined while tracing is off.
 * @example
 * ```ts
 * import { traceContextOf } from "./";
 * const parent = traceContextOf(ctx); // a RunContext; pass to tracer.startSpan(name, {}, parent)
 * ```
 */
export function traceContextOf(holder: object): Context | undefined {
  return (holder as TraceHolder)[TRACE_CONTEXT];
}
