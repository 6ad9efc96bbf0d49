import { providerItems } from "../../history/config";
import { type Item, isInstruction, messageText } from "../../history/items";
import type { JsonObject } from "../../protocol/json";
import type { ModelRequest, ReasoningOptions, ToolChoice } from "../base/types";
import { type AnthropicMessage, anthropicMessages, type CacheControl } from "./anthropic-messages";

/**
 * Conversation items → an Anthropic Messages request body.
 *
 * Decisions, each pinned by a test:
 * - Instructions (`request.system`, then every system/developer message) are joined into
 *   the separate `system` field.
 * - A turn is a run of assistant messages and function calls with no tool output or user
 *   message in between. It becomes ONE assistant message: replayed thinking first, then
 *   text, then `tool_use`. The outputs of its calls follow in ONE user message, in call
 *   order, wherever they were stored. Outputs whose call is not in the history are dropped;
 *   a call without an output is sent as is (the agent loop gives every call a result).
 * - Consecutive messages of the same role are merged so roles alternate; when the history
 *   does not start with a user message, a placeholder user message (`LEADING_USER_TEXT`) is
 *   put first, because the API requires the conversation to open with the user.
 * - Images go into user messages only (assistant messages cannot carry them).
 * - `outputSchema`: a forced tool named `outputName` whose input is the answer, when
 *   nothing else needs the tool channel (no tools, no thinking, an object schema); the
 *   stream decoder turns that tool's input back into text. Otherwise the schema is put into
 *   the system prompt as instructions.
 */

/** Thinking budgets used when only `reasoning.effort` is given (Anthropic wants tokens). */
export const EFFORT_BUDGET_TOKENS = {
  minimal: 1024,
  low: 2048,
  medium: 8192,
  high: 16384,
} as const;

/** Room left for the answer when `max_tokens` defaults below the thinking budget. */
const ANSWER_TOKENS = 4096;

const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

export interface AnthropicTool {
  name: string;
  description: string;
  input_schema: JsonObject;
  cache_control?: CacheControl;
}

export type AnthropicToolChoice =
  | { type: "auto" }
  | { type: "any" }
  | { type: "none" }
  | { type: "tool"; name: string };

export interface AnthropicBody {
  model: string;
  max_tokens: number;
  messages: AnthropicMessage[];
  system?: string | { type: "text"; text: string; cache_control?: CacheControl }[];
  tools?: AnthropicTool[];
  tool_choice?: AnthropicToolChoice;
  thinking?: { type: "enabled"; budget_tokens: number };
  temperature?: number;
  top_p?: number;
  stop_sequences?: string[];
  stream: true;
  /** Keys of `request.providerOptions`, merged last. */
  [extra: string]: unknown;
}

export interface AnthropicBodySettings {
  model: string;
  /** `max_tokens` when the request sets none (the API requires one). */
  maxTokens: number;
  /** Mark prompt-cache breakpoints (see `addCacheBreakpoints`). */
  promptCaching?: boolean;
}

/** How an `outputSchema` is asked for: a forced tool, instructions, or not at all. */
export type OutputMode = "tool" | "instructions" | null;

/**
 * Builds the body of `POST /v1/messages` from a normalized request.
 * @example
 * const body = toAnthropicBody(ModelRequest.parse({
 *   system: "Be brief.",
 *   messages: [{ role: "user", content: "Hi" }],
 * }), { model: "claude-haiku-4-5", maxTokens: 4096 });
 * // body.system === "Be brief.", body.messages[0].role === "user"
 */
