/**
 * Models: streaming provider adapters (OpenAI Chat and Responses, Anthropic, Gemini,
 * Workers AI, any OpenAI-compatible server), one normalized event stream, and the
 * wrappers that make them reliable (retry, fallback, routing, think-tag stripping).
 * @packageDocumentation
 */
export { type AnthropicOptions, anthropic } from "./anthropic";
export { generate, streamEvents } from "./collect";
export {
  AllProvidersFailedError,
  ProviderError,
  type ProviderErrorInit,
  type ProviderErrorKind,
} from "./errors";
export {
  type FailoverState,
  type FallbackModel,
  type FallbackOptions,
  fallback,
  type MemberState,
} from "./fallback";
export { type GeminiOptions, gemini } from "./gemini";
export type { HttpProviderOptions } from "./http";
export { type OpenAIOptions, openai } from "./openai-chat";
export { type OpenAICompatibleOptions, openaiCompatible } from "./openai-compatible";
export { type OpenAIResponsesOptions, openaiResponses } from "./openai-responses";
export { type Overrides, withOverrides } from "./overrides";
export { capabilitiesFor, estimateCost } from "./pricing";
export { type RetryOptions, retryDelay, shouldRetry, withRetry } from "./retry";
export {
  type Route,
  type RouteChoice,
  type RouteChooser,
  type RouterOptions,
  type RouteStrategy,
  router,
} from "./router";
export { stripThinkTags, ThinkTagFilter, type ThinkTagOptions } from "./think-tags";
export { jsonSchemaOf, toolSpec } from "./tool-spec";
export {
  addUsage,
  type CallOptions,
  type FailoverStore,
  type Model,
  type ModelCapabilities,
  ModelRequest,
  type ModelRequestInput,
  type ModelResponse,
  ReasoningBlock,
  ReasoningOptions,
  StopReason,
  type StreamEvent,
  type StreamEventType,
  ToolCall,
  ToolChoice,
  ToolResult,
  ToolSpec,
  type ToolSpecInput,
  Usage,
  type UsageInput,
} from "./types";
export { type AiBinding, type WorkersAIOptions, workersAI } from "./workers-ai";
