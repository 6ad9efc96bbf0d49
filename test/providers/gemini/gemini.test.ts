import { describe, expect, it } from "vitest";
import type { Item, ItemInput } from "../../../src/history/items";
import { generate } from "../../../src/providers/base/collect";
import { ProviderError } from "../../../src/providers/base/errors";
import { capabilitiesFor } from "../../../src/providers/base/pricing";
import {
  ModelRequest,
  type ModelRequestInput,
  type StreamEvent,
  type ToolCall,
} from "../../../src/providers/base/types";
import {
  decodeGenerateContent,
  GEMINI_BASE_URL,
  type GeminiOptions,
  gemini,
  geminiRequestBody,
  stopReasonOf,
} from "../../../src/providers/gemini/gemini";
import {
  collectBatches,
  FakeProvider,
  type FakeReply,
  fixtureJson,
  fixturePaths,
  fixtureText,
  type RecordedRequest,
  type SeenRequest,
} from "../fake-provider";

const BASE = "https://gemini.fake";
const KEY = "test-key";
const covered = new Set<string>();

/** Marks a fixture (and its recorded status/headers, when there are some) as tested. */
function use(path: string): string {
  covered.add(path);
  const meta = `${path.replace(/\.(sse|json)$/, "")}.response-meta.json`;
  if (fixturePaths().includes(meta)) covered.add(meta);
  return path;
}

function recorded(name: string): RecordedRequest {
  return fixtureJson<RecordedRequest>(use(`gemini/${name}.request.json`));
}

const HI: ModelRequestInput = { messages: [{ role: "user", content: "Hi" }] };

interface Run {
  events: StreamEvent[];
  fake: FakeProvider;
}

async function run(
  reply: FakeReply,
  options: Partial<GeminiOptions> & { seed?: number; maxChunk?: number } = {},
  request: ModelRequestInput = HI,
): Promise<Run> {
  const { seed = 1, maxChunk = 1 << 20, ...rest } = options;
  if ("fixture" in reply) use(reply.fixture);
  const fake = new FakeProvider({ seed, maxChunk }).reply(reply);
  const model = gemini({ model: "gemini-2.5-flash", apiKey: KEY, baseUrl: BASE, ...rest });
  const events = await collectBatches(
    model.streamBatches(ModelRequest.parse(request), { fetch: fake.fetch }),
  );
  return { events, fake };
}

/** Synthesized call ids are random; number them in order so runs compare. */
function normalized(events: StreamEvent[]): unknown {
  const ids = new Map<string, string>();
  return JSON.parse(
    JSON.stringify(events).replace(/call_[0-9a-f-]{36}/g, (id) => {
      if (!ids.has(id)) ids.set(id, `call#${ids.size}`);
      return ids.get(id) as string;
    }),
  );
}

const CHUNKINGS: [seed: number, maxChunk: number][] = [
  [1, 1],
  [2, 2],
  [3, 7],
  [4, 16],
  [5, 64],
];

/** Replays a fixture whole and cut in many ways; the events must not change. */
async function replayed(
  path: string,
  options: Partial<GeminiOptions> = {},
  request: ModelRequestInput = HI,
): Promise<StreamEvent[]> {
  const { events } = await run({ fixture: path }, options, request);
  for (const [seed, maxChunk] of CHUNKINGS) {
    const again = await run({ fixture: path }, { ...options, seed, maxChunk }, request);
    expect(normalized(again.events), `${path} seed ${seed} maxChunk ${maxChunk}`).toEqual(
      normalized(events),
    );
  }
  return events;
}

interface Summary {
  text: string;
  reasoning: string;
  calls: ToolCall[];
  start: Extract<StreamEvent, { type: "message_start" }>;
  end: Extract<StreamEvent, { type: "message_end" }>;
  usages: Extract<StreamEvent, { type: "usage" }>[];
}

/** Checks the event order contract (G13) and adds the stream up. */
function summary(events: StreamEvent[]): Summary {
  const first = events[0];
  const last = events.at(-1);
  if (first?.type !== "message_start") throw new Error(`first event is ${first?.type}`);
  if (last?.type !== "message_end") throw new Error(`last event is ${last?.type}`);
  expect(events.filter((e) => e.type === "message_start")).toHaveLength(1);
  expect(events.filter((e) => e.type === "message_end")).toHaveLength(1);
  const of = <T extends StreamEvent["type"]>(type: T) =>
    events.filter((e): e is Extract<StreamEvent, { type: T }> => e.type === type);
  const calls = of("tool_call_end").map((e) => e.call);
  for (const end of of("tool_call_end")) {
    const start = events.findIndex((e) => e.type === "tool_call_start" && e.index === end.index);
    const stop = events.indexOf(end);
    expect(start).toBeGreaterThanOrEqual(0);
    expect(start).toBeLessThan(stop);
    const deltas = events
      .slice(start, stop)
      .filter((e) => e.type === "tool_call_delta" && e.index === end.index)
      .map((e) => (e as { argumentsDelta: string }).argumentsDelta);
    // Deltas add up to the arguments of the finished call.
    expect(deltas.join("")).toBe(end.call.arguments);
  }
  return {
    text: of("text_delta")
      .map((e) => e.text)
      .join(""),
    reasoning: of("reasoning_delta")
      .map((e) => e.text)
      .join(""),
    calls,
    start: first,
    end: last,
    usages: of("usage"),
  };
}

/** The JSON chunks of a fixture, read independently of the adapter (the expected values). */
function chunksOf(path: string): Record<string, unknown>[] {
  const text = fixtureText(path);
  if (path.endsWith(".sse")) {
    return text
      .split("\r\n\r\n")
      .filter((event) => event.startsWith("data: "))
      .map((event) => JSON.parse(event.slice(6)));
  }
  const body = JSON.parse(text);
  return Array.isArray(body) ? body : [body];
}

interface WirePart {
  text?: string;
  thought?: boolean;
  thoughtSignature?: string;
  functionCall?: Record<string, unknown>;
}

function partsOf(path: string): WirePart[] {
  return chunksOf(path).flatMap((chunk) => {
    const candidates = chunk.candidates as { content?: { parts?: WirePart[] } }[] | undefined;
    return candidates?.[0]?.content?.parts ?? [];
  });
}

function textOf(path: string, thought: boolean): string {
  return partsOf(path)
    .filter((p) => typeof p.text === "string" && (p.thought === true) === thought)
    .map((p) => p.text)
    .join("");
}

function signaturesOf(path: string): string[] {
  return partsOf(path)
    .map((p) => p.thoughtSignature)
    .filter((s): s is string => s !== undefined);
}

async function failure(promise: Promise<unknown>): Promise<ProviderError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(ProviderError);
    return error as ProviderError;
  }
  throw new Error("expected a ProviderError");
}

