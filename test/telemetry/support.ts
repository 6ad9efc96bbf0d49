/** What the trace tests share: an in-memory span recorder, callers' traces, span lookups. */
import { env } from "cloudflare:test";
import { trace } from "@opentelemetry/api";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { afterAll, beforeAll } from "vitest";
import { contextObjectName } from "../../src/storage/ids";

/**
 * Registers an SDK tracer provider exporting to memory for the calling file's tests (and
 * removes it after them). `register` sets it again, after a test that removed it.
 */
export function recordSpans() {
  const exporter = new InMemorySpanExporter();
  const register = () =>
    trace.setGlobalTracerProvider(
      new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }),
    );
  beforeAll(register);
  afterAll(() => {
    trace.disable();
  });
  const spansOf = (traceId: string) =>
    exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === traceId);
  return { exporter, register, spansOf };
}

/** The conversation object of a context of the default tenant, anonymous. */
export const stubOf = (contextId: string) => {
  const ns = env.EDGELINK_CONTEXT;
  return ns.get(ns.idFromName(contextObjectName("", contextId)));
};

/** `n` random bytes, as hex. */
export const hex = (n: number) =>
  Array.from(crypto.getRandomValues(new Uint8Array(n)), (b) =>
    b.toString(16).padStart(2, "0"),
  ).join("");

/** A caller's trace: its id and the `traceparent` that names its span. */
export function callerTrace() {
  const traceId = hex(16);
  const spanId = hex(8);
  return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-01` };
}

export const parentOf = (span: ReadableSpan | undefined) => span?.parentSpanContext?.spanId;
