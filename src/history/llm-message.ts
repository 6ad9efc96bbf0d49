import * as z from "zod";
import { JsonObject, newId, nowIso } from "../protocol/json";
import { providerItems } from "./config";
import {
  type FunctionCallItem,
  ID_PREFIX,
  type Item,
  type MessageItem,
  messageText,
} from "./items";

/**
 * A tool call carried by an assistant message in the LLM-message view.
 * @example
 * LlmToolCall.parse({ id: "call_1", name: "search", arguments: "{}" });
 */
export const LlmToolCall = z.object({
  /** The provider's call id; the matching tool message carries it as `toolCallId`. */
  id: z.string().min(1),
  name: z.string().min(1),
  /** JSON arguments, verbatim. */
  arguments: z.string(),
  metadata: JsonObject.optional(),
});
export type LlmToolCall = z.output<typeof LlmToolCall>;

/**
 * Roles of the LLM-message view: instructions are `system`, tool results are `tool`.
 * @example
 * LlmRole.parse("tool");
 */
export const LlmRole = z.enum(["system", "user", "assistant", "tool"]);
export type LlmRole = z.infer<typeof LlmRole>;

/**
 * The provider-neutral message view of a conversation. It is not stored: a
 * conversation's items are the one model, and this view is derived from them
 * (`toLlmMessages`) or turned into them (`fromLlmMessages`). Tool results are `tool`
 * messages with `toolName` and `toolCallId`; an assistant message may carry `toolCalls`.
 */
export interface LlmMessage {
  role: LlmRole;
  content: string;
  name?: string;
  metadata: JsonObject;
  id: string;
  createdAt: string;
  /** Assistant messages only; absent rather than empty. */
  toolCalls?: LlmToolCall[];
  /** Tool messages only: the tool's name. */
  toolName?: string;
  /** Tool messages only: the call answered. */
  toolCallId?: string;
  /** Tool messages only; absent rather than false. */
  isError?: boolean;
}

/**
 * Validates an LLM message and fills in id, createdAt and metadata. Each meaning has one
 * shape after parsing (no empty `toolCalls`, no `isError: false`), which is what makes
 * `toLlmMessages(fromLlmMessages(m))` equal the parsed `m`.
 * @example
 * LlmMessage.parse({ role: "user", content: "Hi" }); // id, createdAt, metadata filled in
 */
export const LlmMessage = z
  .object({
    role: LlmRole,
    content: z.string(),
    name: z.string().optional(),
    metadata: JsonObject.default(() => ({})),
    id: z
      .string()
      .min(1)
      .default(() => newId(ID_PREFIX.message)),
    createdAt: z.iso.datetime({ offset: true }).default(() => nowIso()),
    toolCalls: z.array(LlmToolCall).optional(),
    toolName: z.string().optional(),
    toolCallId: z.string().min(1).optional(),
    isError: z.boolean().optional(),
  })
  .superRefine((message, ctx) => {
    const issue = (path: string, text: string) =>
      ctx.addIssue({ code: "custom", path: [path], message: text });
    if (message.toolCalls?.length && message.role !== "assistant") {
      issue("toolCalls", "only assistant messages carry tool calls");
    }
    if (message.role === "tool") {
      if (message.toolCallId === undefined) issue("toolCallId", "a tool message needs toolCallId");
      if (message.toolName === undefined) issue("toolName", "a tool message needs toolName");
      if (message.name !== undefined) issue("name", "a tool message names its tool in toolName");
    } else {
      for (const key of ["toolCallId", "toolName", "isError"] as const) {
        if (message[key] !== undefined) issue(key, `only tool messages have ${key}`);
      }
    }
  })
  .transform((parsed): LlmMessage => {
    const { toolCalls, isError, ...rest } = parsed;
    const message: LlmMessage = rest;
    if (toolCalls?.length) message.toolCalls = toolCalls;
    if (isError) message.isError = true;
    return message;
  });
export type LlmMessageInput = z.input<typeof LlmMessage>;

/**
 * Items → LLM messages. Handoffs and config updates are left out and resolved
 * instructions are used (see `providerItems`); system and developer messages become
 * `system`; images are left out of the text; function calls join the assistant message
 * right before them, or an assistant message with empty content when there is none.
 * @example
 * const messages = toLlmMessages(conversation.items);
 */
export function toLlmMessages(items: readonly Item[]): LlmMessage[] {
  const out: LlmMessage[] = [];
  // The message that calls directly after it may attach to; reset by anything else.
  let open: LlmMessage | null = null;
  for (const item of providerItems(items)) {
    if (item.type === "function_call") {
      if (!open) {
        open = {
          role: "assistant",
          content: "",
          metadata: {},
          id: item.id,
          createdAt: item.createdAt,
        };
        out.push(open);
      }
      open.toolCalls = [...(open.toolCalls ?? []), toolCallOf(item)];
      continue;
    }
    open = null;
    if (item.type === "function_call_output") {
      out.push({
        role: "tool",
        content: item.output,
        metadata: structuredClone(item.metadata ?? {}),
        id: item.id,
        createdAt: item.createdAt,
        toolName: item.name,
        toolCallId: item.callId,
        ...(item.isError ? { isError: true } : {}),
      });
    } else if (item.type === "message") {
      const message: LlmMessage = {
        role: item.role === "developer" ? "system" : item.role,
        content: messageText(item),
        metadata: structuredClone(item.extra),
        id: item.id,
        createdAt: item.createdAt,
      };
      if (item.name !== undefined) message.name = item.name;
      out.push(message);
      if (item.role === "assistant") open = message;
    }
  }
  return out;
}

function toolCallOf(item: FunctionCallItem): LlmToolCall {
  const call: LlmToolCall = { id: item.callId, name: item.name, arguments: item.arguments };
  if (item.metadata) call.metadata = structuredClone(item.metadata);
  return call;
}

/**
 * LLM messages → items, validating each message first. A tool call becomes a function
 * call item whose id derives from its message's id, so converting the same messages twice
 * gives the same ids (a store diffing by id then sees no change).
 * `toLlmMessages(fromLlmMessages(m))` equals the parsed `m`.
 * @example
 * const items = fromLlmMessages([{ role: "user", content: "Hi" }]);
 */
export function fromLlmMessages(messages: readonly LlmMessageInput[]): Item[] {
  const items: Item[] = [];
  for (const input of messages) {
    const message = LlmMessage.parse(input);
    const common = { id: message.id, createdAt: message.createdAt };
    if (message.role === "tool") {
      items.push({
        type: "function_call_output",
        ...common,
        name: message.toolName ?? "",
        callId: message.toolCallId ?? "",
        output: message.content,
        isError: message.isError ?? false,
        metadata: message.metadata,
      });
      continue;
    }
    const item: MessageItem = {
      type: "message",
      ...common,
      role: message.role,
      content: [message.content],
      interrupted: false,
      extra: message.metadata,
    };
    if (message.name !== undefined) item.name = message.name;
    items.push(item);
    message.toolCalls?.forEach((call, index) => {
      const callItem: FunctionCallItem = {
        type: "function_call",
        id: `${ID_PREFIX.function_call}${message.id}_${index}`,
        createdAt: message.createdAt,
        name: call.name,
        arguments: call.arguments,
        callId: call.id,
      };
      if (call.metadata) callItem.metadata = call.metadata;
      items.push(callItem);
    });
  }
  return items;
}