export function toAnthropicBody(
  request: ModelRequest,
  settings: AnthropicBodySettings,
): AnthropicBody {
  const items = providerItems(request.messages);
  const mode = outputMode(request);
  const thinking = thinkingOf(request.reasoning);
  let maxTokens = request.maxTokens ?? settings.maxTokens;
  // The budget counts against max_tokens; a default must not make the request invalid.
  if (thinking && request.maxTokens === undefined && maxTokens <= thinking.budget_tokens) {
    maxTokens = thinking.budget_tokens + ANSWER_TOKENS;
  }
  const body: AnthropicBody = {
    model: settings.model,
    max_tokens: maxTokens,
    messages: anthropicMessages(items),
    stream: true,
  };
  const system = systemOf(request, items, mode);
  if (system) body.system = system;
  const tools = request.tools.map(
    (tool): AnthropicTool => ({
      name: tool.name,
      description: tool.description,
      input_schema: tool.parameters,
    }),
  );
  if (mode === "tool") tools.push(outputTool(request));
  if (tools.length > 0) {
    body.tools = tools;
    const choice =
      mode === "tool"
        ? ({ type: "tool", name: request.outputName } as const)
        : toolChoiceOf(request.toolChoice);
    if (choice) body.tool_choice = choice;
  }
  if (thinking) body.thinking = thinking;
  if (request.temperature !== undefined) body.temperature = request.temperature;
  if (request.topP !== undefined) body.top_p = request.topP;
  if (request.stop?.length) body.stop_sequences = request.stop;
  if (settings.promptCaching) addCacheBreakpoints(body);
  return { ...body, ...request.providerOptions };
}

const EPHEMERAL: CacheControl = { type: "ephemeral" };

/**
 * Prompt caching: up to three of the four breakpoints the API allows, each closing a prefix
 * that stays the same from one turn to the next: the instructions, the tools (on the last
 * one, which caches them all), and the conversation before the newest message. Whether a
 * prefix is long enough to be cached is the provider's call: a short one is simply not
 * cached. Thinking blocks cannot carry a breakpoint, so a message ending in one gets none.
 */
export function addCacheBreakpoints(body: AnthropicBody): void {
  if (typeof body.system === "string") {
    body.system = [{ type: "text", text: body.system, cache_control: EPHEMERAL }];
  }
  const lastTool = body.tools?.at(-1);
  if (lastTool) lastTool.cache_control = EPHEMERAL;
  const prefixEnd = body.messages.at(-2)?.content.at(-1);
  if (prefixEnd && prefixEnd.type !== "thinking" && prefixEnd.type !== "redacted_thinking") {
    prefixEnd.cache_control = EPHEMERAL;
  }
}

/**
 * Whether the request's `outputSchema` is asked for with a forced tool (the reliable way)
 * or with instructions: forcing a tool rules out other tools and extended thinking, and the
 * API only takes object schemas as tool input.
 */
export function outputMode(request: ModelRequest): OutputMode {
  const schema = request.outputSchema;
  if (!schema) return null;
  const forcible =
    request.tools.length === 0 &&
    thinkingOf(request.reasoning) === undefined &&
    schema.type === "object" &&
    TOOL_NAME.test(request.outputName);
  return forcible ? "tool" : "instructions";
}

function outputTool(request: ModelRequest): AnthropicTool {
  return {
    name: request.outputName,
    description: "Give your final answer by calling this tool; its input is the answer.",
    input_schema: request.outputSchema ?? { type: "object" },
  };
}

function thinkingOf(
  reasoning: ReasoningOptions | undefined,
): { type: "enabled"; budget_tokens: number } | undefined {
  const budget =
    reasoning?.budgetTokens ??
    (reasoning?.effort === undefined ? undefined : EFFORT_BUDGET_TOKENS[reasoning.effort]);
  return budget === undefined ? undefined : { type: "enabled", budget_tokens: budget };
}

function toolChoiceOf(choice: ToolChoice | undefined): AnthropicToolChoice | undefined {
  if (choice === undefined) return undefined;
  if (choice === "auto") return { type: "auto" };
  if (choice === "none") return { type: "none" };
  if (choice === "required") return { type: "any" };
  return { type: "tool", name: choice.name };
}

function systemOf(request: ModelRequest, items: Item[], mode: OutputMode): string {
  const parts = [request.system ?? ""];
  for (const item of items) if (isInstruction(item)) parts.push(messageText(item));
  if (mode === "instructions") {
    parts.push(
      `Answer with a single JSON value that matches this JSON Schema, and nothing else (no prose, no code fence):\n${JSON.stringify(request.outputSchema)}`,
    );
  }
  return parts.filter((part) => part.trim() !== "").join("\n\n");
}
