import { providerItems } from "../../history/config";
import {
  type FunctionOutputItem,
  type ImageContent,
  type Item,
  isInstruction,
  type MessageItem,
  messageText,
} from "../../history/items";
import type { JsonObject, JsonValue } from "../../protocol/json";
import { parseArguments } from "../base/assemble";
import { ProviderError } from "../base/errors";
import {
  type ModelRequest,
  ReasoningBlock,
  type ReasoningOptions,
  type ToolChoice,
} from "../base/types";

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

export const ANTHROPIC = "anthropic";

/** The text of the user message put first when a history starts with the assistant. */
export const LEADING_USER_TEXT = "(conversation continues)";

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

export type AnthropicImageSource =
  | { type: "base64"; media_type: string; data: string }
  | { type: "url"; url: string };

/** A prompt-cache breakpoint: the prefix up to and including this block is cached. */
export interface CacheControl {
  type: "ephemeral";
}

export type AnthropicBlock = (
  | { type: "text"; text: string }
  | { type: "image"; source: AnthropicImageSource }
  | { type: "thinking"; thinking: string; signature: string }
  | { type: "redacted_thinking"; data: string }
  | { type: "tool_use"; id: string; name: string; input: JsonObject }
  | { type: "tool_result"; tool_use_id: string; content: string; is_error?: true }
) & { cache_control?: CacheControl };

export interface AnthropicMessage {
  role: "user" | "assistant";
  content: AnthropicBlock[];
}

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
    messages: conversation(items),
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

/** The assistant side of one turn while it is being collected. */
interface Turn {
  reasoning: AnthropicBlock[];
  /** JSON of the replayed blocks, so a block stored twice is sent once. */
  seen: Set<string>;
  text: AnthropicBlock[];
  toolUses: AnthropicBlock[];
  callIds: string[];
}

function conversation(items: Item[]): AnthropicMessage[] {
  const outputs = outputsByCall(items);
  const messages: AnthropicMessage[] = [];
  let turn: Turn | null = null;
  const flush = () => {
    if (!turn) return;
    append(messages, "assistant", [...turn.reasoning, ...turn.text, ...turn.toolUses]);
    const results: AnthropicBlock[] = [];
    for (const id of turn.callIds) {
      const output = outputs.get(id);
      if (output) results.push(toolResult(output));
    }
    append(messages, "user", results);
    turn = null;
  };
  for (const item of items) {
    if (item.type === "message") {
      // Instructions went to `system` (and the type guard would narrow `item` away).
      if (item.role === "system" || item.role === "developer") continue;
      if (item.role === "user") {
        flush();
        append(messages, "user", userBlocks(item));
        continue;
      }
      turn ??= newTurn();
      addReasoning(turn, item.extra.reasoning);
      for (const part of item.content) {
        if (typeof part === "string" && part !== "") turn.text.push({ type: "text", text: part });
      }
    } else if (item.type === "function_call") {
      turn ??= newTurn();
      addReasoning(turn, item.metadata?.reasoning);
      turn.toolUses.push({
        type: "tool_use",
        id: item.callId,
        name: item.name,
        // The API wants an object; arguments cut off by the token limit cannot be sent.
        input: parseArguments(item.arguments) ?? {},
      });
      turn.callIds.push(item.callId);
    } else if (item.type === "function_call_output") {
      // Its block was (or will be) placed right after its call's assistant message.
      flush();
    }
  }
  flush();
  if (messages[0]?.role !== "user") {
    messages.unshift({ role: "user", content: [{ type: "text", text: LEADING_USER_TEXT }] });
  }
  return messages;
}

function newTurn(): Turn {
  return { reasoning: [], seen: new Set(), text: [], toolUses: [], callIds: [] };
}

