/**
 * Span and attribute names Edgelink emits. GenAI names follow the OpenTelemetry semantic
 * conventions v1.41.0 (GenAI: Development status); A2A names are the ones the A2A
 * project proposes for its server spans. One place, so a convention change is one edit.
 */

/** The conventions version the GenAI names follow (the instrumentation scope's schema). */
export const SEMCONV_VERSION = "1.41.0";
export const SCHEMA_URL = `https://opentelemetry.io/schemas/${SEMCONV_VERSION}`;

// ---- GenAI ---------------------------------------------------------------------------
export const GEN_AI_OPERATION_NAME = "gen_ai.operation.name";
export const GEN_AI_PROVIDER_NAME = "gen_ai.provider.name";
export const GEN_AI_REQUEST_MODEL = "gen_ai.request.model";
export const GEN_AI_RESPONSE_MODEL = "gen_ai.response.model";
export const GEN_AI_RESPONSE_ID = "gen_ai.response.id";
export const GEN_AI_RESPONSE_FINISH_REASONS = "gen_ai.response.finish_reasons";
export const GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK = "gen_ai.response.time_to_first_chunk";
export const GEN_AI_USAGE_INPUT_TOKENS = "gen_ai.usage.input_tokens";
export const GEN_AI_USAGE_OUTPUT_TOKENS = "gen_ai.usage.output_tokens";
export const GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS = "gen_ai.usage.cache_read.input_tokens";
export const GEN_AI_CONVERSATION_ID = "gen_ai.conversation.id";
export const GEN_AI_AGENT_NAME = "gen_ai.agent.name";
export const GEN_AI_AGENT_ID = "gen_ai.agent.id";
export const GEN_AI_TOOL_NAME = "gen_ai.tool.name";
export const GEN_AI_TOOL_CALL_ID = "gen_ai.tool.call.id";
export const GEN_AI_TOOL_TYPE = "gen_ai.tool.type";
export const GEN_AI_INPUT_MESSAGES = "gen_ai.input.messages";
export const GEN_AI_OUTPUT_MESSAGES = "gen_ai.output.messages";

/** `gen_ai.operation.name` values Edgelink uses. */
export const OP_CHAT = "chat";
export const OP_INVOKE_AGENT = "invoke_agent";
export const OP_EXECUTE_TOOL = "execute_tool";
export const OP_SEARCH_MEMORY = "search_memory";
export const OP_UPDATE_MEMORY = "update_memory";

// ---- A2A -----------------------------------------------------------------------------
export const A2A_METHOD_NAME = "a2a.method.name";
export const A2A_TASK_ID = "a2a.task.id";
export const A2A_TASK_STATE = "a2a.task.state";
export const A2A_TENANT = "a2a.tenant";
export const A2A_PROTOCOL_VERSION = "a2a.protocol.version";

// ---- general -------------------------------------------------------------------------
export const ERROR_TYPE = "error.type";
export const HTTP_REQUEST_METHOD = "http.request.method";
export const HTTP_RESPONSE_STATUS_CODE = "http.response.status_code";
export const HTTP_ROUTE = "http.route";
export const URL_FULL = "url.full";
export const SERVER_ADDRESS = "server.address";

// ---- MCP (the conventions' MCP client spans) -----------------------------------------
export const MCP_METHOD_NAME = "mcp.method.name";

// ---- Edgelink's own (no convention covers them) --------------------------------------
export const EDGELINK_PUSH_ATTEMPT = "edgelink.push.attempt";
export const EDGELINK_PUSH_OUTCOME = "edgelink.push.outcome";
export const EDGELINK_PUSH_CONFIG_ID = "edgelink.push.config_id";
export const EDGELINK_COMPACTION_STRATEGY = "edgelink.compaction.strategy";
export const EDGELINK_COMPACTION_ITEMS = "edgelink.compaction.items";
export const EDGELINK_DELEGATE_TARGET = "edgelink.delegate.target";
export const EDGELINK_RETRY_ATTEMPT = "edgelink.retry.attempt";

/** Span event names for what happens inside one logical model call. */
export const EVENT_RETRY = "edgelink.model.retry";
export const EVENT_FALLBACK = "edgelink.model.fallback";