describe("gemini: recorded SSE streams (CRLF separators, no sentinel)", () => {
  it("G13: text.sse adds up to the recorded text; requestId from responseId; the last usage wins", async () => {
    const path = "gemini/text.sse";
    const events = await replayed(path, { model: "gemini-2.0-flash-exp" });
    const s = summary(events);
    expect(s.text).toBe("The capital of France is Paris.\n");
    expect(s.text).toBe(textOf(path, false));
    expect(s.start).toEqual({
      type: "message_start",
      provider: "gemini",
      model: "gemini-2.0-flash-exp",
      requestId: "w1peaMz6INOvnvgPgYfPiQY",
    });
    expect(s.end.stopReason).toBe("stop");
    expect(s.end.providerStopReason).toBe("STOP");
    // G12: the prompt count changes 15 → 13 on the last chunk; it is not summed.
    expect(s.end.usage).toEqual({ promptTokens: 13, completionTokens: 8, totalTokens: 21 });
    expect(s.end.reasoning).toEqual([]);
    // G14: gemini-2.0-flash prices, $0.10 in / $0.40 out per million.
    expect(s.end.costEstimate).toBeCloseTo((13 * 0.1 + 8 * 0.4) / 1e6, 12);
  });

  it("G12: text-usage-every-chunk.sse has cumulative usage: live usage events, final = last chunk", async () => {
    const path = "gemini/text-usage-every-chunk.sse";
    const s = summary(await replayed(path));
    expect(s.text).toBe(Array.from({ length: 30 }, (_, i) => i + 1).join("\n"));
    expect(s.usages.map((u) => u.usage.completionTokens)).toEqual([31 + 35, 79 + 35, 80 + 35]);
    expect(s.end.usage).toEqual({
      promptTokens: 18,
      completionTokens: 115,
      totalTokens: 133,
      reasoningTokens: 35,
    });
  });

  it("G13: thinking-thought-parts.sse: thought parts are reasoning, never text; the text's signature is kept", async () => {
    const path = "gemini/thinking-thought-parts.sse";
    const events = await replayed(path, { model: "gemini-2.5-pro" });
    const s = summary(events);
    expect(s.reasoning).toBe(textOf(path, true));
    expect(s.reasoning).toMatch(/^\*\*Clarifying User Goals\*\*/);
    expect(s.text).toBe(textOf(path, false));
    expect(s.text).toMatch(/^This is a great question!/);
    expect(s.text).not.toContain("Clarifying User Goals");
    const firstText = events.findIndex((e) => e.type === "text_delta");
    const lastThought = events.findLastIndex((e) => e.type === "reasoning_delta");
    expect(lastThought).toBeLessThan(firstText);
    expect(s.end.reasoning).toEqual([
      { provider: "gemini", text: "", signature: signaturesOf(path)[0] },
    ]);
    expect(s.end.usage).toEqual({
      promptTokens: 34,
      completionTokens: 469 + 787,
      totalTokens: 1290,
      reasoningTokens: 787,
    });
  });

  it("G18: text-with-thought-signature-gemini3.sse: JSON answer parsed, signature on the empty text part kept", async () => {
    const path = "gemini/text-with-thought-signature-gemini3.sse";
    const s = summary(await replayed(path));
    expect(JSON.parse(s.text)).toEqual({ city: "Mexico City", country: "Mexico" });
    const [signature] = signaturesOf(path);
    expect(signature).toMatch(/^Es4BCssB/);
    expect(s.end.reasoning).toEqual([{ provider: "gemini", text: "", signature }]);
    expect(s.end.stopReason).toBe("stop");
    expect(s.end.usage).toMatchObject({
      promptTokens: 128,
      completionTokens: 51,
      totalTokens: 179,
    });

    const fake = new FakeProvider({ seed: 7, maxChunk: 5 }).reply({ fixture: path });
    const response = await generate(
      gemini({ model: "gemini-3-flash-preview", apiKey: KEY, baseUrl: BASE }),
      { ...HI, outputSchema: { type: "object" } },
      { fetch: fake.fetch },
    );
    expect(response.output).toEqual({ city: "Mexico City", country: "Mexico" });
    expect(response.reasoningBlocks[0]?.signature).toBe(signature);
    expect(response.requestId).toBe("hVP6afiZEuitz7IPypuAsQY");
  });

  it("G9: function-call-simple.sse: a whole call gets a synthesized id; STOP after a call is tool_calls", async () => {
    const s = summary(await replayed("gemini/function-call-simple.sse"));
    expect(s.calls).toHaveLength(1);
    const [call] = s.calls;
    expect(call?.id).toMatch(/^call_/);
    expect(call).toMatchObject({
      name: "get_capital",
      arguments: '{"country":"France"}',
      input: { country: "France" },
    });
    expect(call?.metadata).toBeUndefined();
    expect(s.text).toBe("");
    expect(s.end.stopReason).toBe("tool_calls");
    expect(s.end.providerStopReason).toBe("STOP");
    expect(s.end.usage).toEqual({ promptTokens: 52, completionTokens: 5, totalTokens: 57 });
  });

  it("G6: function-call-thought-signature.sse: the call's thoughtSignature is kept byte for byte", async () => {
    const path = "gemini/function-call-thought-signature.sse";
    const s = summary(await replayed(path, { model: "gemini-3-pro-preview" }));
    const [signature] = signaturesOf(path);
    expect(signature?.length).toBe(1408);
    expect(s.calls).toEqual([
      {
        id: expect.stringMatching(/^call_/),
        name: "get_country",
        arguments: "{}",
        input: {},
        metadata: { thoughtSignature: signature },
      },
    ]);
    // A function call's signature belongs to the call, not to the text.
    expect(s.end.reasoning).toEqual([]);
    expect(s.end.stopReason).toBe("tool_calls");
    expect(s.end.usage).toEqual({
      promptTokens: 29,
      completionTokens: 10 + 202,
      totalTokens: 241,
      reasoningTokens: 202,
    });
  });

  it("G6: function-call-gemini3.sse: args and a 5 kB signature survive tiny chunks", async () => {
    const path = "gemini/function-call-gemini3.sse";
    const s = summary(await replayed(path));
    expect(s.calls).toHaveLength(1);
    expect(s.calls[0]).toMatchObject({
      name: "weather",
      input: { location: "San Francisco" },
      metadata: { thoughtSignature: signaturesOf(path)[0] },
    });
    expect(signaturesOf(path)[0]?.length).toBe(5488);
    expect(s.end.usage).toMatchObject({ completionTokens: 15 + 804, reasoningTokens: 804 });
    expect(s.start.requestId).toBe("QHiLaa6LBrb8vdIPoNztsAg");
  });

  it("G13: multiple-function-calls-streamed-args.sse: partialArgs rebuilt, streamed as deltas, {} closes each call", async () => {
    const path = "gemini/multiple-function-calls-streamed-args.sse";
    const events = await replayed(path, { model: "gemini-3-flash-preview" });
    const s = summary(events);
    expect(s.calls.map((c) => [c.name, c.arguments])).toEqual([
      ["read_theme", "{}"],
      ["read_screen", '{"id":"A"}'],
      ["read_screen", '{"id":"B"}'],
      ["read_screen", '{"id":"C"}'],
    ]);
    expect(s.calls.map((c) => c.input)).toEqual([{}, { id: "A" }, { id: "B" }, { id: "C" }]);
    expect(new Set(s.calls.map((c) => c.id)).size).toBe(4);
    expect(s.calls[0]?.metadata).toEqual({ thoughtSignature: signaturesOf(path)[0] });
    expect(s.calls.slice(1).every((c) => c.metadata === undefined)).toBe(true);
    // Streamed calls arrive in several deltas, the whole one in one.
    const deltas = (index: number) =>
      events.filter((e) => e.type === "tool_call_delta" && e.index === index).length;
    expect(deltas(0)).toBe(1);
    for (const index of [1, 2, 3]) expect(deltas(index)).toBeGreaterThan(1);
    // Each call ends before the next one starts.
    const order = events
      .filter((e) => e.type === "tool_call_start" || e.type === "tool_call_end")
      .map((e) => `${e.type === "tool_call_start" ? "start" : "end"}${e.index}`);
    expect(order).toEqual(["start0", "end0", "start1", "end1", "start2", "end2", "start3", "end3"]);
    expect(s.reasoning).toBe(textOf(path, true));
    expect(s.end.stopReason).toBe("tool_calls");
    // The early chunks carry only trafficType: no usage until the last one.
    expect(s.usages).toHaveLength(1);
    expect(s.end.usage).toEqual({
      promptTokens: 249,
      completionTokens: 58 + 183,
      totalTokens: 490,
      reasoningTokens: 183,
    });
  });

  it("G13: after-function-response-text.sse: the answer after a tool result", async () => {
    const s = summary(await replayed("gemini/after-function-response-text.sse"));
    expect(s.text).toBe("The capital of Mexico is Mexico City.");
    expect(s.end.stopReason).toBe("stop");
    expect(s.end.usage).toEqual({ promptTokens: 257, completionTokens: 8, totalTokens: 265 });
  });
});

