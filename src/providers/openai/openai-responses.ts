import { ProviderError } from "../base/errors";
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
import { OPENAI_RESPONSES, responsesBody } from "./openai-responses-body";
import { responsesDecoder } from "./openai-responses-decode";

export { OPENAI_RESPONSES, type ResponsesBody, responsesBody } from "./openai-responses-body";
export { responsesDecoder } from "./openai-responses-decode";

/** The public API; `OPENAI_BASE_URL` or `baseUrl` point elsewhere (a gateway, a proxy). */
export const OPENAI_RESPONSES_BASE_URL = "https://api.openai.com/v1";

export interface OpenAIResponsesOptions extends HttpProviderOptions {
  /**
   * Overrides what the price table knows about the model. `reasoning` decides whether
   * encrypted reasoning is asked for and whether later instruction messages go as
   * `developer`.
   */
  capabilities?: Partial<ModelCapabilities>;
  /** Sends `strict: true` on every tool schema (each must then meet OpenAI's strict rules). */
  strictTools?: boolean;
}

/**
 * A model behind OpenAI's Responses API (`POST {base}/responses`, streamed). Reasoning
 * models hand back encrypted reasoning items, surfaced in `message_end.reasoning`; store
 * them on the assistant turn and they are replayed on the next call.
 * @example
 * const model = openaiResponses({ model: "gpt-5-mini" });
 * const response = await generate(model, {
 *   messages: [{ role: "user", content: "Capital of France?" }],
 *   reasoning: { effort: "low" },
 * }, { env }); // key from env.OPENAI_API_KEY
 */
export function openaiResponses(options: OpenAIResponsesOptions): Model {
  const capabilities = capabilitiesFor(options.model, {
    reasoning: reasonsByName(options.model) || capabilitiesFor(options.model).reasoning,
    ...options.capabilities,
  });
  return {
    provider: OPENAI_RESPONSES,
    model: options.model,
    capabilities,
    configProblems: (env) =>
      endpointProblems(
        {
          provider: OPENAI_RESPONSES,
          model: options.model,
          explicitKey: options.apiKey,
          keyVariable: "OPENAI_API_KEY",
          baseUrl:
            options.baseUrl ?? envString(env, "OPENAI_BASE_URL") ?? OPENAI_RESPONSES_BASE_URL,
          versioned: true,
        },
        env,
      ),
    streamBatches(request: ModelRequest, call: CallOptions = {}): AsyncGenerator<StreamEvent[]> {
      const stallMs = options.stallMs ?? DEFAULT_STALL_MS;
      // Sent by the first read, as a generator's body would be: nothing before iterating.
      const open = async (): Promise<OpenedBody> => {
        const apiKey = requireKey(OPENAI_RESPONSES, options.apiKey, call.env, "OPENAI_API_KEY");
        const base =
          options.baseUrl ?? envString(call.env, "OPENAI_BASE_URL") ?? OPENAI_RESPONSES_BASE_URL;
        const body = responsesBody(request, {
          model: options.model,
          reasoningModel: capabilities.reasoning,
          strictTools: options.strictTools ?? false,
        });
        const response = await postJson({
          provider: OPENAI_RESPONSES,
          url: joinUrl(base, "responses"),
          headers: {
            authorization: `Bearer ${apiKey}`,
            accept: "text/event-stream",
            ...options.headers,
          },
          body,
          options: call,
          stallMs,
        });
        if (!response.body) {
          throw new ProviderError({
            provider: OPENAI_RESPONSES,
            kind: "stream",
            message: "the response had no body",
            retryable: true,
          });
        }
        const decoder = responsesDecoder({
          model: options.model,
          requestId: requestIdOf(response.headers),
          capabilities,
        });
        return { body: response.body, decoder };
      };
      return decodeOpened(open, {
        provider: OPENAI_RESPONSES,
        signal: call.signal,
        stallMs,
        raw: call.raw,
      });
    },
  };
}

/** OpenAI reasoning models the price table may not list yet (o1, a new gpt-5.x), by name. */
function reasonsByName(model: string): boolean {
  return /^(o\d|gpt-5|codex)/.test(model.slice(model.lastIndexOf("/") + 1));
}