/** The first output of every call that is in the history; any other output is dropped. */
function outputsByCall(items: Item[]): Map<string, FunctionOutputItem> {
  const calls = new Set<string>();
  for (const item of items) if (item.type === "function_call") calls.add(item.callId);
  const outputs = new Map<string, FunctionOutputItem>();
  for (const item of items) {
    if (item.type === "function_call_output" && calls.has(item.callId)) {
      if (!outputs.has(item.callId)) outputs.set(item.callId, item);
    }
  }
  return outputs;
}

function toolResult(output: FunctionOutputItem): AnthropicBlock {
  return output.isError
    ? { type: "tool_result", tool_use_id: output.callId, content: output.output, is_error: true }
    : { type: "tool_result", tool_use_id: output.callId, content: output.output };
}

/**
 * Stored Anthropic thinking goes back exactly as received. Blocks of other providers, and
 * thinking without a signature (the API rejects it), are left out.
 */
function addReasoning(turn: Turn, stored: JsonValue | undefined): void {
  if (!Array.isArray(stored)) return;
  for (const entry of stored) {
    const parsed = ReasoningBlock.safeParse(entry);
    if (!parsed.success || parsed.data.provider !== ANTHROPIC) continue;
    const block = parsed.data;
    let out: AnthropicBlock | null = null;
    if (block.redacted !== undefined) out = { type: "redacted_thinking", data: block.redacted };
    else if (block.signature) {
      out = { type: "thinking", thinking: block.text, signature: block.signature };
    }
    if (!out) continue;
    const key = JSON.stringify(out);
    if (turn.seen.has(key)) continue;
    turn.seen.add(key);
    turn.reasoning.push(out);
  }
}

function userBlocks(message: MessageItem): AnthropicBlock[] {
  const blocks: AnthropicBlock[] = [];
  for (const part of message.content) {
    if (typeof part === "string") {
      if (part !== "") blocks.push({ type: "text", text: part });
    } else {
      blocks.push({ type: "image", source: imageSource(part) });
    }
  }
  return blocks;
}

/** Adds a message, merging it into the previous one of the same role (roles must alternate). */
function append(
  messages: AnthropicMessage[],
  role: AnthropicMessage["role"],
  content: AnthropicBlock[],
): void {
  if (content.length === 0) return;
  const last = messages.at(-1);
  if (last?.role !== role) {
    messages.push({ role, content });
    return;
  }
  // The API wants thinking first in an assistant message, tool results first in a user one.
  const leads = (block: AnthropicBlock) =>
    block.type === "thinking" || block.type === "redacted_thinking" || block.type === "tool_result";
  const merged = [...last.content, ...content];
  last.content = [...merged.filter(leads), ...merged.filter((block) => !leads(block))];
}

const DATA_URL = /^data:([^;,]+)((?:;[^;,]*)*),(.*)$/s;

function imageSource(image: ImageContent): AnthropicImageSource {
  if (image.bytes !== undefined) {
    return {
      type: "base64",
      media_type: image.mediaType ?? sniffImageType(image.bytes),
      data: image.bytes,
    };
  }
  const url = image.url ?? "";
  const data = DATA_URL.exec(url);
  if (!data) return { type: "url", url };
  if (!data[2]?.split(";").includes("base64")) {
    throw configError("an image data: URL must be base64-encoded for Anthropic");
  }
  return { type: "base64", media_type: image.mediaType ?? data[1] ?? "", data: data[3] ?? "" };
}

/** The media type of base64 image bytes from their magic number (the API requires one). */
function sniffImageType(base64: string): string {
  const head = atob(base64.slice(0, 16));
  if (head.startsWith("\x89PNG")) return "image/png";
  if (head.startsWith("\xFF\xD8\xFF")) return "image/jpeg";
  if (head.startsWith("GIF8")) return "image/gif";
  if (head.startsWith("RIFF") && head.slice(8, 12) === "WEBP") return "image/webp";
  throw configError("cannot tell the image type: set mediaType on the image");
}

function configError(message: string): ProviderError {
  return new ProviderError({ provider: ANTHROPIC, kind: "config", message });
}
