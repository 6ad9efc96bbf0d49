import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { CollectedSpan } from "../harness/agents/node/otlp-collector.mjs";
import { sleep, userMessage } from "../support/helpers";

/**
 * The traced agent (traced-worker.ts) set up as the tracing guide says, delegating to
 * itself through a service binding, its spans exported by OTLP/HTTP to a fake collector.
 */
const bindings = env as unknown as { TRACED: Fetcher; COLLECTOR: Fetcher };

interface Collected {
  spans: CollectedSpan[];
  exports: number;
  received: number;
}

const collected = async (traceId: string) =>
  (await (
    await bindings.COLLECTOR.fetch(`https://collector.test/spans?traceId=${traceId}`)
  ).json()) as Collected;

const hex = (n: number) =>
  Array.from(crypto.getRandomValues(new Uint8Array(n)), (b) =>
    b.toString(16).padStart(2, "0"),
  ).join("");

const attr = (span: CollectedSpan | undefined, key: string) => {
  const value = span?.attributes.find((a) => a.key === key)?.value;
  return value ? Object.values(value)[0] : undefined;
};

// OTLP's span kinds.
const SERVER = 2;
const CLIENT = 3;

describe("a trace across delegation to the same Worker", () => {
  it("the caller's and the helper's spans arrive once each, whole, as one trace", async () => {
    const traceId = hex(16);
    const callerSpanId = hex(8);
    const before = (await collected(traceId)).received;
    const response = await bindings.TRACED.fetch("https://traced.test/", {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "a2a-version": "1.0",
        traceparent: `00-${traceId}-${callerSpanId}-01`,
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "SendMessage",
        params: { message: userMessage("delegate it") },
      }),
    });
    const body = (await response.json()) as { result?: { task?: { status?: { state?: string } } } };
    expect(body.result?.task?.status?.state, JSON.stringify(body)).toBe("TASK_STATE_COMPLETED");

    // The caller's server span ends last; then give any late or repeated export time to land.
    const deadline = Date.now() + 10_000;
    const callerServer = (spans: CollectedSpan[]) =>
      spans.find((s) => s.name === "SendMessage" && s.kind === SERVER);
    while (!callerServer((await collected(traceId)).spans) && Date.now() < deadline) {
      await sleep(50);
    }
    await sleep(300);
    const { spans, exports, received } = await collected(traceId);
    const seen = spans.map((s) => `${s.spanId} <- ${s.parentSpanId ?? "-"} ${s.name}`).join("\n");

    // Every span exported since the request is of the caller's trace.
    expect(received - before, seen).toBe(spans.length);
    // None twice.
    expect(new Set(spans.map((s) => s.spanId)).size, seen).toBe(spans.length);
    // None lost: the caller's Worker and run, the delegation, and the helper's three
    // requests (its card, the streamed message, the task read back), each under the
    // SDK's span for the invocation.
    expect(spans.map((s) => s.name).sort(), seen).toEqual(
      [
        "fetchHandler POST",
        "SendMessage",
        "invoke_agent Traced agent",
        "invoke_agent binding:PEER",
        "fetchHandler GET",
        "GET /.well-known/agent-card.json",
        "fetchHandler POST",
        "SendStreamingMessage",
        "invoke_agent Traced agent",
        "fetchHandler POST",
        "GetTask",
      ].sort(),
    );
    // One tree: each span's parent was exported too, and the root hangs under the caller.
    const ids = new Set(spans.map((s) => s.spanId));
    const roots = spans.filter((s) => !ids.has(s.parentSpanId ?? ""));
    expect(
      roots.map((s) => [s.name, s.parentSpanId]),
      seen,
    ).toEqual([["fetchHandler POST", callerSpanId]]);

    // The helper's server spans are children of the caller's delegation span.
    const delegation = spans.find((s) => s.name === "invoke_agent binding:PEER");
    expect(delegation?.kind).toBe(CLIENT);
    const helperInvocations = spans.filter((s) => s.parentSpanId === delegation?.spanId);
    expect(helperInvocations.map((s) => [s.name, s.kind]).sort(), seen).toEqual([
      ["fetchHandler GET", SERVER],
      ["fetchHandler POST", SERVER],
      ["fetchHandler POST", SERVER],
    ]);
    const helperServer = spans.find((s) => s.name === "SendStreamingMessage");
    expect(helperInvocations.map((s) => s.spanId)).toContain(helperServer?.parentSpanId);
    expect(helperServer?.kind).toBe(SERVER);

    // The caller's spans are whole: ended after the work they cover, with what they
    // record after the delegation returned.
    const server = callerServer(spans);
    const run = spans.find(
      (s) => s.name === "invoke_agent Traced agent" && s.parentSpanId === server?.spanId,
    );
    const end = (s: CollectedSpan | undefined) => BigInt(s?.endTimeUnixNano ?? "0");
    // The caller waits 50 ms after the helper answered.
    expect(end(run) - end(delegation) >= 50_000_000n, seen).toBe(true);
    expect(end(server) >= end(run)).toBe(true);
    expect(attr(run, "a2a.task.state")).toBe("completed");
    expect(attr(server, "a2a.task.state")).toBe("TASK_STATE_COMPLETED");
    expect(attr(server, "http.response.status_code")).toBe(200);
    expect(server?.status?.code ?? 0).not.toBe(2);
    expect(attr(delegation, "a2a.task.id")).toBe(attr(helperServer, "a2a.task.id"));
    expect(attr(delegation, "a2a.task.state")).toBe("completed");
    // The helper's own flush ran before the caller's ended (so the test is the nested case).
    expect(exports).toBeGreaterThanOrEqual(2);
  });
});
