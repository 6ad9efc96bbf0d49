/**
 * Edgelink's A2A client: call any A2A agent (v1.0, or v0.3) from Node, browsers or
 * Workers. Web APIs only: nothing here imports `cloudflare:*`. It is also the home of the
 * A2A types (parts, messages, artifacts, tasks and their states), which a Worker imports
 * as types from here.
 * @example
 * import { connect, answerOf } from "edgelink/client";
 * const agent = await connect("https://agent.example.com");
 * console.log(answerOf(await agent.send("hello")));
 * @packageDocumentation
 */

export type { ApprovalDecision, PendingCall } from "../protocol/approval";
export type { Artifact } from "../protocol/artifact";
export { type CardPromptOptions, cardPrompt } from "../protocol/card/card-prompt";
export { type AgentCardSignature, cardSigningPayload } from "../protocol/card/card-signature";
export type { PeerCard, PeerCardInput, PeerInterface } from "../protocol/card/peer-card";
export type { DiscoverPage, RegistryEntry } from "../protocol/card/registry";
export type { FieldViolation } from "../protocol/errors";
export type { TaskEvent } from "../protocol/events";
export { canonicalJson } from "../protocol/jcs";
export type { JsonObject, JsonValue } from "../protocol/json";
export type { Message, MessageInput } from "../protocol/message";
export {
  type DataPart,
  type FilePart,
  isKnownPart,
  type Part,
  Parts,
  type TextPart,
  type ToolCallPart,
  type ToolOutputPart,
  textOf,
} from "../protocol/part";
export type { Task, TaskStatus } from "../protocol/task";
export { isInterrupted, isTerminal, type TaskState } from "../protocol/task-state";
export { A2AClient } from "./a2a-client";
export { answer, approve, decisionParts, pendingCalls, reject } from "./approvals";
export type { Auth, TokenSource } from "./auth";
export {
  type CardKeysInput,
  type CardSigningKey,
  loadCardSigningKeys,
  type PublicCardJwk,
} from "./card-keys";
export {
  CardSignatureError,
  type CardSignatureProblem,
  type CardVerification,
  type VerifyCardOptions,
  verifyAgentCard,
} from "./card-verify";
export { chooseInterface, connect } from "./connect";
export { answerOf } from "./convert";
export {
  A2AConnectionError,
  A2ARemoteError,
  AgentNotFoundError,
  ContentTypeNotSupportedError,
  ContextNotFoundError,
  ConversationFullError,
  CredentialPolicyError,
  type ErrorInfo,
  ExtendedAgentCardNotConfiguredError,
  ExtensionSupportRequiredError,
  InternalError,
  InvalidAgentResponseError,
  InvalidParamsError,
  InvalidRequestError,
  JSONParseError,
  MemoryFullError,
  MemoryNotFoundError,
  MethodNotFoundError,
  MisconfiguredError,
  PermissionDeniedError,
  PushNotificationNotSupportedError,
  RateLimitedError,
  RegistryFullError,
  TaskNotCancelableError,
  TaskNotFoundError,
  UnauthenticatedError,
  UnavailableError,
  UnsupportedOperationError,
  VersionNotSupportedError,
} from "./errors";
export {
  MEMORY_OPERATOR_HEADER,
  MemoryClient,
  type MemoryEntityInput,
  type MemoryFactInput,
  type MemoryGoalInput,
  type MemoryListOptions,
} from "./memory";
export type { Binding, Version } from "./operations";
export {
  REGISTRATION_PROOF_TYPE,
  type RegistrationProofInput,
  registrationProof,
} from "./registration-proof";
export { type DiscoverOptions, RegistryClient, type RegistryClientOptions } from "./registry";
export type {
  AgentEvent,
  ConnectOptions,
  HistoryPage,
  ListTasksOptions,
  MessageLike,
  PushConfigInit,
  PushNotificationConfig,
  ResumeOptions,
  SendOptions,
  SendResult,
  StreamOptions,
  SubscribeOptions,
  TaskPage,
} from "./types";
