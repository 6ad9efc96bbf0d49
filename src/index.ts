/**
 * Edgelink: serve an AI agent as an A2A v1.0 endpoint on Cloudflare Workers.
 *
 * The root entry is what a handler's author needs: `defineAgent`, tools, endpoints, the
 * run context (`RunContext`; `TaskContext` is its deprecated alias), the handler's and the
 * reply hook's types, approvals and questions, delegation, the configuration types (auth,
 * rate limits, approvals, agents as tools), the part helpers and the errors a handler
 * throws. The rest has its own entry point, so that a Worker bundles only what it imports
 * and each name has one home:
 * `edgelink/providers` (models and their settings), `edgelink/history` (the conversation
 * and its items), `edgelink/testing` (the fake model, the composed prompt, a model turn's
 * result), `edgelink/client` (call any A2A agent; the A2A types: parts, messages, tasks),
 * `edgelink/push` (signing keys and the webhook receiver), `edgelink/mcp` (tools from MCP
 * servers), `edgelink/memory` (long-term memory), `edgelink/registry` (an agent registry).
 * Everything else is private and may change; tests import it from its own module.
 *
 * `Parts` and `textOf` are also exported by `edgelink/client`: the same declarations, since
 * code outside Workers cannot import this entry (it imports `cloudflare:workers`).
 * @example
 * ```ts
 * import { defineAgent, textOf } from "edgelink";
 * export default defineAgent({
 *   card: { name: "Echo", description: "Says it back", skills: [] },
 *   handler: (ctx) => `You said: ${textOf(ctx.message.parts)}`,
 * });
 * ```
 * @packageDocumentation
 */

export type {
  ApprovalAnswer,
  ApprovalRequest,
  ApprovalsConfig,
  QuestionAnswer,
  QuestionRequest,
} from "./agent/access/approval-options";
export type {
  ApiKeyAuth,
  AuthOptions,
  BearerAuth,
  Principal,
  PrincipalInput,
} from "./agent/access/auth";
export { ownerOf } from "./agent/access/auth";
export type { RateLimitOptions } from "./agent/access/rate-limit";
export type { AgentConfig, InferFn, PushOptions } from "./agent/agent-config";
export type { ChildTask, DelegateOptions, DelegateTarget } from "./agent/delegation";
export type { Endpoint, EndpointContext } from "./agent/endpoints";
export type { ReplyContext, ReplyHook, ReplyResult } from "./agent/reply";
export type {
  AgentHandler,
  ArtifactUpdate,
  EndOptions,
  HandlerResult,
  RunContext,
  StatusOptions,
  TaskContext,
} from "./agent/run-context";
export { type Tool, type Tools, tool } from "./agent/tool";
export type { AgentToolConfig, AgentTools } from "./agent/tools/agent-tools";
export { runDefaultExecution } from "./agent/tools/default-execution";
export type { AgentCardInput } from "./protocol/card/agent-card";
export { A2AError, UserFacingError } from "./protocol/errors";
export { Parts, textOf } from "./protocol/part";
export { FinishedSpanProcessor } from "./telemetry/finished-spans";
export { endpoint } from "./worker/a2a/endpoints";
export { defineAgent, type EdgelinkWorker } from "./worker/app/define-agent";
