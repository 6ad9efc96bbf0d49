/**
 * A real OTLP/HTTP receiver for the tracing tests (tracing.test.ts, and the tracing guide's
 * code run in init.test.ts): it collects the spans every export posts to /v1/traces.
 */
// @ts-nocheck -- Node-only test support (the repository has no @types/node).
import { createServer, type Server } from "node:http";

/** One span as OTLP/HTTP JSON carries it (the fields this test reads). */
export interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: { key: string; value: Record<string, unknown> }[];
}

/** A real OTLP/HTTP receiver: collects the spans of every export posted to /v1/traces. */
export function startReceiver(): Promise<{ url: string; spans: OtlpSpan[]; server: Server }> {
  const spans: OtlpSpan[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      if (req.url === "/v1/traces" && req.headers["content-type"]?.includes("json")) {
        const body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
        for (const rs of body.resourceSpans ?? []) {
          for (const ss of rs.scopeSpans ?? []) spans.push(...(ss.spans ?? []));
        }
      }
      res.writeHead(200, { "content-type": "application/json" });
      res.end("{}");
    });
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      resolve({ url: `http://127.0.0.1:${port}/v1/traces`, spans, server });
    }),
  );
}

export const attr = (span: OtlpSpan | undefined, key: string) => {
  const value = span?.attributes.find((a) => a.key === key)?.value;
  return value ? Object.values(value)[0] : undefined;
};
