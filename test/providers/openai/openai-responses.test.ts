import { describe, expect, it } from "vitest";
import type { ItemInput } from "../../../src/history/items";
import { generate } from "../../../src/providers/base/collect";
import { ProviderError } from "../../../src/providers/base/errors";
import {
  ModelRequest,
  type ModelRequestInput,
  type ReasoningBlock,
  type StreamEvent,
  type ToolCall,
} from "../../../src/providers/base/types";
import {
  type OpenAIResponsesOptions,
  openaiResponses,
  type ResponsesBody,
  responsesBody,
} from "../../../src/providers/openai/openai-responses";
import {
  collectBatches,
  FakeProvider,
  type FakeReply,
  fixtureJson,
  fixturePaths,
  fixtureText,
  type RecordedRequest,
} from "../fake-provider";

const DIR = "openai-responses";
const BASE = "https://fake.test/v1";

/** What the tests read from a recorded SSE body (to compute expectations independently). */
interface WireItem {
  type: string;
  id: string;
  call_id?: string;
  name?: string;
  arguments?: string;
  encrypted_content?: string;
  summary?: { type: string; text: string }[];
  content?: unknown[];
}
interface WireEvent {
  type: string;
  text?: string;
  delta?: string;
  item?: WireItem;
  response?: { id: string; model: string };
}

/** The recorded events of a fixture, parsed naively (one `data:` line per event). */
function wire(name: string): WireEvent[] {
  return fixtureText(`${DIR}/${name}.sse`)
    .split("\n")
    .filter((line) => line.startsWith("data: "))
    .map((line) => JSON.parse(line.slice(6)) as WireEvent);
}

function doneItem(name: string, type: string): WireItem {
  const event = wire(name).find(
    (e) => e.type === "response.output_item.done" && e.item?.type === type,
  );
  if (!event?.item) throw new Error(`no ${type} item in ${name}`);
  return event.item;
}

function recorded(name: string): Record<string, unknown> {
  return fixtureJson<RecordedRequest>(`${DIR}/${name}.request.json`).body;
}

function model(name: string, options: Partial<OpenAIResponsesOptions> = {}) {
  return openaiResponses({ model: name, apiKey: "sk-test", baseUrl: BASE, ...options });
}

interface Run {
  events: StreamEvent[];
  fake: FakeProvider;
  body: Record<string, unknown>;
}

