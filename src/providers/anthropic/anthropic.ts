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
import { outputMode, toAnthropicBody } from "./anthropic-body";
import { ANTHROPIC } from "./anthropic-messages";
import { anthropicDecoder } from "./anthropic-stream";

export {
  type AnthropicBody,
  addCacheBreakpoints,
  EFFORT_BUDGET_TOKENS,
  outputMode,
  toAnthropicBody,
} from "./anthropic-body";
export {
  type AnthropicBlock,
  type AnthropicMessage,
  type CacheControl,
  LEADING_USER_TEXT,
} from "./anthropic-messages";
export { anthropicDecoder } from "./anthropic-stream";

export const ANTHROPIC_DEFAULT_BASE_URL = "https://api.anthropic.com";
export const ANTHROPIC_VERSION = "2023-06-01";
/** `max_tokens` for a model whose output limit we do not know; the API requires a value. */
export const ANTHROPIC_FALLBACK_MAX_TOKENS = 4096;

export interface AnthropicOptions extends HttpProviderOptions {
  /** Overrides the known flags, limits and prices of the model. */
  capabilities?: Partial<ModelCapabilities>;
  /**
   * `max_tokens` when a request sets no `maxTokens`. Default: the model's output limit
   * (`capabilities.maxOutputTokens`), or 4096 when it is unknown. With thinking on, a
   * default at or below the thinking budget is raised to the budget plus 4096.
   */
  defaultMaxTokens?: number;
  /** The `anthropic-version` header; default `2023-06-01`. */
  version?: string;
  /**
   * Prompt caching: mark `cache_control` breakpoints on the instructions, the tools and the
   * conversation before the newest message, so the next turn reads that prefix from the
   * cache (cheaper, faster). Cache reads and writes are reported in `usage`
   * (`cachedPromptTokens`, `cacheWritePromptTokens`) and priced. Default `false`.
   * @example
   * anthropic({ model: "claude-sonnet-4-5", promptCaching: true });
   */
  promptCaching?: boolean;
}

/**
 * A model of the Anthropic Messages API (`POST {base}/v1/messages`, streamed). The key is
 * `apiKey` or the `ANTHROPIC_API_KEY` secret; the base URL is `baseUrl`, the
 * `ANTHROPIC_BASE_URL` variable (an AI Gateway, a proxy) or `https://api.anthropic.com`.
 * @example
 * const model = anthropic({ model: "claude-haiku-4-5" });
 * const response = await generate(model, {
 *   messages: [{ role: "user", content: "Capital of France?" }],
 *   maxTokens: 256,
 * }, { env });
 * response.text; // "Paris."
 */
export function anthropic(options: AnthropicOptions): Model {
  const capabilities = capabilitiesFor(options.model, options.capabilities);
  const defaultMaxTokens =
    options.defaultMaxTokens ?? capabilities.maxOutputTokens ?? ANTHROPIC_FALLBACK_MAX_TOKENS;
  const stallMs = options.stallMs ?? DEFAULT_STALL_MS;
  return {
    provider: ANTHROPIC,
    model: options.model,
    capabilities,
    configProblems: (env) =>
      endpointProblems(
        {
          provider: ANTHROPIC,
          model: options.model,
          explicitKey: options.apiKey,
          keyVariable: "ANTHROPIC_API_KEY",
          baseUrl:
            options.baseUrl ?? envString(env, "ANTHROPIC_BASE_URL") ?? ANTHROPIC_DEFAULT_BASE_URL,
          // The adapter appends `v1/messages` itself.
          versioned: false,
        },
        env,
      ),
    streamBatches(request: ModelRequest, call: CallOptions = {}): AsyncGenerator<StreamEvent[]> {
      // Sent by the first read, as a generator's body would be: nothing before iterating.
      const open = async (): Promise<OpenedBody> => {
        const apiKey = requireKey(ANTHROPIC, options.apiKey, call.env, "ANTHROPIC_API_KEY");
        const base =
          options.baseUrl ??
          envString(call.env, "ANTHROPIC_BASE_URL") ??
          ANTHROPIC_DEFAULT_BASE_URL;
        const response = await postJson({
          provider: ANTHROPIC,
          url: joinUrl(base, "v1/messages"),
          headers: {
            "x-api-key": apiKey,
            "anthropic-version": options.version ?? ANTHROPIC_VERSION,
            accept: "text/event-stream",
            ...options.headers,
          },
          body: toAnthropicBody(request, {
            model: options.model,
            maxTokens: defaultMaxTokens,
            promptCaching: options.promptCaching ?? false,
          }),
          options: call,
          stallMs,
        });
        if (!response.body) {
          throw new ProviderError({
            provider: ANTHROPIC,
            kind: "stream",
            message: "anthropic answered without a body",
          });
        }
        const decoder = anthropicDecoder({
          model: options.model,
          capabilities,
          requestId: requestIdOf(response.headers),
          outputTool: outputMode(request) === "tool" ? request.outputName : null,
          includeReasoning: request.reasoning?.include ?? true,
        });
        return { body: response.body, decoder };
      };
      return decodeOpened(open, {
        provider: ANTHROPIC,
        signal: call.signal,
        stallMs,
        raw: call.raw,
      });
    },
  };
}