describe("gemini: JSON-array streams (streamGenerateContent without alt=sse)", () => {
  it("stream-json-array-no-alt-sse.json: thought, then a call with its signature", async () => {
    const path = "gemini/stream-json-array-no-alt-sse.json";
    const events = await replayed(path, { transport: "json-array" });
    const s = summary(events);
    expect(s.reasoning).toBe(textOf(path, true));
    expect(s.reasoning).toMatch(/^\*\*Generating Pelican Names\*\*/);
    expect(s.text).toBe("");
    expect(s.calls).toEqual([
      {
        id: expect.stringMatching(/^call_/),
        name: "pelican_name_generator",
        arguments: "{}",
        input: {},
        metadata: { thoughtSignature: signaturesOf(path)[0] },
      },
    ]);
    expect(s.start.requestId).toBe("OYpyaqycKd2V_uMP65TsgA0");
    expect(s.end.stopReason).toBe("tool_calls");
    expect(s.end.usage).toEqual({
      promptTokens: 32,
      completionTokens: 12 + 42,
      totalTokens: 86,
      reasoningTokens: 42,
    });
  });

  it("G9: stream-json-array-function-call-with-id.json: the call's own id is used; nested args", async () => {
    const path = "gemini/stream-json-array-function-call-with-id.json";
    const s = summary(await replayed(path, { transport: "json-array" }));
    expect(s.calls).toHaveLength(1);
    const [call] = s.calls;
    expect(call?.id).toBe("whZntcQw");
    expect(call?.name).toBe("add_person");
    expect(call?.input).toEqual({
      age: 30,
      name: "Alice",
      address: { street: "123 Main St", city: "San Francisco", zipcode: "94102" },
    });
    expect(JSON.parse(call?.arguments ?? "")).toEqual(call?.input);
    expect(call?.metadata?.thoughtSignature).toBe(signaturesOf(path)[0]);
    expect(s.end.usage).toEqual({
      promptTokens: 201,
      completionTokens: 51 + 183,
      totalTokens: 435,
      reasoningTokens: 183,
    });
  });
});

describe("gemini: non-streaming generateContent", () => {
  const path = "gemini/generate-content-parallel-function-calls.json";

  it("G9: decodeGenerateContent gives three parallel calls; only the first carries the signature", () => {
    use(path);
    const events = decodeGenerateContent(fixtureText(path), {
      model: "gemini-3-flash-preview",
      capabilities: capabilitiesFor("gemini-3-flash-preview"),
    });
    const s = summary(events);
    expect(s.calls.map((c) => [c.name, c.arguments])).toEqual([
      ["generate_topic", "{}"],
      ["generate_topic", "{}"],
      ["generate_topic", "{}"],
    ]);
    expect(new Set(s.calls.map((c) => c.id)).size).toBe(3);
    expect(s.calls[0]?.metadata).toEqual({ thoughtSignature: signaturesOf(path)[0] });
    expect(s.calls[1]?.metadata).toBeUndefined();
    expect(s.start.requestId).toBe("wOd8abGuO5rgz7IP5tLEGA");
    expect(s.end.stopReason).toBe("tool_calls");
    expect(s.end.usage).toEqual({
      promptTokens: 83,
      completionTokens: 30 + 190,
      totalTokens: 303,
      reasoningTokens: 190,
    });
    // An object works as well as its text.
    const fromObject = decodeGenerateContent(JSON.parse(fixtureText(path)), {
      model: "gemini-3-flash-preview",
      capabilities: capabilitiesFor("gemini-3-flash-preview"),
    });
    expect(normalized(fromObject)).toEqual(normalized(events));
  });

  it("transport none posts to :generateContent and yields the same events", async () => {
    const events = await replayed(path, { transport: "none", model: "gemini-3-flash-preview" });
    const direct = decodeGenerateContent(fixtureText(path), {
      model: "gemini-3-flash-preview",
      capabilities: capabilitiesFor("gemini-3-flash-preview"),
    });
    expect(normalized(events)).toEqual(normalized(direct));
  });
});

