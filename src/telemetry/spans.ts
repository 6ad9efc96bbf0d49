import type { Attributes, Context, Span, SpanOptions } from "@opentelemetry/api";
import { A2AError } from "../protocol/errors";
import {
  ERROR_TYPE,
  GEN_AI_CONVERSATION_ID,
  GEN_AI_OPERATION_NAME,
  OP_SEARCH_MEMORY,
  OP_UPDATE_MEMORY,
} from "./attributes";
import { errorText, stackFrames } from "./log";
import { activeContext, SpanKind, STATUS_ERROR, setSpan } from "./otel";
import { activeTracer } from "./tracer";

/** A started span and the context that makes it the parent of what runs inside it. */
export interface Traced {
  span: Span;
  ctx: Context;
}

export { SpanKind };

/**
 * Starts a span under `parent` (else the active context), or returns undefined while no
 * tracer provider is registered. Callers build attributes only once this answered.
 */
export function startSpan(
  name: string,
  kind: SpanKind,
  parent: Context | undefined,
  attributes?: Attributes,
): Traced | undefined {
  const tracer = activeTracer();
  if (!tracer) return undefined;
  const base = parent ?? activeContext();
  const span = tracer.startSpan(name, { kind, attributes } as SpanOptions, base);
  return { span, ctx: setSpan(base, span) };
}

/**
 * `error.type` for an error: low cardinality, as the conventions ask. A provider's HTTP
 * status, a protocol error's kind, a provider error's kind, else the error's class name.
 */
export function errorTypeOf(error: unknown): string {
  if (error instanceof A2AError) return error.kind;
  if (error instanceof Error) {
    const { status, kind } = error as Error & { status?: unknown; kind?: unknown };
    if (typeof status === "number" && status > 0) return String(status);
    if (typeof kind === "string" && kind) return kind;
    if (error.name === "TimeoutError" || error.name === "AbortError") return error.name;
    return error.name || "Error";
  }
  return "_OTHER";
}

/**
 * Marks a span failed: status ERROR, `error.type`, the exception event. The message is
 * what a log line would say of the error (`errorText`): content only with the opt-in,
 * credentials masked; the exception's stack is its frames, without the message.
 */
export function failSpan(span: Span, error: unknown, type = errorTypeOf(error)): void {
  span.setAttribute(ERROR_TYPE, type);
  const message = errorText(error, type);
  span.setStatus({ code: STATUS_ERROR, message });
  if (error instanceof Error) {
    span.recordException({ name: error.name, message, stack: stackFrames(error).join("\n") });
  }
}

/** Ends a span, failed when `error` is given. */
export function endSpan(traced: Traced | undefined, error?: unknown): void {
  if (!traced) return;
  if (error !== undefined) failSpan(traced.span, error);
  traced.span.end();
}

/**
 * Runs `fn` inside a span (a failure marks it an error and is thrown on). With no tracer
 * registered `fn` runs with undefined and nothing is allocated for the span.
 */
export async function inSpan<T>(
  name: string,
  kind: SpanKind,
  parent: Context | undefined,
  attributes: (() => Attributes) | undefined,
  fn: (traced: Traced | undefined) => Promise<T>,
): Promise<T> {
  if (!activeTracer()) return fn(undefined);
  const traced = startSpan(name, kind, parent, attributes?.());
  try {
    const result = await fn(traced);
    endSpan(traced);
    return result;
  } catch (error) {
    endSpan(traced, error);
    throw error;
  }
}

/**
 * A span for a memory recall (`search_memory`) or extraction (`update_memory`) around
 * `fn`, under a task's trace (`traceContextOf(ctx)`), as the GenAI conventions name
 * memory operations. For Edgelink's memory (internal: src/telemetry).
 * @example
 * ```ts
 * import { traceContextOf, traceMemory } from "./";
 * const facts = await traceMemory("recall", traceContextOf(ctx), ctx.contextId, () =>
 *   store.recall(query),
 * );
 * ```
 */
export function traceMemory<T>(
  operation: "recall" | "extract",
  parent: Context | undefined,
  conversationId: string | undefined,
  fn: () => Promise<T>,
  attributes?: Attributes,
): Promise<T> {
  const op = operation === "recall" ? OP_SEARCH_MEMORY : OP_UPDATE_MEMORY;
  return inSpan(
    op,
    SpanKind.INTERNAL,
    parent,
    () => ({
      [GEN_AI_OPERATION_NAME]: op,
      ...(conversationId ? { [GEN_AI_CONVERSATION_ID]: conversationId } : {}),
      ...attributes,
    }),
    () => fn(),
  );
}
