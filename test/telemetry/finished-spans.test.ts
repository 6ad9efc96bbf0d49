import type { SpanContext } from "@opentelemetry/api";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
} from "@opentelemetry/sdk-trace-base";
import { describe, expect, it } from "vitest";
import {
  type FinishedSpan,
  type FinishedSpanExporter,
  FinishedSpanProcessor,
  type SpanExportResult,
} from "../../src/telemetry/finished-spans";

/** An SDK tracer whose spans go through a FinishedSpanProcessor to memory. */
function sdkTracer() {
  const exporter = new InMemorySpanExporter();
  const processor = new FinishedSpanProcessor<ReadableSpan>(exporter);
  const provider = new BasicTracerProvider({ spanProcessors: [processor] });
  return { exporter, processor, tracer: provider.getTracer("finished-spans-test") };
}

/** A bare span, as otel-cf-workers hands every span to its processors (sampled or not). */
const bare = (spanId: string, traceFlags = 1): FinishedSpan => ({
  spanContext: (): SpanContext => ({ traceId: "a".repeat(32), spanId, traceFlags }),
});

/** An exporter that records each batch and answers as told. */
function recorder(answer: SpanExportResult | "throw" = { code: 0 }) {
  const batches: string[][] = [];
  let shutdowns = 0;
  const exporter: FinishedSpanExporter = {
    export(spans, done) {
      batches.push(spans.map((s) => s.spanContext().spanId));
      if (answer === "throw") throw new Error("exporter broke");
      done(answer);
    },
    async shutdown() {
      shutdowns++;
    },
  };
  return { exporter, batches, shutdowns: () => shutdowns };
}

describe("FinishedSpanProcessor", () => {
  it("a flush exports the spans that have ended and leaves open ones whole for a later flush", async () => {
    const { exporter, processor, tracer } = sdkTracer();
    const parent = tracer.startSpan("parent");
    const child = tracer.startSpan("child");
    child.end();
    // A nested invocation ends here and flushes.
    await processor.forceFlush(parent.spanContext().traceId);
    expect(exporter.getFinishedSpans().map((s) => s.name)).toEqual(["child"]);
    // The parent was not ended by that flush: what it records afterwards is kept.
    expect(parent.isRecording()).toBe(true);
    parent.setAttribute("after.flush", true);
    parent.end();
    await processor.forceFlush();
    const names = exporter.getFinishedSpans().map((s) => s.name);
    expect(names).toEqual(["child", "parent"]);
    expect(exporter.getFinishedSpans()[1]?.attributes["after.flush"]).toBe(true);
    // A flush with nothing new exports nothing again.
    await processor.forceFlush();
    expect(exporter.getFinishedSpans()).toHaveLength(2);
  });

  it("keeps no span of an unsampled trace", async () => {
    const { exporter, batches } = recorder();
    const processor = new FinishedSpanProcessor(exporter);
    processor.onEnd(bare("1", 0));
    processor.onEnd(bare("2", 1));
    await processor.forceFlush();
    expect(batches).toEqual([["2"]]);
  });

  it("holds at most maxQueued spans between flushes and counts the ones it drops", async () => {
    const { exporter, batches } = recorder();
    const processor = new FinishedSpanProcessor(exporter, { maxQueued: 2 });
    for (const id of ["1", "2", "3"]) processor.onEnd(bare(id));
    expect(processor.dropped).toBe(1);
    await processor.forceFlush();
    processor.onEnd(bare("4"));
    await processor.forceFlush();
    expect(batches).toEqual([["1", "2"], ["4"]]);
    expect(() => new FinishedSpanProcessor(exporter, { maxQueued: 0 })).toThrow(RangeError);
  });

  it("a failed or throwing export ends the flush without an error", async () => {
    for (const answer of [{ code: 1, error: new Error("503") }, "throw"] as const) {
      const { exporter, batches } = recorder(answer);
      const processor = new FinishedSpanProcessor(exporter);
      processor.onEnd(bare("1"));
      await expect(processor.forceFlush()).resolves.toBeUndefined();
      expect(batches).toEqual([["1"]]);
    }
  });

  it("shutdown exports what has ended, shuts the exporter down and drops later spans", async () => {
    const { exporter, batches, shutdowns } = recorder();
    const processor = new FinishedSpanProcessor(exporter);
    processor.onEnd(bare("1"));
    await processor.shutdown();
    expect(batches).toEqual([["1"]]);
    expect(shutdowns()).toBe(1);
    processor.onEnd(bare("2"));
    await processor.forceFlush();
    expect(batches).toEqual([["1"]]);
    expect(processor.dropped).toBe(1);
  });
});
