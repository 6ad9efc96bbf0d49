import type { SpanContext } from "@opentelemetry/api";

/** A finished span as a span processor receives it (an SDK's `ReadableSpan` is one). */
export interface FinishedSpan {
  /** Its ids and trace flags (only the sampled flag is read). */
  spanContext(): SpanContext;
}

/** The outcome an exporter reports: code 0 is success (the SDK's `ExportResultCode`). */
export interface SpanExportResult {
  /** 0 for success, 1 for failure. */
  code: number;
  /** Why the export failed. */
  error?: Error;
}

/**
 * What exports spans: an SDK `SpanExporter`, such as otel-cf-workers' `OTLPExporter` or
 * `InMemorySpanExporter` from `@opentelemetry/sdk-trace-base`.
 */
export interface FinishedSpanExporter<S extends FinishedSpan = FinishedSpan> {
  /** Sends a batch of spans and calls `done` once it has gone (or failed). */
  export(spans: S[], done: (result: SpanExportResult) => void): void;
  /** Releases what the exporter holds. */
  shutdown(): Promise<void>;
}

/** Options of a {@link FinishedSpanProcessor}. */
export interface FinishedSpanProcessorOptions {
  /**
   * Finished spans held between two flushes (default 2048); spans that end while it is
   * full are dropped and counted in `dropped`.
   */
  maxQueued?: number;
}

const SAMPLED = 1;

/**
 * A span processor that exports finished spans, and only those, at each flush. Give it to
 * `@microlabs/otel-cf-workers` as `spanProcessors` in place of `exporter`: its default
 * processor, at the end of each invocation, ends and exports every span of that trace
 * that is still open. When an agent delegates to another agent in the same Worker (a
 * service binding to itself), the nested invocation ends first, and the caller's server
 * and delegation spans would be cut short there, losing what they record after it. This
 * one leaves open spans alone: they go out at the flush that follows their end.
 *
 * Spans whose trace is not sampled are not kept. Each flush exports what has finished,
 * whatever its trace, in one call to the exporter, and waits for that export; a failed
 * export is not retried.
 * @example
 * ```ts
 * import { instrument, OTLPExporter, type ResolveConfigFn } from "@microlabs/otel-cf-workers";
 * import { defineAgent, FinishedSpanProcessor } from "edgelink";
 *
 * const agent = defineAgent<{ OTLP_URL: string }>({
 *   card: { name: "Traced", description: "Answers" },
 *   handler: () => "hello",
 * });
 * const config: ResolveConfigFn<{ OTLP_URL: string }> = (env) => ({
 *   spanProcessors: new FinishedSpanProcessor(new OTLPExporter({ url: env.OTLP_URL })),
 *   service: { name: "my-agent" },
 * });
 * export default instrument(agent, config);
 * ```
 */
export class FinishedSpanProcessor<S extends FinishedSpan = FinishedSpan> {
  private queue: S[] = [];
  private readonly maxQueued: number;
  private closed = false;
  /** Spans dropped because the queue was full (or the processor shut down). */
  dropped = 0;

  constructor(
    private readonly exporter: FinishedSpanExporter<S>,
    options: FinishedSpanProcessorOptions = {},
  ) {
    const max = options.maxQueued ?? 2048;
    if (!Number.isInteger(max) || max < 1) {
      throw new RangeError(`maxQueued must be a positive integer, got ${max}`);
    }
    this.maxQueued = max;
  }

  /** A started span needs nothing: only finished spans are kept. */
  onStart(_span: unknown, _parent: unknown): void {}

  /** Keeps a finished span of a sampled trace until the next flush. */
  onEnd(span: S): void {
    if ((span.spanContext().traceFlags & SAMPLED) === 0) return;
    if (this.closed || this.queue.length >= this.maxQueued) {
      this.dropped++;
      return;
    }
    this.queue.push(span);
  }

  /**
   * Exports every span finished so far and waits for that export. otel-cf-workers names
   * the trace of the invocation that ends; spans of other traces go too, since an
   * invocation of an object's method or alarm may have no flush of its own.
   */
  forceFlush(_traceId?: string): Promise<void> {
    if (this.queue.length === 0) return Promise.resolve();
    const spans = this.queue;
    this.queue = [];
    // Failures are not thrown: a flush runs in `waitUntil`, where nobody could catch them.
    return new Promise((resolve) => {
      try {
        this.exporter.export(spans, () => resolve());
      } catch {
        resolve();
      }
    });
  }

  /** Exports what has finished, then shuts the exporter down; later spans are dropped. */
  async shutdown(): Promise<void> {
    this.closed = true;
    await this.forceFlush();
    await this.exporter.shutdown();
  }
}
