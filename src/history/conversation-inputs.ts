import { compact, type JsonObject, type JsonValue } from "../protocol/json";
import {
  type ContentPartInput,
  FunctionCallItem,
  FunctionOutputItem,
  type ItemInput,
  type ItemRole,
  MessageItem,
} from "./items";

/**
 * What a `Conversation` is made from and what each of its `add*` methods takes, with the
 * item each input becomes (validated, with a fresh id unless one is given).
 */

/**
 * Fields every `add*` method accepts besides the item's own.
 * @example
 * conversation.addHandoff({ toAgent: "b", id: "handoff_1", createdAt: new Date().toISOString() });
 */
export interface AddOptions {
  /** Defaults to a fresh prefixed id; must not be in use. */
  id?: string;
  /** ISO-8601; defaults to now. */
  createdAt?: string;
  agentId?: string;
}

/**
 * Options of `addMessage`: the message extras and `replace`.
 * @example
 * conversation.addMessage("user", "hi", { agentId: "voice", confidence: 0.92 });
 */
export interface MessageOptions extends AddOptions {
  /** With role "system": remove every system message (not developer ones) first. */
  replace?: boolean;
  name?: string;
  interrupted?: boolean;
  extra?: JsonObject;
  confidence?: number;
  metrics?: JsonObject;
  audioInstructions?: string;
  textInstructions?: string;
}

/**
 * What `addFunctionCall` takes.
 * @example
 * conversation.addFunctionCall({ name: "search", arguments: { q: "x" }, callId: "call_1" });
 */
export interface FunctionCallInput extends AddOptions {
  name: string;
  /** A JSON string kept verbatim; an object is serialized. Defaults to "{}". */
  arguments?: string | JsonObject;
  /** Defaults to a fresh "call_" id. */
  callId?: string;
  /** Provider data to keep with the call, e.g. `{ thoughtSignature }` for Gemini. */
  metadata?: JsonObject;
}

/**
 * What `addFunctionOutput` takes.
 * @example
 * conversation.addFunctionOutput({ name: "search", callId: "call_1", output: "3 hits" });
 */
export interface FunctionOutputInput extends AddOptions {
  name: string;
  callId: string;
  /** Kept verbatim when a string; anything else is serialized to JSON. */
  output: string | JsonValue;
  isError?: boolean;
  metadata?: JsonObject;
}

/**
 * What `addHandoff` takes.
 * @example
 * conversation.addHandoff({ toAgent: "billing" });
 */
export interface HandoffInput extends AddOptions {
  toAgent: string;
  fromAgent?: string;
  reason?: string;
}

/**
 * What `addConfigUpdate` takes; an absent field is left as it was.
 * @example
 * conversation.addConfigUpdate({ tools: [] }); // no tools from here on
 */
export interface ConfigUpdateInput extends AddOptions {
  instructions?: string;
  tools?: string[];
}

/**
 * Construction options of a conversation.
 * @example
 * new Conversation({ systemPrompt: "Be kind.", items: stored.items });
 */
export interface ConversationInit {
  /** Initial items, validated (unknown types are an error here, unlike `fromJSON`). */
  items?: readonly ItemInput[];
  /** Sets the leading system message, like `setSystem`; empty adds nothing. */
  systemPrompt?: string;
}

/** The message `addMessage` appends; a string content becomes `[string]`. */
export function messageItem(
  role: ItemRole,
  content: string | readonly ContentPartInput[],
  fields: Omit<MessageOptions, "replace">,
): MessageItem {
  return MessageItem.parse(
    compact({
      type: "message",
      role,
      content: typeof content === "string" ? content : [...content],
      ...fields,
    }),
  );
}

/** The call `addFunctionCall` appends: object arguments serialized, a `callId` generated. */
export function functionCallItem(input: FunctionCallInput): FunctionCallItem {
  const args = input.arguments;
  return FunctionCallItem.parse(
    compact({
      ...input,
      type: "function_call",
      arguments: args === undefined || typeof args === "string" ? args : JSON.stringify(args),
    }),
  );
}

/** The output `addFunctionOutput` appends: a string kept verbatim, anything else as JSON. */
export function functionOutputItem(input: FunctionOutputInput): FunctionOutputItem {
  const output = typeof input.output === "string" ? input.output : JSON.stringify(input.output);
  return FunctionOutputItem.parse(compact({ ...input, type: "function_call_output", output }));
}
