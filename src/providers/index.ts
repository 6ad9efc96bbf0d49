/**
 * `edgelink/providers`: models for an agent (OpenAI Chat and Responses, Anthropic, Gemini,
 * Workers AI, any OpenAI-compatible server), the wrappers that make them reliable (retry,
 * fallback, routing, a reasoning strategy, per-call overrides, think-tag stripping), their
 * one normalized event stream, `generate` / `streamEvents` to call a model directly, and
 * `ModelSettings` (an agent's request settings for its model).
 * Web APIs only.
 * @example
 * ```ts
 * import { defineAgent } from "edgelink";
 * import { anthropic, fallback, openai, withRetry } from "edgelink/providers";
 * const model = fallback([withRetry(openai({ model: "gpt-4o-mini" })), anthropic({ model: "claude-haiku-4-5" })]);
 * export default defineAgent({ card, model });
 * ```
 * @packageDocumentation
 */
export { type AnthropicOptions, anthropic } from "./anthropic/anthropic";
export { generate, streamEvents } from "./base/collect";
export { AllProvidersFailedError, ProviderError, type ProviderErrorKind } from "./base/errors";
export type { HttpProviderOptions } from "./base/http";
export type {
  CallOptions,
  FailoverStore,
  Model,
  ModelCapabilities,
  ModelRequest,
  ModelRequestInput,
  ModelResponse,
  ModelSettings,
  StreamEvent,
  Usage,
} from "./base/types";
export { type FallbackModel, type FallbackOptions, fallback } from "./fallback";
export { type GeminiOptions, gemini } from "./gemini/gemini";
export { type OpenAIOptions, openai } from "./openai/openai-chat";
export { type OpenAICompatibleOptions, openaiCompatible } from "./openai/openai-compatible";
export { type OpenAIResponsesOptions, openaiResponses } from "./openai/openai-responses";
export { type Overrides, withOverrides } from "./overrides";
export { type RetryOptions, withRetry } from "./retry";
export { type Route, type RouterOptions, type RouteStrategy, router } from "./router";
export { type StrategyMode, type StrategyOptions, withStrategy } from "./strategy";
export { stripThinkTags } from "./think-tags";
export { type AiBinding, type WorkersAIOptions, workersAI } from "./workers-ai/workers-ai";
