import {
  DEFAULT_STALL_MS,
  endpointProblems,
  envString,
  type HttpProviderOptions,
  joinUrl,
  postJson,
  requestIdOf,
  requireKey,
} from "../base/http";
import { capabilitiesFor } from "../base/pricing";
import { decodeOpened, type OpenedBody } from "../base/sse";
import type {
  CallOptions,
  Model,
  ModelCapabilities,
  ModelRequest,
  StreamEvent,
} from "../base/types";
import { type ChatFlavor, toChatCompletionsBody } from "./openai-chat-body";
import { ChatCompletionsDecoder } from "./openai-chat-decoder";

export {
  type ChatBodyContext,
  type ChatFlavor,
  chatMessages,
  isOpenAIReasoningModel,
  toChatCompletionsBody,
} from "./openai-chat-body";
export {
  ChatCompletionsDecoder,
  type ChatDecoderInit,
  chatStreamError,
  chatUsage,
  normalizeStop,
} from "./openai-chat-decoder";

export const OPENAI_BASE_URL = "https://api.openai.com/v1";

export interface OpenAIOptions extends HttpProviderOptions {
  /** Overrides what the price table knows about the model. */
  capabilities?: Partial<ModelCapabilities>;
}

/**
 * OpenAI Chat Completions (`POST {base}/chat/completions`, streamed with usage).
 * The key is `apiKey` or the `OPENAI_API_KEY` secret; the base URL is `baseUrl`, the
 * `OPENAI_BASE_URL` variable, or the public API.
 * @example
 * const model = openai({ model: "gpt-4o-mini" });
 * const response = await generate(model, { messages: [{ role: "user", content: "Hi" }] }, { env });
 */
export function openai(options: OpenAIOptions): Model {
  const provider = "openai";
  return chatCompletionsModel({
    provider,
    model: options.model,
    flavor: "openai",
    capabilities: capabilitiesFor(options.model, options.capabilities),
    stallMs: options.stallMs ?? DEFAULT_STALL_MS,
    url: (call) =>
      joinUrl(
        options.baseUrl ?? envString(call.env, "OPENAI_BASE_URL") ?? OPENAI_BASE_URL,
        "chat/completions",
      ),
    headers: (call) => ({
      authorization: `Bearer ${requireKey(provider, options.apiKey, call.env, "OPENAI_API_KEY")}`,
      ...options.headers,
    }),
    configProblems: (env) =>
      endpointProblems(
        {
          provider,
          model: options.model,
          explicitKey: options.apiKey,
          keyVariable: "OPENAI_API_KEY",
          baseUrl: options.baseUrl ?? envString(env, "OPENAI_BASE_URL") ?? OPENAI_BASE_URL,
          versioned: true,
        },
        env,
      ),
  });
}

/** Where and how to reach one Chat Completions endpoint. */
export interface ChatEndpoint {
  provider: string;
  model: string;
  flavor: ChatFlavor;
  capabilities: ModelCapabilities;
  stallMs: number;
  url(options: CallOptions): string;
  /** Auth and extra headers; may throw a `config` error (a missing key). */
  headers(options: CallOptions): Record<string, string>;
  /** What keeps this endpoint from being called in `env` (see `Model.configProblems`). */
  configProblems?(env: object | undefined): string[];
}

/**
 * A `Model` for any Chat Completions endpoint: the body from `toChatCompletionsBody`, the
 * stream through `ChatCompletionsDecoder`. `openai` and `openaiCompatible` are this with
 * their own URL, auth and flavor.
 */
export function chatCompletionsModel(endpoint: ChatEndpoint): Model {
  const { provider, model, capabilities, stallMs } = endpoint;
  return {
    provider,
    model,
    capabilities,
    ...(endpoint.configProblems ? { configProblems: endpoint.configProblems } : {}),
    streamBatches(request: ModelRequest, options: CallOptions = {}): AsyncGenerator<StreamEvent[]> {
      // Sent by the first read, as a generator's body would be: nothing before iterating.
      const open = async (): Promise<OpenedBody> => {
        // Configuration errors come before any network traffic.
        const body = toChatCompletionsBody(request, model, endpoint.flavor, {
          provider,
          capabilities,
        });
        const headers = endpoint.headers(options);
        const response = await postJson({
          provider,
          url: endpoint.url(options),
          headers,
          body,
          options,
          stallMs,
        });
        const decoder = new ChatCompletionsDecoder({
          provider,
          model,
          capabilities,
          requestId: requestIdOf(response.headers),
        });
        // No body reads as an empty stream, which the decoder reports as cut off.
        const stream = response.body ?? new ReadableStream<Uint8Array>({ start: (c) => c.close() });
        return { body: stream, decoder };
      };
      return decodeOpened(open, {
        provider,
        signal: options.signal,
        stallMs,
        raw: options.raw,
      });
    },
  };
}
