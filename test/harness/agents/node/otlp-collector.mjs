/**
 * A fake OTLP/HTTP collector for the `agents` project, wired in as the traced Worker's
 * outbound service (so its exporter's POSTs to /v1/traces land here, over the wire as
 * OTLP JSON) and as the tests' COLLECTOR binding, where `GET /spans?traceId=` lists what
 * arrived for one trace, how many exports carried it, and how many spans arrived in all.
 */

/** The spans kept: the oldest go first past this. */
const MAX_SPANS = 10_000;
/** @type {import("./otlp-collector.d.mts").CollectedSpan[]} */
const spans = [];
/** Every span received, kept or not. */
let received = 0;
/** How many POSTs carried spans, by trace id (an export per flush). @type {Map<string, number>} */
const exportsByTrace = new Map();

/** @param {Request} request */
export async function otlpCollector(request) {
  const url = new URL(request.url);
  if (request.method === "POST" && url.pathname === "/v1/traces") {
    const body = await request.json();
    const traces = new Set();
    for (const rs of body.resourceSpans ?? []) {
      for (const ss of rs.scopeSpans ?? []) {
        for (const span of ss.spans ?? []) {
          spans.push(span);
          received++;
          traces.add(span.traceId);
        }
      }
    }
    for (const id of traces) exportsByTrace.set(id, (exportsByTrace.get(id) ?? 0) + 1);
    if (spans.length > MAX_SPANS) spans.splice(0, spans.length - MAX_SPANS);
    return Response.json({});
  }
  if (request.method === "GET" && url.pathname === "/spans") {
    const traceId = url.searchParams.get("traceId") ?? "";
    return Response.json({
      spans: spans.filter((s) => s.traceId === traceId),
      exports: exportsByTrace.get(traceId) ?? 0,
      received,
    });
  }
  return new Response("not found", { status: 404 });
}