describe("gemini: errors", () => {
  it("H7: error-404-not-found.json → http error 404 NOT_FOUND, not retryable", async () => {
    const rec = recorded("error-404-not-found");
    const fake = new FakeProvider().reply({ fixture: use("gemini/error-404-not-found.json") });
    const model = gemini({ model: "gemini-3.6-flahs", apiKey: KEY, transport: "none" });
    const request = ModelRequest.parse({ messages: [{ role: "user", content: "hello" }] });
    const error = await failure(
      collectBatches(model.streamBatches(request, { fetch: fake.fetch })),
    );
    expect(error.kind).toBe("http");
    expect(error.status).toBe(404);
    expect(error.code).toBe("NOT_FOUND");
    expect(error.retryable).toBe(false);
    expect(error.message).toContain("models/gemini-3.6-flahs is not found");
    expect(fake.requests[0]?.url).toBe(rec.uri);
    expect(fake.requests[0]?.body.contents).toEqual(rec.body.contents);
  });

  it("H8: error-429-retry-info.json → retryable, retryAfterMs from RetryInfo (34.4s)", async () => {
    const error = await failure(
      run({ fixture: "gemini/error-429-retry-info.json", status: 429 }, {}),
    );
    expect(error.kind).toBe("http");
    expect(error.status).toBe(429);
    expect(error.code).toBe("RESOURCE_EXHAUSTED");
    expect(error.retryable).toBe(true);
    expect(error.retryAfterMs).toBe(34_400);
  });

  const firstEvent = fixtureText("gemini/text.sse").split("\r\n\r\n")[0] as string;

  it("an error injected into a 200 SSE body throws a retryable stream error after the text so far", async () => {
    const body = `${firstEvent}\r\n\r\ndata: {"error":{"code":503,"message":"The model is overloaded.","status":"UNAVAILABLE"}}\r\n\r\n`;
    const fake = new FakeProvider({ maxChunk: 9 }).reply({ status: 200, body });
    const model = gemini({ model: "gemini-2.5-flash", apiKey: KEY, baseUrl: BASE });
    const seen: StreamEvent[] = [];
    const error = await failure(
      (async () => {
        for await (const batch of model.streamBatches(ModelRequest.parse(HI), {
          fetch: fake.fetch,
        }))
          seen.push(...batch);
      })(),
    );
    expect(error.kind).toBe("stream");
    expect(error.code).toBe("UNAVAILABLE");
    expect(error.status).toBe(503);
    expect(error.retryable).toBe(true);
    expect(error.message).toContain("The model is overloaded.");
    expect(seen.filter((e) => e.type === "text_delta").map((e) => e.text)).toEqual(["The"]);
    expect(seen.some((e) => e.type === "message_end")).toBe(false);
  });

  it("an error element in a JSON-array body: INVALID_ARGUMENT is not retryable, RESOURCE_EXHAUSTED is, with its delay", async () => {
    const element = JSON.stringify(chunksOf("gemini/text.sse")[0]);
    const bad = `[${element}\n,\r\n{"error":{"code":400,"message":"bad","status":"INVALID_ARGUMENT"}}\n]`;
    const notRetryable = await failure(
      run({ status: 200, body: bad }, { transport: "json-array" }),
    );
    expect(notRetryable).toMatchObject({
      kind: "stream",
      code: "INVALID_ARGUMENT",
      retryable: false,
    });
    const quota = `[{"error":{"code":429,"message":"quota","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"2s"}]}}]`;
    const retryable = await failure(run({ status: 200, body: quota }, { transport: "json-array" }));
    expect(retryable).toMatchObject({
      kind: "stream",
      code: "RESOURCE_EXHAUSTED",
      retryable: true,
      retryAfterMs: 2000,
    });
  });

  it("a body that ends without a finishReason is a retryable stream error, not a quiet end", async () => {
    const events = fixtureText("gemini/text.sse").split("\r\n\r\n");
    const cut = `${events.slice(0, 2).join("\r\n\r\n")}\r\n\r\n`;
    const sse = await failure(run({ status: 200, body: cut }, { maxChunk: 4 }));
    expect(sse).toMatchObject({ kind: "stream", retryable: true });
    expect(sse.message).toContain("finishReason");

    const array = fixtureText("gemini/stream-json-array-no-alt-sse.json");
    const truncated = array.slice(0, array.indexOf("\n,\r\n") + 4);
    const json = await failure(run({ status: 200, body: truncated }, { transport: "json-array" }));
    expect(json).toMatchObject({ kind: "stream", retryable: true });
  });

  it("a dropped connection mid-stream is a network error", async () => {
    const error = await failure(run({ fixture: "gemini/text.sse", cutAfterBytes: 300 }));
    expect(error.kind).toBe("network");
    expect(error.retryable).toBe(true);
  });

  it("G11: a blocked prompt (promptFeedback.blockReason) ends with content_filter", async () => {
    const body = `data: {"promptFeedback": {"blockReason": "PROHIBITED_CONTENT"},"usageMetadata": {"promptTokenCount": 7,"totalTokenCount": 7},"modelVersion": "gemini-2.5-flash","responseId": "blocked1"}\r\n\r\n`;
    const s = summary((await run({ status: 200, body })).events);
    expect(s.text).toBe("");
    expect(s.end.stopReason).toBe("content_filter");
    expect(s.end.providerStopReason).toBe("PROHIBITED_CONTENT");
    expect(s.end.usage).toEqual({ promptTokens: 7, completionTokens: 0, totalTokens: 7 });
  });

  it("G11: finish reasons are normalized", async () => {
    const chunk = (reason: string) =>
      `data: {"candidates": [{"content": {"parts": [{"text": "Hi"}],"role": "model"},"finishReason": "${reason}"}]}\r\n\r\n`;
    const stop = async (reason: string) =>
      summary((await run({ status: 200, body: chunk(reason) })).events).end;
    expect(await stop("MAX_TOKENS")).toMatchObject({
      stopReason: "length",
      providerStopReason: "MAX_TOKENS",
      usage: null,
    });
    expect((await stop("SAFETY")).stopReason).toBe("content_filter");
    expect((await stop("RECITATION")).stopReason).toBe("content_filter");
    expect((await stop("MALFORMED_FUNCTION_CALL")).stopReason).toBe("error");
    expect((await stop("OTHER")).stopReason).toBe("other");
    expect(stopReasonOf("PROHIBITED_CONTENT", null, false)).toBe("content_filter");
    expect(stopReasonOf("BLOCKLIST", null, true)).toBe("content_filter");
    expect(stopReasonOf("MAX_TOKENS", null, true)).toBe("length");
    expect(stopReasonOf("STOP", null, true)).toBe("tool_calls");
  });

  it("aborting the signal stops the stream at once and cancels the body", async () => {
    const text = fixtureText("gemini/text.sse");
    const fake = new FakeProvider().reply({
      stallAfterBytes: text.indexOf("\r\n\r\n") + 4,
      body: text,
    });
    const controller = new AbortController();
    const model = gemini({ model: "gemini-2.5-flash", apiKey: KEY, baseUrl: BASE });
    const seen: StreamEvent[] = [];
    const error = await failure(
      (async () => {
        for await (const batch of model.streamBatches(ModelRequest.parse(HI), {
          fetch: fake.fetch,
          signal: controller.signal,
        })) {
          seen.push(...batch);
          controller.abort();
        }
      })(),
    );
    expect(error.kind).toBe("aborted");
    expect(seen.map((e) => e.type)).toEqual(["message_start", "text_delta", "usage"]);
    expect(fake.canceledStreams).toBe(1);
  });
});

function onlyRequest(fake: FakeProvider): SeenRequest {
  expect(fake.requests).toHaveLength(1);
  return fake.requests[0] as SeenRequest;
}