async function run(
  modelName: string,
  request: ModelRequestInput,
  reply: FakeReply,
  chunking: { seed?: number; maxChunk?: number } = {},
  options: Partial<OpenAIResponsesOptions> = {},
): Promise<Run> {
  const fake = new FakeProvider({
    seed: chunking.seed ?? 1,
    maxChunk: chunking.maxChunk ?? 1 << 20,
  });
  fake.reply(reply);
  const stream = model(modelName, options).streamBatches(ModelRequest.parse(request), {
    fetch: fake.fetch,
  });
  const events = await collectBatches(stream);
  return { events, fake, body: fake.requests[0]?.body ?? {} };
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

/** Replays a fixture whole, then with several random tiny chunkings: the events must not change. */
async function replayEverywhere(
  modelName: string,
  request: ModelRequestInput,
  fixture: string,
  maxChunks: number[] = [1, 3, 7, 16],
): Promise<Run> {
  const whole = await run(modelName, request, { fixture: `${DIR}/${fixture}` });
  let seed = 100;
  for (const maxChunk of maxChunks) {
    for (let i = 0; i < 2; i++) {
      const split = await run(
        modelName,
        request,
        { fixture: `${DIR}/${fixture}` },
        { seed: seed++, maxChunk },
      );
      expect(split.events).toEqual(whole.events);
    }
  }
  return whole;
}

/**
 * Our body has the recorded shape: every field equal, except those named (with why we
 * differ on purpose).
 */
function expectShape(
  ours: Record<string, unknown>,
  theirs: Record<string, unknown>,
  differences: Record<string, string>,
): void {
  const keys = new Set([...Object.keys(ours), ...Object.keys(theirs)]);
  for (const key of keys) {
    if (key in differences) continue;
    expect({ [key]: ours[key] }).toEqual({ [key]: theirs[key] });
  }
}

const NOT_STORED = "store: false, we replay the whole history ourselves";
const NO_EMPTY_INSTRUCTIONS = "empty instructions are left out";

function only<T extends StreamEvent["type"]>(events: StreamEvent[], type: T) {
  return events.filter((e): e is Extract<StreamEvent, { type: T }> => e.type === type);
}

function textOf(events: StreamEvent[]): string {
  return only(events, "text_delta")
    .map((e) => e.text)
    .join("");
}

function reasoningOf(events: StreamEvent[]): string {
  return only(events, "reasoning_delta")
    .map((e) => e.text)
    .join("");
}

function endOf(events: StreamEvent[]) {
  const end = events.at(-1);
  if (end?.type !== "message_end") throw new Error("the last event is not message_end");
  return end;
}

function callsOf(events: StreamEvent[]): ToolCall[] {
  return only(events, "tool_call_end").map((e) => e.call);
}

function getCapital(description = "") {
  const tools = recorded("function-call-split-args").tools as {
    parameters: Record<string, unknown>;
  }[];
  return { name: "get_capital", description, parameters: tools[0]?.parameters ?? {} };
}

const user = (content: string): ItemInput => ({
  type: "message",
  role: "user",
  content,
});

describe("openai-responses fixtures", () => {
  it("every fixture of the folder is covered by a test below", () => {
    const covered = [
      "error-400-invalid-request.json",
      "error-400-invalid-request.request.json",
      "error-400-invalid-request.response-meta.json",
      "error-400-model-not-found.json",
      "error-400-model-not-found.request.json",
      "error-400-model-not-found.response-meta.json",
      "error-event-insufficient-quota.sse",
      "function-call-split-args.request.json",
      "function-call-split-args.response-meta.json",
      "function-call-split-args.sse",
      "reasoning-encrypted-then-function-call.request.json",
      "reasoning-encrypted-then-function-call.response-meta.json",
      "reasoning-encrypted-then-function-call.sse",
      "reasoning-summary-stream.request.json",
      "reasoning-summary-stream.response-meta.json",
      "reasoning-summary-stream.sse",
      "text-then-function-call.request.json",
      "text-then-function-call.response-meta.json",
      "text-then-function-call.sse",
      "text.request.json",
      "text.response-meta.json",
      "text.sse",
    ].map((name) => `${DIR}/${name}`);
    expect(fixturePaths().filter((path) => path.startsWith(`${DIR}/`))).toEqual(covered);
  });

  describe("text (answer after a function_call_output)", () => {
    const request: ModelRequestInput = {
      messages: [
        user("What is the capital of France?"),
        {
          type: "function_call",
          name: "get_capital",
          arguments: '{"country":"France"}',
          callId: "fc_67e554a1de488191af0831d35cbe082e0794405d35281ae2",
        },
        {
          type: "function_call_output",
          name: "get_capital",
          callId: "fc_67e554a1de488191af0831d35cbe082e0794405d35281ae2",
          output: "Paris",
        },
      ],
      tools: [getCapital()],
      toolChoice: "auto",
    };

    it("G13/G12/G14: text, usage, stop and cost, the same under any chunking", async () => {
      const { events } = await replayEverywhere("gpt-4o", request, "text.sse");
      expect(events[0]).toEqual({
        type: "message_start",
        provider: "openai-responses",
        model: "gpt-4o-2024-08-06",
        requestId: "resp_67e554a21aa88191b65876ac5e5bbe0406c52f0e511c76ed",
      });
      expect(textOf(events)).toBe("The capital of France is Paris.");
      expect(only(events, "text_delta")).toHaveLength(7);
      const usage = {
        promptTokens: 278,
        completionTokens: 9,
        totalTokens: 287,
        reasoningTokens: 0,
        cachedPromptTokens: 0,
      };
      expect(only(events, "usage")).toEqual([{ type: "usage", usage }]);
      expect(endOf(events)).toEqual({
        type: "message_end",
        stopReason: "stop",
        providerStopReason: "completed",
        usage,
        reasoning: [],
        costEstimate: (278 * 2.5 + 9 * 10) / 1e6,
      });
      expect(only(events, "message_end")).toHaveLength(1);
    });

    it("G4/G8/G9: the outgoing body has the recorded shape (text.request.json)", async () => {
      const { body, fake } = await run(
        "gpt-4o",
        request,
        { fixture: `${DIR}/text.sse` },
        {},
        {
          strictTools: true,
        },
      );
      const theirs = recorded("text");
      expect(body.input).toEqual(theirs.input);
      expect(body.tools).toEqual(theirs.tools);
      expectShape(body, theirs, { instructions: NO_EMPTY_INSTRUCTIONS, store: NOT_STORED });
      expect(body.store).toBe(false);
      expect("instructions" in body).toBe(false);
      const seen = fake.requests[0];
      expect(seen?.url).toBe(`${BASE}/responses`);
      expect(seen?.method).toBe("POST");
      expect(seen?.headers.get("authorization")).toBe("Bearer sk-test");
    });

    it("G10/G15: generate adds the stream up", async () => {
      const fake = new FakeProvider().reply({ fixture: `${DIR}/text.sse` });
      let clock = 0;
      const response = await generate(model("gpt-4o"), request, {
        fetch: fake.fetch,
        now: () => (clock += 5),
      });
      expect(response.text).toBe("The capital of France is Paris.");
      expect(response.provider).toBe("openai-responses");
      expect(response.model).toBe("gpt-4o-2024-08-06");
      expect(response.stopReason).toBe("stop");
      expect(response.usage?.totalTokens).toBe(287);
      expect(response.requestId).toBe("resp_67e554a21aa88191b65876ac5e5bbe0406c52f0e511c76ed");
      expect(response.timeToFirstTokenMs).not.toBeNull();
    });

    it("a request id in the response headers wins over the response id", async () => {
      const { events } = await run("gpt-4o", request, {
        fixture: `${DIR}/text.sse`,
        headers: { "x-request-id": "req_abc" },
      });
      expect(events[0]).toMatchObject({ type: "message_start", requestId: "req_abc" });
    });
  });

  describe("function-call-split-args", () => {
    const request: ModelRequestInput = {
      messages: [user("What is the capital of France?")],
      tools: [getCapital()],
      toolChoice: "auto",
    };

    it("G9/G13: argument deltas keyed by item_id assemble into one call with call_id as its id", async () => {
      const { events } = await replayEverywhere("gpt-4o", request, "function-call-split-args.sse");
      expect(only(events, "tool_call_start")).toEqual([
        {
          type: "tool_call_start",
          index: 0,
          id: "call_kL0PCQV7M2WMoVX8V8OtYSAL",
          name: "get_capital",
        },
      ]);
      expect(only(events, "tool_call_delta").map((e) => e.argumentsDelta)).toEqual([
        '{"',
        "country",
        '":"',
        "France",
        '"}',
      ]);
      expect(callsOf(events)).toEqual([
        {
          id: "call_kL0PCQV7M2WMoVX8V8OtYSAL",
          name: "get_capital",
          arguments: '{"country":"France"}',
          input: { country: "France" },
          metadata: { itemId: "fc_67e554a1de488191af0831d35cbe082e0794405d35281ae2" },
        },
      ]);
      expect(only(events, "tool_call_end")).toHaveLength(1);
      expect(textOf(events)).toBe("");
      const end = endOf(events);
      expect(end.stopReason).toBe("tool_calls");
      expect(end.usage).toMatchObject({
        promptTokens: 255,
        completionTokens: 16,
        totalTokens: 271,
      });
    });

    it("G8: tools are flat {type, name, description, parameters} (function-call-split-args.request.json)", async () => {
      const theirs = recorded("function-call-split-args");
      const strict = await run(
        "gpt-4o",
        request,
        { fixture: `${DIR}/function-call-split-args.sse` },
        {},
        {
          strictTools: true,
        },
      );
      expectShape(strict.body, theirs, { instructions: NO_EMPTY_INSTRUCTIONS, store: NOT_STORED });
      // By default no `strict`: OpenAI rejects strict schemas that leave properties optional.
      const plain = await run("gpt-4o", request, {
        fixture: `${DIR}/function-call-split-args.sse`,
      });
      expect(plain.body.tools).toEqual([
        {
          type: "function",
          name: "get_capital",
          description: "",
          parameters: getCapital().parameters,
        },
      ]);
    });
  });

  describe("reasoning-encrypted-then-function-call", () => {
    const finalResult = () => {
      const tools = recorded("reasoning-encrypted-then-function-call").tools as {
        description: string;
        parameters: Record<string, unknown>;
      }[];
      return {
        name: "final_result",
        description: tools[0]?.description ?? "",
        parameters: tools[0]?.parameters ?? {},
      };
    };
    const request: ModelRequestInput = {
      messages: [user("Calculate 100 * 200 / 3")],
      tools: [finalResult()],
      toolChoice: "required",
      reasoning: { effort: "low", include: false },
      providerOptions: { service_tier: "flex" },
    };
    const itemId = "fc_0050471a34b36ae60068c97bf19d9c819590eaf42c0edc1042";

    it("J1/G13: the encrypted reasoning item comes out in message_end, the call with its item id", async () => {
      const { events } = await replayEverywhere(
        "gpt-5",
        request,
        "reasoning-encrypted-then-function-call.sse",
      );
      const reasoning = doneItem("reasoning-encrypted-then-function-call", "reasoning");
      const end = endOf(events);
      expect(end.reasoning).toEqual([
        {
          provider: "openai-responses",
          id: "rs_0050471a34b36ae60068c97bac4dcc819595fd0f80d6b3c405",
          encrypted: reasoning.encrypted_content,
          text: "",
        },
      ]);
      expect(callsOf(events)).toEqual([
        {
          id: "call_CWXgs68YprAjp6t0371hiPOI",
          name: "final_result",
          arguments: '{"result":6666}',
          input: { result: 6666 },
          metadata: { itemId },
        },
      ]);
      expect(end.stopReason).toBe("tool_calls");
      expect(end.usage).toEqual({
        promptTokens: 53,
        completionTokens: 469,
        totalTokens: 522,
        reasoningTokens: 448,
        cachedPromptTokens: 0,
      });
      expect(end.costEstimate).toBeCloseTo((53 * 1.25 + 469 * 10) / 1e6, 12);
      expect(events[0]).toMatchObject({ model: "gpt-5-2025-08-07" });
    });

    it("G3/G4: the body has the recorded shape (reasoning-encrypted-then-function-call.request.json)", async () => {
      const theirs = recorded("reasoning-encrypted-then-function-call");
      const { body } = await run(
        "gpt-5",
        request,
        { fixture: `${DIR}/reasoning-encrypted-then-function-call.sse` },
        {},
        {
          strictTools: true,
        },
      );
      expectShape(body, theirs, {
        reasoning: "no summary asked for: we leave `summary` out instead of sending null",
        previous_response_id: "we never chain responses on OpenAI's side",
        store: NOT_STORED,
      });
      expect(body.include).toEqual(["reasoning.encrypted_content"]);
      expect(body.reasoning).toEqual({ effort: "low" });
      expect(body.tool_choice).toBe("required");
      expect(body.service_tier).toBe("flex");
      expect(body.stream).toBe(true);
    });

    it("G4: the next turn replays the reasoning item exactly as received, before the call that carries its fc_ id", async () => {
      const first = await run("gpt-5", request, {
        fixture: `${DIR}/reasoning-encrypted-then-function-call.sse`,
      });
      const [call] = callsOf(first.events);
      if (!call) throw new Error("no call");
      const next: ModelRequestInput = {
        ...request,
        messages: [
          user("Calculate 100 * 200 / 3"),
          {
            type: "function_call",
            callId: call.id,
            name: call.name,
            arguments: call.arguments,
            // Stored as the brief says: on the first call when the turn has no text.
            metadata: { ...call.metadata, reasoning: endOf(first.events).reasoning },
          },
          { type: "function_call_output", callId: call.id, name: call.name, output: "6666" },
        ],
      };
      const { body } = await run("gpt-5", next, { fixture: `${DIR}/text.sse` });
      const received = doneItem("reasoning-encrypted-then-function-call", "reasoning");
      expect(body.input).toEqual([
        { role: "user", content: "Calculate 100 * 200 / 3" },
        received,
        {
          type: "function_call",
          id: itemId,
          call_id: "call_CWXgs68YprAjp6t0371hiPOI",
          name: "final_result",
          arguments: '{"result":6666}',
        },
        { type: "function_call_output", call_id: "call_CWXgs68YprAjp6t0371hiPOI", output: "6666" },
      ]);
      expect(Object.keys(received).sort()).toEqual(["encrypted_content", "id", "summary", "type"]);
    });
  });

  describe("reasoning-summary-stream (large)", () => {
    const request: ModelRequestInput = {
      messages: [user("How do I cross the street?")],
      reasoning: { effort: "high" },
    };
    const summaries = () =>
      wire("reasoning-summary-stream")
        .filter((e) => e.type === "response.reasoning_summary_text.done")
        .map((e) => e.text ?? "");
    const answer = () =>
      wire("reasoning-summary-stream").find((e) => e.type === "response.output_text.done")?.text ??
      "";

    it("G13/J1: summary deltas join into the four summaries, text into the answer, any chunking", async () => {
      const { events } = await replayEverywhere(
        "o3-mini",
        request,
        "reasoning-summary-stream.sse",
        [64],
      );
      expect(summaries()).toHaveLength(4);
      expect(reasoningOf(events)).toBe(summaries().join("\n\n"));
      expect(textOf(events)).toBe(answer());
      expect(answer()).toContain("Stay safe!");
      const end = endOf(events);
      const received = doneItem("reasoning-summary-stream", "reasoning");
      expect(end.reasoning).toEqual(
        summaries().map((text, i) => ({
          provider: "openai-responses",
          id: received.id,
          text,
          ...(i === 0 ? { encrypted: received.encrypted_content } : {}),
        })),
      );
      expect(end.stopReason).toBe("stop");
      expect(end.usage).toMatchObject({
        promptTokens: 13,
        completionTokens: 1680,
        reasoningTokens: 1408,
      });
    });

    it("G3: the body has the recorded shape (reasoning-summary-stream.request.json)", async () => {
      const { body } = await run("o3-mini", request, {
        fixture: `${DIR}/reasoning-summary-stream.sse`,
      });
      expectShape(body, recorded("reasoning-summary-stream"), {
        reasoning: 'summary "auto" (the recording asked for "detailed")',
        store: NOT_STORED,
      });
      expect(body.reasoning).toEqual({ effort: "high", summary: "auto" });
    });

    it("G4: an assistant message's stored reasoning is replayed with every summary part", async () => {
      const first = await run("o3-mini", request, {
        fixture: `${DIR}/reasoning-summary-stream.sse`,
      });
      const next: ModelRequestInput = {
        ...request,
        messages: [
          user("How do I cross the street?"),
          {
            type: "message",
            role: "assistant",
            content: textOf(first.events),
            extra: { reasoning: endOf(first.events).reasoning },
          },
          user("Thanks!"),
        ],
      };
      const { body } = await run("o3-mini", next, { fixture: `${DIR}/text.sse` });
      expect(body.input).toEqual([
        { role: "user", content: "How do I cross the street?" },
        doneItem("reasoning-summary-stream", "reasoning"),
        { role: "assistant", content: answer() },
        { role: "user", content: "Thanks!" },
      ]);
    });
  });

  describe("text-then-function-call (commentary text, then a call)", () => {
    const system = "Briefly narrate what you are about to do before calling each tool.";
    const request: ModelRequestInput = {
      system,
      messages: [user("What is the capital of PotatoLand?")],
      tools: [getCapital()],
      toolChoice: "auto",
    };
    const text = "I\u2019ll check the capital lookup tool for \u201cPotatoLand.\u201d";

    it("G13: curly quotes split across chunks survive; text, reasoning item and call come out", async () => {
      const { events } = await replayEverywhere("gpt-5.5", request, "text-then-function-call.sse");
      expect(textOf(events)).toBe(text);
      const received = doneItem("text-then-function-call", "reasoning");
      const end = endOf(events);
      expect(end.reasoning).toEqual([
        {
          provider: "openai-responses",
          id: received.id,
          encrypted: received.encrypted_content,
          text: "",
        },
      ]);
      expect(callsOf(events)).toEqual([
        {
          id: "call_LabG58Uhrq9kZvR52BYKjToD",
          name: "get_capital",
          arguments: '{"country":"PotatoLand"}',
          input: { country: "PotatoLand" },
          metadata: { itemId: "fc_0fabc13af1ee0049006a691dff0c1481a1b4a0eec7e3c753bb" },
        },
      ]);
      expect(end.stopReason).toBe("tool_calls");
      expect(end.usage).toEqual({
        promptTokens: 63,
        completionTokens: 69,
        totalTokens: 132,
        reasoningTokens: 26,
        cachedPromptTokens: 0,
      });
      // Text first, then the call: the order of the output items.
      const firstCall = events.findIndex((e) => e.type === "tool_call_start");
      const lastText = events.findLastIndex((e) => e.type === "text_delta");
      expect(lastText).toBeLessThan(firstCall);
    });

    it("G3/G4: system → instructions; encrypted reasoning asked of a reasoning model (text-then-function-call.request.json)", async () => {
      const theirs = recorded("text-then-function-call");
      const { body } = await run(
        "gpt-5.5",
        request,
        { fixture: `${DIR}/text-then-function-call.sse` },
        {},
        {
          strictTools: true,
        },
      );
      expectShape(body, theirs, {
        tools: 'description "" where the recording sent null',
        store: NOT_STORED,
      });
      expect(body.instructions).toBe(system);
      expect(body.include).toEqual(["reasoning.encrypted_content"]);
      expect("reasoning" in body).toBe(false);
      const [ours] = body.tools as Record<string, unknown>[];
      const [recordedTool] = theirs.tools as Record<string, unknown>[];
      expect({ ...ours, description: null }).toEqual(recordedTool);
    });

    it("G4: replay puts the reasoning item before the assistant text, then the call with its fc_ id", async () => {
      const first = await run("gpt-5.5", request, {
        fixture: `${DIR}/text-then-function-call.sse`,
      });
      const [call] = callsOf(first.events);
      if (!call) throw new Error("no call");
      const next: ModelRequestInput = {
        ...request,
        messages: [
          user("What is the capital of PotatoLand?"),
          {
            type: "message",
            role: "assistant",
            content: textOf(first.events),
            extra: { reasoning: endOf(first.events).reasoning },
          },
          {
            type: "function_call",
            callId: call.id,
            name: call.name,
            arguments: call.arguments,
            metadata: call.metadata ?? {},
          },
          { type: "function_call_output", callId: call.id, name: call.name, output: "Spudville" },
        ],
      };
      const { body } = await run("gpt-5.5", next, { fixture: `${DIR}/text.sse` });
      const { content: _unmodelled, ...received } = doneItem(
        "text-then-function-call",
        "reasoning",
      );
      expect(_unmodelled).toEqual([]);
      expect(body.input).toEqual([
        { role: "user", content: "What is the capital of PotatoLand?" },
        received,
        { role: "assistant", content: text },
        {
          type: "function_call",
          id: "fc_0fabc13af1ee0049006a691dff0c1481a1b4a0eec7e3c753bb",
          call_id: "call_LabG58Uhrq9kZvR52BYKjToD",
          name: "get_capital",
          arguments: '{"country":"PotatoLand"}',
        },
        {
          type: "function_call_output",
          call_id: "call_LabG58Uhrq9kZvR52BYKjToD",
          output: "Spudville",
        },
      ]);
    });
  });

  describe("errors", () => {
    it("H7: an error event inside a 200 stream (insufficient_quota) throws a stream error, not retryable", async () => {
      let seed = 7;
      for (const maxChunk of [1 << 20, 1, 5, 13]) {
        const error = await failure(
          run(
            "gpt-5-nano",
            { messages: [user("Hi")] },
            { fixture: `${DIR}/error-event-insufficient-quota.sse` },
            {
              seed: seed++,
              maxChunk,
            },
          ),
        );
        expect(error.kind).toBe("stream");
        expect(error.code).toBe("insufficient_quota");
        expect(error.retryable).toBe(false);
        expect(error.status).toBeNull();
        expect(error.requestId).toBe("resp_05500b38c2cd9bfc00691c7c9d222481a3b595421266dab424");
        expect(error.message).toContain("You exceeded your current quota");
      }
    });

    it("H7: HTTP 400 invalid_request_error (error-400-invalid-request.json + .request.json + .response-meta.json)", async () => {
      // Our request schema refuses temperature -1, so the recorded value goes through providerOptions.
      expect(() => ModelRequest.parse({ messages: [], temperature: -1 })).toThrow();
      const request: ModelRequestInput = {
        messages: [user("What is the capital of France?")],
        providerOptions: { temperature: -1 },
      };
      const fake = new FakeProvider().reply({ fixture: `${DIR}/error-400-invalid-request.json` });
      const error = await failure(
        collectBatches(
          model("gpt-4o").streamBatches(ModelRequest.parse(request), { fetch: fake.fetch }),
        ),
      );
      expectShape(fake.requests[0]?.body ?? {}, recorded("error-400-invalid-request"), {
        instructions: NO_EMPTY_INSTRUCTIONS,
        store: NOT_STORED,
      });
      expect(error).toMatchObject({
        provider: "openai-responses",
        kind: "http",
        status: 400,
        code: "decimal_below_min_value",
        retryable: false,
      });
      expect(error.message).toContain("Invalid 'temperature'");
    });

    it("H7: HTTP 400 for an unknown model (error-400-model-not-found.json + .request.json + .response-meta.json)", async () => {
      const fake = new FakeProvider().reply({ fixture: `${DIR}/error-400-model-not-found.json` });
      const error = await failure(
        collectBatches(
          model("gpt-5.2-proo").streamBatches(ModelRequest.parse({ messages: [user("hello")] }), {
            fetch: fake.fetch,
          }),
        ),
      );
      expectShape(fake.requests[0]?.body ?? {}, recorded("error-400-model-not-found"), {
        stream: "we always stream",
        store: NOT_STORED,
      });
      expect(error).toMatchObject({
        kind: "http",
        status: 400,
        code: "model_not_found",
        retryable: false,
      });
      expect(error.message).toContain("The requested model 'gpt-5.2-proo' does not exist.");
    });

    it("a body that ends without response.completed throws a stream error", async () => {
      const full = fixtureText(`${DIR}/text.sse`);
      const body = full.slice(0, full.indexOf("event: response.completed"));
      const error = await failure(run("gpt-4o", { messages: [user("Hi")] }, { status: 200, body }));
      expect(error.kind).toBe("stream");
      expect(error.retryable).toBe(true);
    });

    it("a connection cut mid-stream is a network error", async () => {
      const error = await failure(
        run(
          "gpt-4o",
          { messages: [user("Hi")] },
          { fixture: `${DIR}/text.sse`, cutAfterBytes: 2500 },
        ),
      );
      expect(error.kind).toBe("network");
    });
  });
});

/** A synthetic Responses stream in the recorded framing. */
function sse(...events: Record<string, unknown>[]): string {
  return events
    .map(
      (event, i) =>
        `event: ${event.type}\ndata: ${JSON.stringify({ ...event, sequence_number: i })}\n\n`,
    )
    .join("");
}

const created = {
  type: "response.created",
  response: { id: "resp_1", model: "gpt-4o-mini-2024-07-18", status: "in_progress" },
};
const delta = (text: string) => ({
  type: "response.output_text.delta",
  item_id: "msg_1",
  output_index: 0,
  content_index: 0,
  delta: text,
});
const usageWire = { input_tokens: 10, output_tokens: 4, total_tokens: 14 };

describe("openai-responses stream edge cases", () => {
  it("G11: response.incomplete for max_output_tokens is stop reason length, with usage", async () => {
    const body = sse(created, delta("Hel"), {
      type: "response.incomplete",
      response: {
        id: "resp_1",
        status: "incomplete",
        incomplete_details: { reason: "max_output_tokens" },
        usage: usageWire,
      },
    });
    const { events } = await run(
      "gpt-4o-mini",
      { messages: [user("Hi")], maxTokens: 4 },
      { status: 200, body },
    );
    const end = endOf(events);
    expect(end.stopReason).toBe("length");
    expect(end.providerStopReason).toBe("max_output_tokens");
    expect(end.usage?.totalTokens).toBe(14);
    expect(textOf(events)).toBe("Hel");
  });

  it("G11: response.incomplete for content_filter is stop reason content_filter", async () => {
    const body = sse(created, {
      type: "response.incomplete",
      response: {
        id: "resp_1",
        status: "incomplete",
        incomplete_details: { reason: "content_filter" },
      },
    });
    const { events } = await run("gpt-4o-mini", { messages: [user("Hi")] }, { status: 200, body });
    expect(endOf(events)).toMatchObject({
      stopReason: "content_filter",
      usage: null,
      costEstimate: null,
    });
  });

  it("H7: response.failed with server_error is retryable; an error event with top-level code rate_limit_exceeded too", async () => {
    const failed = sse(created, {
      type: "response.failed",
      response: {
        id: "resp_1",
        status: "failed",
        error: { code: "server_error", message: "boom" },
      },
    });
    const a = await failure(
      run("gpt-4o-mini", { messages: [user("Hi")] }, { status: 200, body: failed }),
    );
    expect(a).toMatchObject({
      kind: "stream",
      code: "server_error",
      retryable: true,
      requestId: "resp_1",
    });
    const limited = sse(created, {
      type: "error",
      code: "rate_limit_exceeded",
      message: "slow down",
      param: null,
    });
    const b = await failure(
      run("gpt-4o-mini", { messages: [user("Hi")] }, { status: 200, body: limited }),
    );
    expect(b).toMatchObject({ kind: "stream", code: "rate_limit_exceeded", retryable: true });
    expect(b.message).toContain("slow down");
  });

  it("G13: unknown event types are ignored; nothing after the terminal event counts", async () => {
    const completed = {
      type: "response.completed",
      response: { id: "resp_1", status: "completed", usage: usageWire },
    };
    const plain = await run(
      "gpt-4o-mini",
      { messages: [user("Hi")] },
      { status: 200, body: sse(created, delta("Hi!"), completed) },
    );
    const noisy = await run(
      "gpt-4o-mini",
      { messages: [user("Hi")] },
      {
        status: 200,
        body: sse(
          created,
          { type: "response.web_search_call.searching", item_id: "ws_1" },
          delta("Hi!"),
          { type: "response.brand_new_event", whatever: [1, 2] },
          completed,
          delta(" late"),
        ),
      },
    );
    expect(noisy.events).toEqual(plain.events);
    expect(textOf(plain.events)).toBe("Hi!");
  });

  it("G9: a call sent whole (arguments only on .done) still ends with its arguments", async () => {
    const body = sse(
      created,
      {
        type: "response.output_item.added",
        output_index: 0,
        item: {
          type: "function_call",
          id: "fc_1",
          call_id: "call_1",
          name: "lookup",
          arguments: "",
        },
      },
      {
        type: "response.function_call_arguments.done",
        item_id: "fc_1",
        output_index: 0,
        arguments: '{"q":"x"}',
      },
      { type: "response.completed", response: { id: "resp_1", status: "completed" } },
    );
    const { events } = await run("gpt-4o-mini", { messages: [user("Hi")] }, { status: 200, body });
    expect(callsOf(events)).toEqual([
      {
        id: "call_1",
        name: "lookup",
        arguments: '{"q":"x"}',
        input: { q: "x" },
        metadata: { itemId: "fc_1" },
      },
    ]);
    expect(endOf(events).stopReason).toBe("tool_calls");
  });
});

describe("openai-responses request conversion", () => {
  const body = (request: ModelRequestInput, reasoningModel = false): ResponsesBody =>
    responsesBody(ModelRequest.parse(request), { model: "m", reasoningModel });

  it("G3: temperature 0 is sent, with top_p, max_output_tokens, metadata; providerOptions merge last", () => {
    const b = body({
      messages: [user("Hi")],
      temperature: 0,
      topP: 0.5,
      maxTokens: 100,
      metadata: { session: "s1" },
      providerOptions: { store: true, parallel_tool_calls: false },
    });
    expect(b).toMatchObject({
      temperature: 0,
      top_p: 0.5,
      max_output_tokens: 100,
      metadata: { session: "s1" },
      store: true,
      parallel_tool_calls: false,
      stream: true,
    });
    expect("include" in b).toBe(false);
  });

  it("G18: outputSchema → text.format json_schema; toolChoice by name and none", () => {
    const schema = { type: "object", properties: { city: { type: "string" } } };
    expect(
      body({ messages: [user("Hi")], outputSchema: schema, outputName: "answer" }).text,
    ).toEqual({
      format: { type: "json_schema", name: "answer", schema },
    });
    expect(body({ messages: [user("Hi")], toolChoice: { name: "f" } }).tool_choice).toEqual({
      type: "function",
      name: "f",
    });
    expect(body({ messages: [user("Hi")], toolChoice: "none" }).tool_choice).toBe("none");
  });

  it("G4: system + first instruction message → instructions; later ones developer for reasoning models, system otherwise", () => {
    const request: ModelRequestInput = {
      system: "Be brief.",
      messages: [
        { type: "message", role: "system", content: "You are a guide." },
        user("Hi"),
        { type: "message", role: "assistant", content: "Hello" },
        { type: "message", role: "developer", content: "Now answer in French." },
        user("Ok"),
      ],
    };
    const reasoning = body(request, true);
    expect(reasoning.instructions).toBe("Be brief.\n\nYou are a guide.");
    expect(reasoning.input).toEqual([
      { role: "user", content: "Hi" },
      { role: "assistant", content: "Hello" },
      { role: "developer", content: "Now answer in French." },
      { role: "user", content: "Ok" },
    ]);
    expect(reasoning.include).toEqual(["reasoning.encrypted_content"]);
    const plain = body(request, false);
    expect(plain.input[2]).toEqual({ role: "system", content: "Now answer in French." });
    expect("include" in plain).toBe(false);
  });

  it("G2/G4: images → input_image, detail only when not auto, bytes as a data URL", () => {
    const b = body({
      messages: [
        {
          type: "message",
          role: "user",
          content: [
            "What is this?",
            { type: "image", url: "https://example.com/cat.png" },
            { type: "image", bytes: "aGVsbG8=", mediaType: "image/png", detail: "low" },
          ],
        },
      ],
    });
    expect(b.input).toEqual([
      {
        role: "user",
        content: [
          { type: "input_text", text: "What is this?" },
          { type: "input_image", image_url: "https://example.com/cat.png" },
          { type: "input_image", image_url: "data:image/png;base64,aGVsbG8=", detail: "low" },
        ],
      },
    ]);
    const error = (() => {
      try {
        body({
          messages: [
            { type: "message", role: "user", content: [{ type: "image", bytes: "aGVsbG8=" }] },
          ],
        });
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as ProviderError).kind).toBe("config");
  });

  it("G7: handoffs and config updates never reach the provider; updated instructions do", () => {
    const b = body({
      messages: [
        { type: "message", role: "system", content: "Old rules." },
        user("Hi"),
        { type: "agent_handoff", toAgent: "billing" },
        { type: "agent_config_update", instructions: "New rules." },
        user("Again"),
      ],
    });
    expect(b.instructions).toBe("New rules.");
    expect(b.input).toEqual([
      { role: "user", content: "Hi" },
      { role: "user", content: "Again" },
    ]);
  });

  it("better: an fc_ id is sent only with its turn's reasoning item; unusable reasoning is left out", () => {
    const stale: ReasoningBlock[] = [
      { provider: "openai-responses", id: "rs_1", text: "" }, // no encrypted content
      { provider: "anthropic", text: "thinking", signature: "sig" },
    ];
    const b = body({
      messages: [
        user("Hi"),
        {
          type: "function_call",
          callId: "call_1",
          name: "f",
          arguments: "{}",
          metadata: { itemId: "fc_1", reasoning: stale },
        },
        {
          type: "function_call",
          callId: "call_2",
          name: "f",
          arguments: "{}",
          metadata: { itemId: "fc_2" },
        },
        { type: "function_call_output", callId: "call_1", name: "f", output: "a" },
        { type: "function_call_output", callId: "call_2", name: "f", output: "b" },
      ],
    });
    expect(b.input).toEqual([
      { role: "user", content: "Hi" },
      { type: "function_call", call_id: "call_1", name: "f", arguments: "{}" },
      { type: "function_call", call_id: "call_2", name: "f", arguments: "{}" },
      { type: "function_call_output", call_id: "call_1", output: "a" },
      { type: "function_call_output", call_id: "call_2", output: "b" },
    ]);
  });

  it("G9: parallel calls of a replayed turn all carry their ids; an output without its call is dropped", () => {
    const reasoning: ReasoningBlock[] = [
      { provider: "openai-responses", id: "rs_1", encrypted: "enc", text: "" },
    ];
    const b = body({
      messages: [
        user("Hi"),
        {
          type: "function_call",
          callId: "call_1",
          name: "f",
          arguments: "{}",
          metadata: { itemId: "fc_1", reasoning },
        },
        {
          type: "function_call",
          callId: "call_2",
          name: "f",
          arguments: "{}",
          metadata: { itemId: "fc_2" },
        },
        { type: "function_call_output", callId: "call_1", name: "f", output: "a" },
        { type: "function_call_output", callId: "call_2", name: "f", output: "b" },
        { type: "function_call_output", callId: "call_gone", name: "f", output: "orphan" },
      ],
    });
    expect(b.input).toEqual([
      { role: "user", content: "Hi" },
      { type: "reasoning", id: "rs_1", encrypted_content: "enc", summary: [] },
      { type: "function_call", id: "fc_1", call_id: "call_1", name: "f", arguments: "{}" },
      { type: "function_call", id: "fc_2", call_id: "call_2", name: "f", arguments: "{}" },
      { type: "function_call_output", call_id: "call_1", output: "a" },
      { type: "function_call_output", call_id: "call_2", output: "b" },
    ]);
  });

  it("G16: stop sequences are refused with a config error (the Responses API has none)", () => {
    expect(() => body({ messages: [user("Hi")], stop: ["\n"] })).toThrow(/no stop sequences/);
  });
});

describe("openai-responses transport", () => {
  const request = ModelRequest.parse({ messages: [user("Hi")] });

  it("key and base URL come from the env (OPENAI_API_KEY, OPENAI_BASE_URL)", async () => {
    const fake = new FakeProvider().reply({ fixture: `${DIR}/text.sse` });
    await collectBatches(
      openaiResponses({ model: "gpt-4o" }).streamBatches(request, {
        fetch: fake.fetch,
        env: { OPENAI_API_KEY: "sk-env", OPENAI_BASE_URL: "https://gateway.test/openai/" },
      }),
    );
    expect(fake.requests[0]?.url).toBe("https://gateway.test/openai/responses");
    expect(fake.requests[0]?.headers.get("authorization")).toBe("Bearer sk-env");
  });

  it("G4: a reasoning model the price table does not list is known by name; capabilities override", async () => {
    const o1 = await run("o1", { messages: [user("Hi")] }, { fixture: `${DIR}/text.sse` });
    expect(o1.body.include).toEqual(["reasoning.encrypted_content"]);
    expect(model("o1").capabilities.reasoning).toBe(true);
    const off = await run(
      "o1",
      { messages: [user("Hi")] },
      { fixture: `${DIR}/text.sse` },
      {},
      {
        capabilities: { reasoning: false },
      },
    );
    expect("include" in off.body).toBe(false);
    expect(model("gpt-4o").capabilities.reasoning).toBe(false);
  });

  it("the public endpoint is the default", async () => {
    const fake = new FakeProvider().reply({ fixture: `${DIR}/text.sse` });
    await collectBatches(
      openaiResponses({ model: "gpt-4o", apiKey: "sk" }).streamBatches(request, {
        fetch: fake.fetch,
      }),
    );
    expect(fake.requests[0]?.url).toBe("https://api.openai.com/v1/responses");
  });

  it("a missing key is a config error before any request", async () => {
    const fake = new FakeProvider();
    const error = await failure(
      collectBatches(
        openaiResponses({ model: "gpt-4o" }).streamBatches(request, { fetch: fake.fetch, env: {} }),
      ),
    );
    expect(error.kind).toBe("config");
    expect(error.message).toContain("OPENAI_API_KEY");
    expect(fake.requests).toHaveLength(0);
  });

  it("aborting the signal cancels the call at once", async () => {
    const fake = new FakeProvider().reply({ hang: true });
    const controller = new AbortController();
    const pending = collectBatches(
      model("gpt-4o").streamBatches(request, { fetch: fake.fetch, signal: controller.signal }),
    );
    setTimeout(() => controller.abort(), 5);
    const error = await failure(pending);
    expect(error.kind).toBe("aborted");
  });
});
