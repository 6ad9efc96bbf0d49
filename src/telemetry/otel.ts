import type {
  Context,
  ContextManager,
  Span,
  SpanContext,
  TracerProvider,
  TraceState,
} from "@opentelemetry/api";

/**
 * The few pieces of the OpenTelemetry API Edgelink calls, read from the API's global
 * registry (the one `trace.setGlobalTracerProvider` and `context.setGlobalContextManager`
 * write, under the API's documented global key). The API package itself is imported for
 * its types only: bundled for Workers it resolves to its CommonJS build, which does not
 * tree-shake (about 17 KB gzipped in every agent's Worker, tracing or not). What is
 * here is what that package does for the calls Edgelink makes, and interoperates with
 * any SDK through the same registry and context keys.
 */

/** The registry the API keeps on the global object (its major version 1). */
interface OtelGlobal {
  version?: string;
  trace?: TracerProvider;
  context?: ContextManager;
}

const GLOBAL_KEY = Symbol.for("opentelemetry.js.api.1");

export function otelGlobal(): OtelGlobal | undefined {
  return (globalThis as Record<symbol, OtelGlobal | undefined>)[GLOBAL_KEY];
}

/** The key under which the API keeps a context's span (the same symbol in every copy). */
const SPAN_KEY = Symbol.for("OpenTelemetry Context Key SPAN");

/** An immutable context, as the API's own (values by symbol key). */
class BaseContext implements Context {
  constructor(private readonly values: Map<symbol, unknown> = new Map()) {}
  getValue(key: symbol): unknown {
    return this.values.get(key);
  }
  setValue(key: symbol, value: unknown): Context {
    const values = new Map(this.values);
    values.set(key, value);
    return new BaseContext(values);
  }
  deleteValue(key: symbol): Context {
    const values = new Map(this.values);
    values.delete(key);
    return new BaseContext(values);
  }
}

export const ROOT_CONTEXT: Context = new BaseContext();

/** The active context of a registered context manager (AsyncLocalStorage), else the root. */
export function activeContext(): Context {
  return otelGlobal()?.context?.active() ?? ROOT_CONTEXT;
}

export function getSpan(ctx: Context): Span | undefined {
  return ctx.getValue(SPAN_KEY) as Span | undefined;
}

export function setSpan(ctx: Context, span: Span): Context {
  return ctx.setValue(SPAN_KEY, span);
}

export function getSpanContext(ctx: Context): SpanContext | undefined {
  return getSpan(ctx)?.spanContext();
}

const INVALID_TRACE = "00000000000000000000000000000000";
const INVALID_SPAN = "0000000000000000";

export function isSpanContextValid(span: SpanContext): boolean {
  return (
    /^[0-9a-f]{32}$/i.test(span.traceId) &&
    span.traceId !== INVALID_TRACE &&
    /^[0-9a-f]{16}$/i.test(span.spanId) &&
    span.spanId !== INVALID_SPAN
  );
}

/** A remote parent: a span that only names a place in a trace (the API's NonRecordingSpan). */
class RemoteSpan implements Span {
  constructor(private readonly context: SpanContext) {}
  spanContext(): SpanContext {
    return this.context;
  }
  setAttribute(): this {
    return this;
  }
  setAttributes(): this {
    return this;
  }
  addEvent(): this {
    return this;
  }
  addLink(): this {
    return this;
  }
  addLinks(): this {
    return this;
  }
  setStatus(): this {
    return this;
  }
  updateName(): this {
    return this;
  }
  end(): void {}
  isRecording(): boolean {
    return false;
  }
  recordException(): void {}
}

export function setSpanContext(ctx: Context, span: SpanContext): Context {
  return setSpan(ctx, new RemoteSpan(span));
}

/** A `tracestate` kept as received (W3C: forwarded unchanged by a server that adds nothing). */
class RawTraceState implements TraceState {
  constructor(private readonly raw: string) {}
  set(): TraceState {
    return this;
  }
  unset(): TraceState {
    return this;
  }
  get(key: string): string | undefined {
    for (const member of this.raw.split(",")) {
      const cut = member.indexOf("=");
      if (cut > 0 && member.slice(0, cut).trim() === key) return member.slice(cut + 1).trim();
    }
    return undefined;
  }
  serialize(): string {
    return this.raw;
  }
}

export function createTraceState(raw: string): TraceState {
  return new RawTraceState(raw);
}

/** The API's SpanKind values (a const enum there, so no runtime import is needed). */
export const SpanKind = { INTERNAL: 0, SERVER: 1, CLIENT: 2, PRODUCER: 3, CONSUMER: 4 } as const;
export type SpanKind = (typeof SpanKind)[keyof typeof SpanKind];

/** The API's SpanStatusCode.ERROR. */
export const STATUS_ERROR = 2;

/**
 * Runs `fn` with `ctx` active in a registered context manager (otel-cf-workers registers
 * one, and its `fetch` instrumentation takes the request's `traceparent` from the active
 * context, overriding any set by hand). Without a context manager, or without `ctx`, `fn`
 * runs as it is.
 */
export function inContext<T>(ctx: Context | undefined, fn: () => T): T {
  const manager = ctx ? otelGlobal()?.context : undefined;
  return manager ? manager.with(ctx as Context, fn) : fn();
}