/** The body we send for a request, through the real adapter and the fake transport. */
async function sent(
  request: ModelRequestInput,
  options: Partial<GeminiOptions> = {},
): Promise<{ url: string; headers: Headers; body: Record<string, unknown> }> {
  const reply = options.transport && options.transport !== "sse" ? STOP_ARRAY : STOP_BODY;
  const fake = new FakeProvider().reply({ status: 200, body: reply });
  const model = gemini({ model: "gemini-2.5-flash", apiKey: KEY, baseUrl: BASE, ...options });
  await collectBatches(model.streamBatches(ModelRequest.parse(request), { fetch: fake.fetch }));
  return onlyRequest(fake);
}

const STOP_BODY =
  'data: {"candidates": [{"content": {"parts": [{"text": "ok"}],"role": "model"},"finishReason": "STOP"}]}\r\n\r\n';
const STOP_ARRAY = `[${STOP_BODY.slice(6).trim()}]`;

/** Recorded requests spell the field in snake case; the REST API takes both spellings. */
function camelSchemaField(tools: unknown): unknown {
  return JSON.parse(
    JSON.stringify(tools).replaceAll('"parameters_json_schema"', '"parametersJsonSchema"'),
  );
}

const user = (content: string): ItemInput => ({ type: "message", role: "user", content });

