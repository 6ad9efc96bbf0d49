/**
 * Edgelink: serve an AI agent as an A2A v1.0 endpoint on Cloudflare Workers.
 *
 * This is the public API of `edgelink`: what an agent's author needs to define, serve
 * and power an agent. The A2A client is `edgelink/client`; the webhook receiver's side of
 * push notifications is `edgelink/push`; tools from MCP servers (`mcpServers`) are in
 * `edgelink/mcp`, a separate entry so that Workers without MCP do not bundle its client.
 * Everything else (wire converters, storage, delivery internals) is private and may
 * change; tests import it from its own module.
 * @packageDocumentation
 */

export type { AgentToolConfig, AgentTools } from "./agent/agent-tools";
export type { ApiKeyAuth, AuthOptions, BearerAuth, Principal, PrincipalInput } from "./agent/auth";
export type {
  AgentHandler,
  ArtifactUpdate,
  EndOptions,
  HandlerResult,
  StatusOptions,
  TaskContext,
} from "./agent/context";
export { runDefaultExecution } from "./agent/default-execution";
export type { AgentConfig, InferFn, ModelSettings, PushOptions } from "./agent/definition";
export type { ChildTask, DelegateOptions, DelegateTarget } from "./agent/delegation";
export type { Endpoint, EndpointContext } from "./agent/endpoints";
export type { McpOpenOptions, McpToolSource } from "./agent/mcp-source";
export { RESPONSE_ARTIFACT, runModelAgent } from "./agent/model-execution";
export {
  composePrompt,
  generatedToolsPrompt,
  PromptComposition,
  type PromptCompositionInput,
  PromptProfile,
  PromptSection,
  PromptSectionType,
} from "./agent/prompt";
export type { ReplyContext, ReplyHook, ReplyResult } from "./agent/reply";
export type { AgentResult, AgentStatus, ModelUse, ToolUse, TraceEntry } from "./agent/result";
export { type ToolRun, ToolTimeoutError } from "./agent/tool-runner";
export { type Tool, type Tools, tool } from "./agent/tools";
export type { TurnTools } from "./agent/turn-tools";
// The conversation history of a context.
export type {
  CompactionRequestInput,
  CompactionResult,
  CutBoundary,
} from "./history/compaction";
export type {
  ConfigUpdateItem,
  ContentPartInput,
  ConversationJson,
  FunctionCallItem,
  FunctionOutputItem,
  HandoffItem,
  Item,
  ItemInput,
  ItemRole,
  MessageItem,
} from "./history/items";
export { messageText } from "./history/items";
export type { ReadonlyConversation } from "./history/readonly";
export type { Summarizer } from "./history/summarize";
// What a handler reads and writes.
export type { AgentCardInput } from "./models/agent-card";
export type { Artifact } from "./models/artifact";
export { type CardPromptOptions, cardPrompt } from "./models/card-prompt";
export { type ErrorData, UserFacingError } from "./models/errors";
export type { Message, Role } from "./models/message";
export {
  type DataPart,
  type FilePart,
  type InferPart,
  type Part,
  Parts,
  type TextPart,
  type ToolCallPart,
  type ToolOutputPart,
  textOf,
} from "./models/part";
export type { Task } from "./models/task";
export type { TaskState } from "./models/task-state";
// Models: providers, reliability, direct use.
export { type AnthropicOptions, anthropic } from "./providers/anthropic";
export { generate, streamEvents } from "./providers/collect";
export {
  AllProvidersFailedError,
  ProviderError,
  type ProviderErrorKind,
} from "./providers/errors";
export { type FallbackOptions, fallback } from "./providers/fallback";
export { type GeminiOptions, gemini } from "./providers/gemini";
export { type OpenAIOptions, openai } from "./providers/openai-chat";
export { type OpenAICompatibleOptions, openaiCompatible } from "./providers/openai-compatible";
export { type OpenAIResponsesOptions, openaiResponses } from "./providers/openai-responses";
export { type Overrides, withOverrides } from "./providers/overrides";
export { type RetryOptions, withRetry } from "./providers/retry";
export { type RouterOptions, type RouteStrategy, router } from "./providers/router";
export { type StrategyOptions, withStrategy } from "./providers/strategy";
export { stripThinkTags } from "./providers/think-tags";
export type {
  CallOptions,
  Model,
  ModelRequestInput,
  ModelResponse,
  StreamEvent,
} from "./providers/types";
export { type WorkersAIOptions, workersAI } from "./providers/workers-ai";
export {
  PushVerificationError,
  type VerifiedPushNotification,
  type VerifyPushOptions,
  verifyPushNotification,
} from "./push/receiver";

// Push notifications: the signing key an agent needs, and the receiver's side.
export { generateSigningKey, type SigningAlgorithm } from "./push/signing";
// Defining and serving an agent.
export { endpoint } from "./server/endpoints";
export { defineAgent, type EdgelinkWorker } from "./worker";
