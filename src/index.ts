/**
 * Edgelink: serve an AI agent as an A2A v1.0 endpoint on Cloudflare Workers.
 * @packageDocumentation
 */
export type { AgentToolConfig, AgentTools } from "./agent/agent-tools";
export type {
  AgentHandler,
  ArtifactUpdate,
  EndOptions,
  StatusOptions,
  TaskContext,
} from "./agent/context";
export { runDefaultExecution } from "./agent/default-execution";
export type { Agent, AgentConfig, InferFn, ModelSettings } from "./agent/definition";
export type { ChildTask, DelegateOptions, DelegateTarget } from "./agent/delegation";
export { clearMcpCache, listMcp, type McpListing } from "./agent/mcp/catalog";
export {
  MCP_CACHE_TTL_MS,
  McpError,
  type McpServer,
  type McpServerConfig,
  type McpServers,
  type McpTransport,
} from "./agent/mcp/config";
export type { McpResourceInfo, McpToolInfo } from "./agent/mcp/connection";
export { RESPONSE_ARTIFACT, runModelAgent } from "./agent/model-execution";
export type { AgentResult, AgentStatus, ModelUse, ToolUse, TraceEntry } from "./agent/result";
export { type ToolRun, ToolTimeoutError } from "./agent/tool-runner";
export { type Tool, type Tools, tool } from "./agent/tools";
export { ContextObject, RESTART_REASON } from "./durable/context-object";
export { IndexObject } from "./durable/index-object";
export * from "./history/index";
export * from "./models/agent-card";
export * from "./models/artifact";
export * from "./models/errors";
export type { LoggedEvent, TaskEvent } from "./models/events";
export * from "./models/json";
export * from "./models/message";
export * from "./models/part";
export * from "./models/task";
export * from "./models/task-state";
export * from "./models/wire-v1";
export * from "./models/wire-v03";
export * from "./providers/index";
export * from "./push/index";
export { createApp } from "./server/app";
export { defineAgent, type EdgelinkWorker } from "./worker";