describe("gemini: request bodies match the recorded requests (G3, G6, G8)", () => {
  it("G3: text.request.json: system instruction apart, temperature 0 sent, x-goog-api-key, alt=sse", async () => {
    const rec = recorded("text");
    const seen = await sent(
      {
        system: "You are a helpful chatbot.",
        messages: [user("What is the capital of France?")],
        temperature: 0,
      },
      { model: "gemini-2.0-flash-exp", baseUrl: GEMINI_BASE_URL },
    );
    expect(seen.url).toBe(rec.uri);
    expect(seen.headers.get("x-goog-api-key")).toBe(KEY);
    expect(seen.headers.get("content-type")).toBe("application/json");
    // Deliberate difference: the recorded systemInstruction also says role "user", which
    // Gemini ignores there.
    const { systemInstruction, ...expected } = rec.body as { systemInstruction: { parts: [] } };
    expect(seen.body).toEqual({
      ...expected,
      systemInstruction: { parts: systemInstruction.parts },
    });
    expect(seen.body.generationConfig).toEqual({ temperature: 0 });
  });

  it("G8: function-call-simple.request.json: every tool in one functionDeclarations entry", async () => {
    const rec = recorded("function-call-simple");
    const declarations = (
      rec.body.tools as { functionDeclarations: Record<string, unknown>[] }[]
    )[0]?.functionDeclarations as { name: string; description: string; parameters: object }[];
    const request: ModelRequestInput = {
      system: "You are a helpful chatbot.",
      messages: [user("What is the temperature of the capital of France?")],
      tools: declarations.map((d) => ({
        name: d.name,
        description: d.description,
        parameters: d.parameters as Record<string, never>,
      })),
    };
    // In openapi mode the tools are exactly the recorded ones (OpenAPI-typed `parameters`).
    const openapi = await sent(request, { model: "gemini-2.0-flash", schemaMode: "openapi" });
    expect(openapi.url).toBe(rec.uri.replace(GEMINI_BASE_URL, BASE));
    expect(openapi.body.tools).toEqual(rec.body.tools);
    expect(openapi.body.contents).toEqual(rec.body.contents);
    // Deliberate difference: no empty generationConfig.
    expect(openapi.body.generationConfig).toBeUndefined();
    // By default the same schema goes in parametersJsonSchema (full JSON Schema).
    const json = await sent(request);
    const tools = json.body.tools as { functionDeclarations: Record<string, unknown>[] }[];
    expect(tools).toHaveLength(1);
    expect(tools[0]?.functionDeclarations.map((d) => Object.keys(d))).toEqual([
      ["name", "description", "parametersJsonSchema"],
      ["name", "description", "parametersJsonSchema"],
    ]);
  });

  it("G8: function-call-thought-signature.request.json: JSON Schema tools in parametersJsonSchema", async () => {
    const rec = recorded("function-call-thought-signature");
    const seen = await sent(
      {
        messages: [user("What is the capital of the user country? Call the tool")],
        tools: [
          {
            name: "get_country",
            description: "",
            parameters: { additionalProperties: false, properties: {}, type: "object" },
          },
        ],
      },
      { model: "gemini-3-pro-preview" },
    );
    expect(seen.url).toBe(rec.uri.replace(GEMINI_BASE_URL, BASE));
    expect(seen.body.contents).toEqual(rec.body.contents);
    expect(seen.body.tools).toEqual(camelSchemaField(rec.body.tools));
  });

  it("G6: after-function-response-text.request.json: a decoded call replayed with its signature, then its response", async () => {
    const rec = recorded("after-function-response-text");
    // The call as we decoded it from the recorded answer that preceded this request.
    const decoded = summary(
      (
        await run(
          { fixture: "gemini/function-call-thought-signature.sse" },
          { seed: 3, maxChunk: 5 },
        )
      ).events,
    ).calls[0] as ToolCall;
    const recordedContents = rec.body.contents as {
      role: string;
      parts: { functionCall?: { id: string }; thoughtSignature?: string }[];
    }[];
    // pydantic-ai gave the call an id of its own, as we do; reuse it to compare.
    const callId = recordedContents[1]?.parts[0]?.functionCall?.id as string;
    const items: ItemInput[] = [
      user("What is the capital of the user country? Call the tool"),
      {
        type: "function_call",
        name: decoded.name,
        arguments: decoded.arguments,
        callId,
        metadata: decoded.metadata,
      },
      { type: "function_call_output", name: "get_country", callId, output: "Mexico" },
    ];
    const seen = await sent(
      {
        messages: items,
        tools: [
          {
            name: "get_country",
            description: "",
            parameters: { additionalProperties: false, properties: {}, type: "object" },
          },
        ],
      },
      { model: "gemini-3-pro-preview" },
    );
    const contents = seen.body.contents as typeof recordedContents;
    const ours = contents[1]?.parts[0]?.thoughtSignature as string;
    const theirs = recordedContents[1]?.parts[0]?.thoughtSignature as string;
    // Sent back exactly as received; pydantic-ai had re-encoded the same bytes base64url.
    expect(ours).toBe(decoded.metadata?.thoughtSignature);
    expect(ours).toContain("+");
    expect(ours.replaceAll("+", "-").replaceAll("/", "_")).toBe(theirs);
    // Deliberate differences: the signature's base64 alphabet (above), and the response
    // object: ours is Google's `{output}` convention, pydantic-ai's is `{return_value}`.
    const expected = JSON.parse(JSON.stringify(recordedContents));
    expected[1].parts[0].thoughtSignature = ours;
    expected[2].parts[0].functionResponse.response = { output: "Mexico" };
    expect(contents).toEqual(expected);
    expect(contents.map((c) => c.role)).toEqual(["user", "model", "user"]);
    expect(seen.body.tools).toEqual(camelSchemaField(rec.body.tools));
  });

  it("G18: text-with-thought-signature-gemini3.request.json: responseJsonSchema + responseMimeType; call with its own id", async () => {
    const rec = recorded("text-with-thought-signature-gemini3");
    const recordedContents = rec.body.contents as {
      parts: { functionCall?: { id: string }; thoughtSignature?: string }[];
    }[];
    const signature = recordedContents[1]?.parts[0]?.thoughtSignature as string;
    const config = rec.body.generationConfig as Record<string, unknown>;
    const items: ItemInput[] = [
      user("What is the largest city in the user country?"),
      {
        type: "function_call",
        name: "get_user_country",
        arguments: "{}",
        callId: "96c1su3s",
        metadata: { thoughtSignature: signature },
      },
      {
        type: "function_call_output",
        name: "get_user_country",
        callId: "96c1su3s",
        output: "Mexico",
      },
    ];
    const seen = await sent(
      {
        messages: items,
        outputSchema: config.responseJsonSchema as Record<string, never>,
        outputName: "CityLocation",
        tools: [
          {
            name: "get_user_country",
            description: "",
            parameters: { additionalProperties: false, properties: {}, type: "object" },
          },
        ],
      },
      { model: "gemini-3-flash-preview" },
    );
    expect(seen.url).toBe(rec.uri.replace(GEMINI_BASE_URL, BASE));
    const expected = JSON.parse(JSON.stringify(recordedContents));
    expected[2].parts[0].functionResponse.response = { output: "Mexico" };
    expect(seen.body.contents).toEqual(expected);
    // Deliberate difference: responseModalities ["TEXT"] is Gemini's default; not sent.
    expect(seen.body.generationConfig).toEqual({
      responseMimeType: config.responseMimeType,
      responseJsonSchema: config.responseJsonSchema,
    });
    expect(seen.body.tools).toEqual(camelSchemaField(rec.body.tools));
  });

  it("stream-json-array-function-call-with-id.request.json: no alt=sse, includeThoughts, safetySettings via providerOptions", async () => {
    const rec = recorded("stream-json-array-function-call-with-id");
    const tool = (rec.body.tools as { functionDeclarations: unknown[] }[])[0]
      ?.functionDeclarations[0] as { name: string; description: string; parameters: never };
    const fake = new FakeProvider().reply({ status: 200, body: STOP_ARRAY });
    const model = gemini({
      model: "gemini-flash-latest",
      apiKey: KEY,
      transport: "json-array",
      schemaMode: "openapi",
    });
    const request = ModelRequest.parse({
      messages: [
        user(
          "Add Alice who is 30 years old and lives at 123 Main St, San Francisco, CA 94102 to the database",
        ),
      ],
      tools: [tool],
      reasoning: { include: true },
      providerOptions: { safetySettings: rec.body.safetySettings as never },
    });
    await collectBatches(model.streamBatches(request, { fetch: fake.fetch }));
    const seen = onlyRequest(fake);
    expect(seen.url).toBe(rec.uri);
    expect(seen.body).toEqual(rec.body);
  });

  it("stream-json-array-no-alt-sse.request.json: a tool with no description", async () => {
    const rec = recorded("stream-json-array-no-alt-sse");
    const seen = await sent(
      {
        messages: [user("Two names for a pet pelican")],
        tools: [{ name: "pelican_name_generator", parameters: { properties: {}, type: "object" } }],
        reasoning: { include: true },
        providerOptions: { safetySettings: rec.body.safetySettings as never },
      },
      { transport: "json-array", schemaMode: "openapi" },
    );
    expect(seen.url).toBe(rec.uri.replace(GEMINI_BASE_URL, BASE));
    // Deliberate difference: a missing description is "" (llm-gemini sent null).
    const expected = JSON.parse(JSON.stringify(rec.body));
    expected.tools[0].functionDeclarations[0].description = "";
    expect(seen.body).toEqual(expected);
  });

  it("text-usage-every-chunk.request.json: a plain user turn", async () => {
    const rec = recorded("text-usage-every-chunk");
    const seen = await sent({
      messages: [user("Count from 1 to 30, one number per line, digits only.")],
    });
    expect(seen.url).toBe(rec.uri.replace(GEMINI_BASE_URL, BASE));
    // Deliberate difference: responseModalities ["TEXT"] (the default) is not sent.
    expect(seen.body).toEqual({ contents: rec.body.contents });
  });

  it("thinking-thought-parts.request.json: includeThoughts from reasoning.include", async () => {
    const rec = recorded("thinking-thought-parts");
    const seen = await sent(
      {
        system: "You are a helpful assistant.",
        messages: [user("How do I cross the street?")],
        tools: [{ name: "dummy", parameters: { properties: {}, type: "OBJECT" } }],
        reasoning: { include: true },
      },
      { model: "gemini-2.5-pro", schemaMode: "openapi" },
    );
    expect(seen.url).toBe(rec.uri.replace(GEMINI_BASE_URL, BASE));
    const expected = JSON.parse(JSON.stringify(rec.body));
    delete expected.systemInstruction.role;
    expect(seen.body).toEqual(expected);
  });

  it("G8: generate-content-parallel-function-calls.request.json: :generateContent, toolConfig ANY", async () => {
    const rec = recorded("generate-content-parallel-function-calls");
    const declarations = (rec.body.tools as { functionDeclarations: unknown[] }[])[0]
      ?.functionDeclarations as {
      name: string;
      description: string;
      parameters_json_schema: never;
    }[];
    const request: ModelRequestInput = {
      system: "Tell three jokes. Generate topics with the generate_topic tool.",
      messages: [user("")],
      tools: declarations.map((d) => ({
        name: d.name,
        description: d.description,
        parameters: d.parameters_json_schema,
      })),
      toolChoice: "required",
    };
    const fake = new FakeProvider().reply({ status: 200, body: STOP_ARRAY });
    const model = gemini({
      model: "gemini-3-flash-preview",
      apiKey: KEY,
      transport: "none",
    });
    await collectBatches(model.streamBatches(ModelRequest.parse(request), { fetch: fake.fetch }));
    const seen = onlyRequest(fake);
    expect(seen.url).toBe(rec.uri);
    // An empty user turn is kept: it is the whole prompt here.
    expect(seen.body.contents).toEqual(rec.body.contents);
    expect(seen.body.tools).toEqual(camelSchemaField(rec.body.tools));
    expect((seen.body.systemInstruction as { parts: unknown }).parts).toEqual(
      (rec.body.systemInstruction as { parts: unknown }).parts,
    );
    // Deliberate difference: "required" is mode ANY over every declared tool; the
    // recording lists them all in allowedFunctionNames, which means the same.
    expect(seen.body.toolConfig).toEqual({ functionCallingConfig: { mode: "ANY" } });
    const named = geminiRequestBody(
      ModelRequest.parse({ ...request, toolChoice: { name: "final_result" } }),
    );
    expect(named.toolConfig).toEqual({
      functionCallingConfig: { mode: "ANY", allowedFunctionNames: ["final_result"] },
    });
  });
});

function body(request: ModelRequestInput): Record<string, unknown> {
  return geminiRequestBody(ModelRequest.parse(request));
}

