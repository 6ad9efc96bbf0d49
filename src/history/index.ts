/**
 * Conversation history: one item model (messages, tool calls and outputs, handoffs,
 * config updates), the `Conversation` that edits it, the LLM-message view of it, and the
 * helpers a store needs to persist it as rows.
 * @packageDocumentation
 */
export {
  CompactionRequest,
  type CompactionRequestInput,
  type CompactionResult,
  CompactionStrategy,
  type CutBoundary,
} from "./compaction";
export { type ActiveConfig, activeConfigAt, type ConfigTarget, providerItems } from "./config";
export type { ContextWindowPolicy, ContextWindowResult } from "./context-window";
export {
  type AddOptions,
  type ConfigUpdateInput,
  Conversation,
  type ConversationInit,
  type FunctionCallInput,
  type FunctionOutputInput,
  type HandoffInput,
  type MessageOptions,
} from "./conversation";
export { type AddedItem, applyItemDiff, diffItems, type ItemDiff, itemJsonBytes } from "./diff";
export type { CopyFilters } from "./fork-merge";
export {
  ConfigUpdateItem,
  type ConfigUpdateItemInput,
  ContentPart,
  type ContentPartInput,
  type ConversationJson,
  FunctionCallItem,
  type FunctionCallItemInput,
  FunctionOutputItem,
  type FunctionOutputItemInput,
  HandoffItem,
  type HandoffItemInput,
  ID_PREFIX,
  ImageContent,
  type ImageContentInput,
  Item,
  type ItemInput,
  ItemRole,
  type ItemType,
  instructionsForModality,
  isInstruction,
  isStructural,
  isSummary,
  isUserMessage,
  MessageItem,
  type MessageItemInput,
  messageText,
  parseItems,
} from "./items";
export {
  fromLlmMessages,
  LlmMessage,
  type LlmMessageInput,
  LlmRole,
  LlmToolCall,
  toLlmMessages,
} from "./llm-message";
export {
  MUTATORS,
  type Mutator,
  type ReadonlyConversation,
  ReadonlyConversationError,
} from "./readonly";
export {
  DEFAULT_SUMMARY_MAX_TOKENS,
  renderTranscript,
  type SummarizeOptions,
  type SummarizeResult,
  type Summarizer,
} from "./summarize";
export { estimateItemTokens, estimateTokens } from "./tokens";
export type { TruncateLimits } from "./truncate";
export {
  type ConversationWindow,
  PINNED_LIMIT,
  type PositionedItem,
  type RunningSummary,
  readWindow,
  type WindowPolicy,
  type WindowSource,
} from "./window";
