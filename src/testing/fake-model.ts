import type { JsonObject } from "../protocol/json";
import { ProviderError } from "../providers/base/errors";
import type {
  CallOptions,
  Model,
  ModelCapabilities,
  ModelRequest,
  StreamEvent,
  ToolCall,
} from "../providers/base/types";

/** A tool call a fake model makes: the tool's name and its arguments. */
export interface FakeToolCall {
  name: string;
  input?: JsonObject;
  /** The call's id; default `call_<n>`, counted over the model's calls. */
  id?: string;
}

/**
 * One answer of a fake model: its text, or tool calls (with text before them, if any), or
 * an error the call throws, or a function of the request that returns one of those.
 */
export type FakeReply =
  | string
  | { text?: string; toolCalls?: readonly FakeToolCall[] }
  | Error
  | ((request: ModelRequest) => FakeReply);

/** What `fakeModel` returns: a model, the requests it was sent, and more answers to queue. */
export interface FakeModel extends Model {
  /** Every request the model was sent, in order (the tools offered, the messages, ...). */
  readonly requests: readonly ModelRequest[];
  /** Queues answers for the next calls. */
  reply(...replies: FakeReply[]): FakeModel;
}

/** Options of `fakeModel`. */
export interface FakeModelOptions {
  provider?: string;
  model?: string;
  capabilities?: Partial<ModelCapabilities>;
}

const CAPABILITIES: ModelCapabilities = {
  streaming: true,
  tools: true,
  parallelToolCalls: true,
  structuredOutput: false,
  vision: false,
  reasoning: false,
  contextWindow: null,
  maxOutputTokens: null,
  inputPricePerMillion: null,
  outputPricePerMillion: null,
  cachedInputPricePerMillion: null,
};

/** The most answers one fake model holds: a test queues a handful. */
const MAX_QUEUED = 1_000;

/**
 * A model for your agent's tests: each call answers with the next queued reply, streamed
 * word by word as a provider would, tool calls included, without any network or key.
 * A call with no reply left fails with a `ProviderError` saying so.
 * @example
 * ```ts
 * const model = fakeModel([
 *   { toolCalls: [{ name: "get_capital", input: { country: "France" } }] },
 *   "The capital of France is Paris.",
 * ]);
 * const worker = defineAgent({ card, model, tools });
 * // ... send a message, then check what the model was asked:
 * expect(model.requests[1]?.messages.at(-1)?.type).toBe("function_call_output");
 * ```
 */
export function fakeModel(
  replies: readonly FakeReply[] = [],
  options: FakeModelOptions = {},
): FakeModel {
  const provider = options.provider ?? "fake";
  const name = options.model ?? "fake-model";
  const queue: FakeReply[] = [];
  const requests: ModelRequest[] = [];
  let callIds = 0;

  const model: FakeModel = {
    provider,
    model: name,
    capabilities: { ...CAPABILITIES, ...options.capabilities },
    requests,
    reply(...more) {
      if (queue.length + more.length > MAX_QUEUED) {
        throw new RangeError(`fakeModel holds at most ${MAX_QUEUED} queued replies`);
      }
      queue.push(...more);
      return model;
    },
    async *streamBatches(request: ModelRequest, call: CallOptions = {}) {
      requests.push(structuredClone(request));
      const aborted = () =>
        new ProviderError({ provider, kind: "aborted", message: "the call was canceled" });
      if (call.signal?.aborted) throw aborted();
      let next = queue.shift();
      if (next === undefined) {
        throw new ProviderError({
          provider,
          kind: "config",
          message: `fakeModel: no reply queued for call ${requests.length}`,
        });
      }
      while (typeof next === "function") next = next(request);
      if (next instanceof Error) throw next;
      const answer = typeof next === "string" ? { text: next } : next;
      yield [{ type: "message_start", provider, model: name, requestId: null }];
      // Word by word, each word with the space after it, as providers stream.
      for (const piece of (answer.text ?? "").match(/\S+\s*|\s+/g) ?? []) {
        if (call.signal?.aborted) throw aborted();
        yield [{ type: "text_delta", text: piece }];
      }
      const calls = (answer.toolCalls ?? []).map((c, index): ToolCall & { index: number } => ({
        index,
        id: c.id ?? `call_${++callIds}`,
        name: c.name,
        arguments: JSON.stringify(c.input ?? {}),
        input: c.input ?? {},
      }));
      for (const { index, ...toolCall } of calls) {
        yield [
          { type: "tool_call_start", index, id: toolCall.id, name: toolCall.name },
          { type: "tool_call_delta", index, id: toolCall.id, argumentsDelta: toolCall.arguments },
          { type: "tool_call_end", index, call: toolCall },
        ] satisfies StreamEvent[];
      }
      const stopReason = calls.length > 0 ? "tool_calls" : "stop";
      yield [
        {
          type: "message_end",
          stopReason,
          providerStopReason: stopReason,
          usage: null,
          reasoning: [],
          costEstimate: null,
        },
      ];
    },
  };
  model.reply(...replies);
  return model;
}