function contentsOf(request: ModelRequestInput): { role: string; parts: unknown[] }[] {
  return body(request).contents as { role: string; parts: unknown[] }[];
}

describe("gemini: conversion of conversation items (G6, G7)", () => {
  const call = (
    callId: string,
    name = "lookup",
    extra: { metadata?: Record<string, string> } = {},
  ): ItemInput => ({
    type: "function_call",
    name,
    arguments: `{"q":"${callId}"}`,
    callId,
    ...extra,
  });
  const output = (callId: string, text: string, isError = false): ItemInput => ({
    type: "function_call_output",
    name: "lookup",
    callId,
    output: text,
    isError,
  });

  it("G6: assistant → model; a turn's calls in one model content, all its responses in one user content", () => {
    const contents = contentsOf({
      messages: [
        user("Find a and b"),
        { type: "message", role: "assistant", content: "Looking." },
        call("a"),
        call("b"),
        output("a", "A!"),
        output("b", '{"found":true}'),
        { type: "message", role: "assistant", content: "Both found." },
      ],
    });
    expect(contents).toEqual([
      { role: "user", parts: [{ text: "Find a and b" }] },
      {
        role: "model",
        parts: [
          { text: "Looking." },
          { functionCall: { args: { q: "a" }, id: "a", name: "lookup" } },
          { functionCall: { args: { q: "b" }, id: "b", name: "lookup" } },
        ],
      },
      {
        role: "user",
        parts: [
          { functionResponse: { id: "a", name: "lookup", response: { output: "A!" } } },
          // A JSON object output is passed as structure, not as an escaped string.
          { functionResponse: { id: "b", name: "lookup", response: { output: { found: true } } } },
        ],
      },
      { role: "model", parts: [{ text: "Both found." }] },
    ]);
  });

  it("G6: a failed tool's output goes under error; consecutive user messages merge", () => {
    const contents = contentsOf({
      messages: [user("one"), user("two"), call("x"), output("x", "boom", true), user("three")],
    });
    expect(contents.map((c) => c.role)).toEqual(["user", "model", "user"]);
    expect(contents[0]?.parts).toEqual([{ text: "one" }, { text: "two" }]);
    expect(contents[2]?.parts).toEqual([
      { functionResponse: { id: "x", name: "lookup", response: { error: "boom" } } },
      { text: "three" },
    ]);
  });

  it("G6: an output whose call is not in the history is left out", () => {
    const contents = contentsOf({ messages: [user("hi"), output("gone", "late")] });
    expect(contents).toEqual([{ role: "user", parts: [{ text: "hi" }] }]);
  });

  it("G6: a call's thoughtSignature rides on its own part; only calls that had one carry one", () => {
    const contents = contentsOf({
      messages: [
        user("go"),
        call("a", "lookup", { metadata: { thoughtSignature: "sig+/A==" } }),
        call("b"),
      ],
    });
    expect(contents[1]?.parts).toEqual([
      { functionCall: { args: { q: "a" }, id: "a", name: "lookup" }, thoughtSignature: "sig+/A==" },
      { functionCall: { args: { q: "b" }, id: "b", name: "lookup" } },
    ]);
  });

  it("G6: a text answer's signature is replayed on its last text part; other providers' blocks are not", () => {
    const assistant = (content: string, extra: Record<string, unknown>): ItemInput => ({
      type: "message",
      role: "assistant",
      content: [content, "second"],
      extra: extra as never,
    });
    const direct = contentsOf({
      messages: [user("q"), assistant("first", { thoughtSignature: "T1" })],
    });
    expect(direct[1]?.parts).toEqual([
      { text: "first" },
      { text: "second", thoughtSignature: "T1" },
    ]);
    const blocks = contentsOf({
      messages: [
        user("q"),
        assistant("first", {
          reasoning: [
            { provider: "anthropic", text: "hmm", signature: "ANTHROPIC" },
            { provider: "gemini", text: "", signature: "G1" },
          ],
        }),
      ],
    });
    expect(blocks[1]?.parts).toEqual([
      { text: "first" },
      { text: "second", thoughtSignature: "G1" },
    ]);
    const anthropicOnly = contentsOf({
      messages: [
        user("q"),
        assistant("first", { reasoning: [{ provider: "anthropic", signature: "A" }] }),
      ],
    });
    expect(JSON.stringify(anthropicOnly)).not.toContain("thoughtSignature");
  });

  it("G6: a tool-only turn's empty assistant text is dropped; a signature without text keeps an empty part", () => {
    const plain = contentsOf({
      messages: [
        user("q"),
        { role: "assistant", content: "", toolCalls: [{ id: "c", name: "f", arguments: "{}" }] },
      ],
    });
    expect(plain[1]?.parts).toEqual([{ functionCall: { args: {}, id: "c", name: "f" } }]);
    const signed = contentsOf({
      messages: [
        user("q"),
        { type: "message", role: "assistant", content: "", extra: { thoughtSignature: "S" } },
      ],
    });
    expect(signed[1]?.parts).toEqual([{ text: "", thoughtSignature: "S" }]);
  });

  it("G6: a decoded text signature goes back exactly as received (decode → history → request)", async () => {
    const path = "gemini/text-with-thought-signature-gemini3.sse";
    const s = summary((await run({ fixture: path }, { seed: 11, maxChunk: 3 })).events);
    const contents = contentsOf({
      messages: [
        user("Where?"),
        {
          type: "message",
          role: "assistant",
          content: s.text,
          extra: { reasoning: s.end.reasoning as never },
        },
        user("Thanks"),
      ],
    });
    expect(contents[1]).toEqual({
      role: "model",
      parts: [{ text: s.text, thoughtSignature: signaturesOf(path)[0] }],
    });
  });

  it("G2: images become inlineData (bytes, data: URLs) or fileData (other URLs)", () => {
    const png =
      "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
    const contents = contentsOf({
      messages: [
        {
          type: "message",
          role: "user",
          content: [
            "What are these?",
            { type: "image", bytes: png },
            { type: "image", bytes: "/9j/4AAQ", mediaType: "image/jpeg" },
            { type: "image", url: `data:image/webp;base64,UklGRg==` },
            { type: "image", url: "https://example.com/cat.JPG?size=large" },
            { type: "image", url: "gs://bucket/scan", mediaType: "image/heic" },
            { type: "image", url: "https://example.com/image" },
          ],
        },
      ],
    });
    expect(contents[0]?.parts).toEqual([
      { text: "What are these?" },
      { inlineData: { mimeType: "image/png", data: png } },
      { inlineData: { mimeType: "image/jpeg", data: "/9j/4AAQ" } },
      { inlineData: { mimeType: "image/webp", data: "UklGRg==" } },
      { fileData: { mimeType: "image/jpeg", fileUri: "https://example.com/cat.JPG?size=large" } },
      { fileData: { mimeType: "image/heic", fileUri: "gs://bucket/scan" } },
      { fileData: { fileUri: "https://example.com/image" } },
    ]);
  });

  it("G7: handoffs and config updates never reach Gemini; updated instructions do", () => {
    const request: ModelRequestInput = {
      system: "Be brief.",
      messages: [
        { type: "message", role: "system", content: "You are triage." },
        user("hi"),
        { type: "agent_handoff", fromAgent: "triage", toAgent: "billing" },
        { type: "agent_config_update", instructions: "You are billing." },
        { type: "message", role: "assistant", content: "Billing here." },
      ] satisfies ItemInput[],
    };
    const out = body(request);
    expect(out.systemInstruction).toEqual({
      parts: [{ text: "Be brief." }, { text: "You are billing." }],
    });
    expect(out.contents).toEqual([
      { role: "user", parts: [{ text: "hi" }] },
      { role: "model", parts: [{ text: "Billing here." }] },
    ]);
    expect(JSON.stringify(out)).not.toMatch(/handoff|triage/);
  });

  it("G3: generation settings, thinking and tool choice; providerOptions merged last", () => {
    const out = body({
      messages: [user("hi")],
      temperature: 0,
      topP: 0.5,
      maxTokens: 100,
      stop: ["END"],
      reasoning: { budgetTokens: 1024, include: false },
      toolChoice: "none",
      providerOptions: {
        toolConfig: { functionCallingConfig: { mode: "AUTO" } },
        cachedContent: "c1",
      },
    });
    expect(out.generationConfig).toEqual({
      temperature: 0,
      topP: 0.5,
      maxOutputTokens: 100,
      stopSequences: ["END"],
      thinkingConfig: { includeThoughts: false, thinkingBudget: 1024 },
    });
    expect(out.toolConfig).toEqual({ functionCallingConfig: { mode: "AUTO" } });
    expect(out.cachedContent).toBe("c1");
    expect(body({ messages: [user("hi")], toolChoice: "auto" }).toolConfig).toEqual({
      functionCallingConfig: { mode: "AUTO" },
    });
    expect(body({ messages: [user("hi")], toolChoice: "none" }).toolConfig).toEqual({
      functionCallingConfig: { mode: "NONE" },
    });
    expect(body({ messages: [user("hi")], reasoning: { effort: "low" } }).generationConfig).toEqual(
      { thinkingConfig: { includeThoughts: true, thinkingLevel: "low" } },
    );
    expect(body({ messages: [user("hi")], outputSchema: { type: "object" } })).toMatchObject({
      generationConfig: {
        responseMimeType: "application/json",
        responseJsonSchema: { type: "object" },
      },
    });
    expect(
      geminiRequestBody(
        ModelRequest.parse({ messages: [user("hi")], outputSchema: { type: "object" } }),
        "openapi",
      ).generationConfig,
    ).toEqual({ responseMimeType: "application/json", responseSchema: { type: "object" } });
  });

  it("LLM messages (role/content) convert the same way as items", () => {
    const items: Item[] = ModelRequest.parse({
      messages: [
        { role: "user", content: "q" },
        {
          role: "assistant",
          content: "",
          toolCalls: [{ id: "c1", name: "f", arguments: '{"a":1}' }],
        },
        { role: "tool", toolCallId: "c1", toolName: "f", content: "r" },
      ],
    }).messages;
    expect(items.map((i) => i.type)).toContain("function_call_output");
    expect(contentsOf({ messages: items })).toEqual([
      { role: "user", parts: [{ text: "q" }] },
      { role: "model", parts: [{ functionCall: { args: { a: 1 }, id: "c1", name: "f" } }] },
      {
        role: "user",
        parts: [{ functionResponse: { id: "c1", name: "f", response: { output: "r" } } }],
      },
    ]);
  });
});

