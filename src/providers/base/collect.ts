import type { JsonObject } from "../../protocol/json";
import { checkOutput } from "./output";
import {
  type CallOptions,
  type Model,
  ModelRequest,
  type ModelRequestInput,
  type ModelResponse,
  type StreamEvent,
} from "./types";

/**
 * The events of one call, one at a time.
 * @example
 * for await (const event of streamEvents(model, { messages: [{ role: "user", content: "Hi" }] })) {
 *   if (event.type === "text_delta") console.log(event.text);
 * }
 */
export async function* streamEvents(
  model: Model,
  request: ModelRequestInput,
  options: CallOptions = {},
): AsyncGenerator<StreamEvent> {
  for await (const batch of model.streamBatches(ModelRequest.parse(request), options)) yield* batch;
}

/**
 * Runs a call to the end and returns what it added up to: the text, tool calls,
 * usage, cost, stop reason, latency and time to first token.
 * @example
 * const response = await generate(openai({ model: "gpt-4o-mini" }), {
 *   messages: [{ role: "user", content: "Capital of France?" }],
 * }, { env });
 * response.text; // "Paris."
 */
export async function generate(
  model: Model,
  request: ModelRequestInput,
  options: CallOptions & { now?: () => number } = {},
): Promise<ModelResponse> {
  const parsed = ModelRequest.parse(request);
  const now = options.now ?? Date.now;
  const started = now();
  const response = emptyResponse(model);
  const text: string[] = [];
  const reasoning: string[] = [];
  const raw: unknown[] | null = options.raw ? [] : null;
  for await (const batch of model.streamBatches(parsed, options)) {
    for (const event of batch) {
      if (raw && event.raw !== undefined && event.raw !== raw.at(-1)) raw.push(event.raw);
      if (response.timeToFirstTokenMs === null && isFirstToken(event)) {
        response.timeToFirstTokenMs = now() - started;
      }
      applyEvent(response, event, text, reasoning);
    }
  }
  response.text = text.join("");
  response.reasoning = reasoning.join("");
  response.latencyMs = now() - started;
  if (raw) response.raw = raw;
  if (parsed.outputSchema) parseOutput(response, parsed.outputSchema);
  return response;
}

/** The first piece of an answer: visible text, thinking or a tool call. */
export function isFirstToken(event: StreamEvent): boolean {
  return (
    event.type === "text_delta" ||
    event.type === "reasoning_delta" ||
    event.type === "tool_call_start"
  );
}

function emptyResponse(model: Model): ModelResponse {
  return {
    text: "",
    reasoning: "",
    reasoningBlocks: [],
    output: undefined,
    outputError: null,
    provider: model.provider,
    model: model.model,
    usage: null,
    stopReason: "other",
    providerStopReason: null,
    toolCalls: [],
    latencyMs: 0,
    timeToFirstTokenMs: null,
    costEstimate: null,
    requestId: null,
  };
}

function applyEvent(
  response: ModelResponse,
  event: StreamEvent,
  text: string[],
  reasoning: string[],
): void {
  switch (event.type) {
    case "message_start":
      response.provider = event.provider;
      response.model = event.model;
      response.requestId = event.requestId;
      return;
    case "text_delta":
      text.push(event.text);
      return;
    case "reasoning_delta":
      reasoning.push(event.text);
      return;
    case "tool_call_end":
      response.toolCalls.push(event.call);
      return;
    case "usage":
      response.usage = event.usage;
      return;
    case "message_end":
      response.stopReason = event.stopReason;
      response.providerStopReason = event.providerStopReason;
      response.usage = event.usage ?? response.usage;
      response.reasoningBlocks = event.reasoning;
      response.costEstimate = event.costEstimate;
      return;
    default:
      return;
  }
}

/** The answer must be JSON matching the schema; a failure is reported, not thrown. */
function parseOutput(response: ModelResponse, schema: JsonObject): void {
  const checked = checkOutput(response.toolCalls.length === 0 ? response.text : "", schema);
  response.output = checked.output;
  response.outputError = checked.error;
}
