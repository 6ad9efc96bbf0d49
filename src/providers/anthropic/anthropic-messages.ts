/**
 * Conversation items → the `messages` of an Anthropic Messages request, and the wire types
 * of their blocks. The rest of the body (system, tools, thinking, caching) is
 * `anthropic-body.ts`.
 */
import type { FunctionOutputItem, ImageContent, Item, MessageItem } from "../../history/items";
import type { JsonObject, JsonValue } from "../../protocol/json";
import { parseArguments } from "../base/assemble";
import { ProviderError } from "../base/errors";
import { ReasoningBlock } from "../base/types";

export const ANTHROPIC = "anthropic";

/** The text of the user message put first when a history starts with the assistant. */
export const LEADING_USER_TEXT = "(conversation continues)";
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

/** The assistant side of one turn while it is being collected. */
interface Turn {
  reasoning: AnthropicBlock[];
  /** JSON of the replayed blocks, so a block stored twice is sent once. */
  seen: Set<string>;
  text: AnthropicBlock[];
  toolUses: AnthropicBlock[];
  callIds: string[];
}

/**
 * The `messages` of a request: turns merged, tool results after their calls, replayed
 * thinking first, roles alternating and opening with the user (see `toAnthropicBody`).
 */
export function anthropicMessages(items: Item[]): AnthropicMessage[] {
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
