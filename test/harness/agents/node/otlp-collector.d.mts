/** One exported span, as OTLP/HTTP JSON carries it (the fields the tests read). */
export interface CollectedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  status?: { code?: number; message?: string };
  attributes: { key: string; value: Record<string, unknown> }[];
}

/** The collector: OTLP/HTTP JSON in at POST /v1/traces, one trace's spans out at GET /spans. */
export function otlpCollector(request: Request): Promise<Response>;