describe("gemini: keys, base URL and endpoint", () => {
  it("reads GEMINI_API_KEY, else GOOGLE_API_KEY, and GEMINI_BASE_URL from env", async () => {
    const call = async (env: object, options: Partial<GeminiOptions> = {}) => {
      const reply = options.transport === "json-array" ? STOP_ARRAY : STOP_BODY;
      const fake = new FakeProvider().reply({ status: 200, body: reply });
      const model = gemini({ model: "gemini-2.5-flash", headers: { "x-extra": "1" }, ...options });
      await collectBatches(model.streamBatches(ModelRequest.parse(HI), { fetch: fake.fetch, env }));
      return fake.requests[0] as { url: string; headers: Headers };
    };
    const both = await call({
      GEMINI_API_KEY: "gemini-key",
      GOOGLE_API_KEY: "google-key",
      GEMINI_BASE_URL: "https://gateway.example/v1/acct/gw/google-ai-studio/",
    });
    expect(both.headers.get("x-goog-api-key")).toBe("gemini-key");
    expect(both.headers.get("x-extra")).toBe("1");
    expect(both.url).toBe(
      "https://gateway.example/v1/acct/gw/google-ai-studio/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
    );
    const google = await call({ GOOGLE_API_KEY: "google-key" });
    expect(google.headers.get("x-goog-api-key")).toBe("google-key");
    expect(google.url).toBe(
      `${GEMINI_BASE_URL}/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse`,
    );
    const explicit = await call({ GEMINI_API_KEY: "env" }, { apiKey: "opt", baseUrl: BASE });
    expect(explicit.headers.get("x-goog-api-key")).toBe("opt");
    const tuned = await call(
      { GEMINI_API_KEY: "k" },
      { model: "tunedModels/mine", transport: "json-array" },
    );
    expect(tuned.url).toBe(`${GEMINI_BASE_URL}/v1beta/tunedModels/mine:streamGenerateContent`);
  });

  it("G16: no key is a config error naming the secret, before any request", async () => {
    const fake = new FakeProvider();
    const model = gemini({ model: "gemini-2.5-flash" });
    const error = await failure(
      collectBatches(model.streamBatches(ModelRequest.parse(HI), { fetch: fake.fetch, env: {} })),
    );
    expect(error.kind).toBe("config");
    expect(error.message).toContain("GEMINI_API_KEY");
    expect(fake.requests).toHaveLength(0);
  });

  it("knows the capabilities and prices of Gemini models", () => {
    const model = gemini({ model: "gemini-2.5-flash", apiKey: KEY });
    expect(model.provider).toBe("gemini");
    expect(model.capabilities.inputPricePerMillion).toBe(0.3);
    expect(model.capabilities.reasoning).toBe(true);
    const custom = gemini({
      model: "gemini-9",
      apiKey: KEY,
      capabilities: { inputPricePerMillion: 1 },
    });
    expect(custom.capabilities.inputPricePerMillion).toBe(1);
    expect(custom.capabilities.outputPricePerMillion).toBeNull();
  });
});

describe("gemini: fixture coverage", () => {
  // Runs last: every recorded Gemini file was used by a test above.
  it("every file in fixtures/providers/gemini is covered", () => {
    const all = fixturePaths().filter((p) => p.startsWith("gemini/"));
    expect(all.length).toBeGreaterThanOrEqual(36);
    expect(all.filter((p) => !covered.has(p))).toEqual([]);
  });
});
