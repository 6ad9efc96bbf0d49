/**
 * `edgelink/history`: a context's conversation history. One item model (messages, tool
 * calls and their outputs, handoffs, configuration updates), the `Conversation` that holds
 * and edits it (a handler reads it as `ctx.conversation`, a `ReadonlyConversation`), the
 * window a model sees of it, and compaction and summaries. Web APIs only.
 * @example
 * ```ts
 * import { messageText } from "edgelink/history";
 * const said = ctx.conversation.messages().map(messageText);
 * ```
 * @packageDocumentation
 */
export type { CompactionRequestInput, CompactionResult, CutBoundary } from "./compaction";
export { Conversation } from "./conversation";
export type {
  AddOptions,
  ConfigUpdateInput,
  ConversationInit,
  FunctionCallInput,
  FunctionOutputInput,
  HandoffInput,
  MessageOptions,
} from "./conversation-inputs";
export { ConversationReader } from "./conversation-reader";
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
  ItemType,
  MessageItem,
} from "./items";
export { messageText } from "./items";
export { type ReadonlyConversation, ReadonlyConversationError } from "./readonly";
export type { SummarizeOptions, SummarizeResult, Summarizer } from "./summarize";
export type { ConversationWindow, WindowPolicy } from "./window-reader";
