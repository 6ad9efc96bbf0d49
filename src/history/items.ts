import * as z from "zod";
import { JsonObject, newId, nowIso } from "../protocol/json";

/**
 * The items of a conversation: chat messages, function calls and their outputs,
 * agent handoffs and config updates. Every item is a plain JSON object discriminated on
 * `type`; ids carry a per-type prefix so logs and stored rows are easy to tell apart.
 */

/**
 * Id prefixes per item type; `call_` is the prefix of generated tool-call ids.
 * @example
 * item.id.startsWith(ID_PREFIX.function_call);
 */
export const ID_PREFIX = {
  message: "msg_",
  function_call: "fc_",
  function_call_output: "fco_",
  agent_handoff: "handoff_",
  agent_config_update: "cfg_",
  call: "call_",
} as const;

/**
 * Who speaks in a chat message; tool traffic travels as its own items.
 * @example
 * ItemRole.parse("developer");
 */
export const ItemRole = z.enum(["system", "developer", "user", "assistant"]);
export type ItemRole = z.infer<typeof ItemRole>;

const CreatedAt = z.iso.datetime({ offset: true });

const base = {
  createdAt: CreatedAt.default(() => nowIso()),
  /** The agent that produced the item, when several agents share a conversation. */
  agentId: z.string().min(1).optional(),
};

/**
 * An image in a message, by URL (including `data:` URLs) or by base64 bytes.
 * @example
 * ImageContent.parse({ type: "image", url: "https://example.com/cat.png" });
 */
export const ImageContent = z
  .object({
    type: z.literal("image"),
    url: z.string().min(1).optional(),
    bytes: z.base64().optional(),
    mediaType: z.string().optional(),
    /** How closely the model should look; providers that know no such knob ignore it. */
    detail: z.enum(["auto", "low", "high"]).default("auto"),
  })
  .refine((image) => (image.url === undefined) !== (image.bytes === undefined), {
    message: "an image needs exactly one of url or bytes",
  });
export type ImageContent = z.output<typeof ImageContent>;
export type ImageContentInput = z.input<typeof ImageContent>;

/**
 * One piece of message content: text, or an image.
 * @example
 * conversation.addMessage("user", ["What is this?", { type: "image", url: dataUrl }]);
 */
export const ContentPart = z.union([z.string(), ImageContent]);
export type ContentPart = z.output<typeof ContentPart>;
export type ContentPartInput = z.input<typeof ContentPart>;

/**
 * A chat message. A string content is stored as `[string]` so content always has one shape.
 * @example
 * MessageItem.parse({ type: "message", role: "user", content: "Hi" }).content; // ["Hi"]
 */
export const MessageItem = z.object({
  type: z.literal("message"),
  id: z
    .string()
    .min(1)
    .default(() => newId(ID_PREFIX.message)),
  ...base,
  role: ItemRole,
  content: z.union([z.string().transform((text) => [text]), z.array(ContentPart)]),
  /** Participant name some providers accept on a message. */
  name: z.string().optional(),
  /** The speaker was cut off (voice barge-in); the content is what was actually said. */
  interrupted: z.boolean().default(false),
  /** Free-form flags; `extra.summary === true` marks a summary (decision 3). */
  extra: JsonObject.default(() => ({})),
  /** Speech-recognition confidence of a transcribed message. */
  confidence: z.number().optional(),
  metrics: JsonObject.optional(),
  /** Instructions to use when the input is audio; falls back to `content`. */
  audioInstructions: z.string().optional(),
  /** Instructions to use when the input is text; falls back to `content`. */
  textInstructions: z.string().optional(),
});
export type MessageItem = z.output<typeof MessageItem>;
export type MessageItemInput = z.input<typeof MessageItem>;

/**
 * A tool invocation requested by the model.
 * @example
 * FunctionCallItem.parse({ type: "function_call", name: "search", arguments: "{\"q\":\"x\"}" });
 */
export const FunctionCallItem = z.object({
  type: z.literal("function_call"),
  id: z
    .string()
    .min(1)
    .default(() => newId(ID_PREFIX.function_call)),
  ...base,
  name: z.string().min(1),
  /** The arguments exactly as the model produced them: a JSON string, kept verbatim. */
  arguments: z.string().default("{}"),
  callId: z
    .string()
    .min(1)
    .default(() => newId(ID_PREFIX.call)),
  /** Provider data that must travel with this exact call, e.g. a Gemini thought signature. */
  metadata: JsonObject.optional(),
});
export type FunctionCallItem = z.output<typeof FunctionCallItem>;
export type FunctionCallItemInput = z.input<typeof FunctionCallItem>;

/**
 * The result of a tool call, matched to it by `callId`.
 * @example
 * FunctionOutputItem.parse({ type: "function_call_output", name: "f", callId, output: "ok" });
 */
export const FunctionOutputItem = z.object({
  type: z.literal("function_call_output"),
  id: z
    .string()
    .min(1)
    .default(() => newId(ID_PREFIX.function_call_output)),
  ...base,
  name: z.string(),
  callId: z.string().min(1),
  output: z.string(),
  isError: z.boolean().default(false),
  metadata: JsonObject.optional(),
});
export type FunctionOutputItem = z.output<typeof FunctionOutputItem>;
export type FunctionOutputItemInput = z.input<typeof FunctionOutputItem>;

/**
 * Control passed from one agent to another; structural, never sent to a model.
 * @example
 * HandoffItem.parse({ type: "agent_handoff", fromAgent: "triage", toAgent: "billing" });
 */
export const HandoffItem = z.object({
  type: z.literal("agent_handoff"),
  id: z
    .string()
    .min(1)
    .default(() => newId(ID_PREFIX.agent_handoff)),
  ...base,
  fromAgent: z.string().optional(),
  toAgent: z.string().min(1),
  reason: z.string().optional(),
});
export type HandoffItem = z.output<typeof HandoffItem>;
export type HandoffItemInput = z.input<typeof HandoffItem>;

/**
 * A mid-conversation change of instructions and/or tools; structural. An absent
 * field leaves that part of the configuration as it was.
 * @example
 * ConfigUpdateItem.parse({ type: "agent_config_update", tools: ["search"] });
 */
export const ConfigUpdateItem = z.object({
  type: z.literal("agent_config_update"),
  id: z
    .string()
    .min(1)
    .default(() => newId(ID_PREFIX.agent_config_update)),
  ...base,
  instructions: z.string().optional(),
  tools: z.array(z.string()).optional(),
});
export type ConfigUpdateItem = z.output<typeof ConfigUpdateItem>;
export type ConfigUpdateItemInput = z.input<typeof ConfigUpdateItem>;

/**
 * Any conversation item.
 * @example
 * const item = Item.parse({ type: "message", role: "user", content: "Hi" });
 * // item.content is ["Hi"], item.id starts with "msg_"
 */
export const Item = z.discriminatedUnion("type", [
  MessageItem,
  FunctionCallItem,
  FunctionOutputItem,
  HandoffItem,
  ConfigUpdateItem,
]);
export type Item = z.output<typeof Item>;
export type ItemInput = z.input<typeof Item>;
export type ItemType = Item["type"];

const ITEM_TYPES: ReadonlySet<string> = new Set<ItemType>([
  "message",
  "function_call",
  "function_call_output",
  "agent_handoff",
  "agent_config_update",
]);

/**
 * The persisted form of a conversation.
 * @example
 * const json: ConversationJson = conversation.toJSON();
 */
export interface ConversationJson {
  items: Item[];
}

/**
 * Validates stored items. Entries of an unknown `type` are skipped so data written by a
 * newer version still loads; a malformed entry of a known type throws, since
 * silently dropping it would lose history. Duplicate ids throw: the store keys rows by id.
 * @example
 * parseItems([{ type: "message", role: "user", content: "Hi" }, { type: "future_kind" }]);
 * // one item
 */
export function parseItems(raw: readonly unknown[]): Item[] {
  const items: Item[] = [];
  for (const entry of raw) {
    const type = (entry as { type?: unknown } | null)?.type;
    if (typeof type === "string" && !ITEM_TYPES.has(type)) continue;
    items.push(Item.parse(entry));
  }
  assertUniqueIds(items);
  return items;
}

/** Throws when two items share an id. */
export function assertUniqueIds(items: readonly Item[]): void {
  const seen = new Set<string>();
  for (const item of items) {
    if (seen.has(item.id)) throw new Error(`duplicate conversation item id "${item.id}"`);
    seen.add(item.id);
  }
}

/**
 * True for a system or developer message: the agent's instructions.
 * @example
 * conversation.items.filter(isInstruction);
 */
export function isInstruction(item: Item): item is MessageItem {
  return item.type === "message" && (item.role === "system" || item.role === "developer");
}

/**
 * True for a summary message (decision 3: an assistant message flagged in `extra`).
 * @example
 * conversation.items.some(isSummary);
 */
export function isSummary(item: Item): item is MessageItem {
  return item.type === "message" && item.extra.summary === true;
}

/**
 * True for a user message; each one starts a user turn.
 * @example
 * conversation.items.findLast(isUserMessage);
 */
export function isUserMessage(item: Item): item is MessageItem {
  return item.type === "message" && item.role === "user";
}

/**
 * True for handoffs and config updates, which shape the conversation but are never sent.
 * @example
 * conversation.items.filter((item) => !isStructural(item));
 */
export function isStructural(item: Item): boolean {
  return item.type === "agent_handoff" || item.type === "agent_config_update";
}

/**
 * The text parts of a message joined by newlines; images are left out.
 * @example
 * const said = ctx.conversation.messages().map(messageText); // each message as plain text
 */
export function messageText(message: MessageItem): string {
  return message.content.filter((part): part is string => typeof part === "string").join("\n");
}

/**
 * The instruction variant for a modality, falling back to the content.
 * @example
 * instructionsForModality(message, "audio"); // audioInstructions ?? content
 */
export function instructionsForModality(
  message: MessageItem,
  modality: "audio" | "text",
): string | ContentPart[] {
  const variant = modality === "audio" ? message.audioInstructions : message.textInstructions;
  return variant ?? message.content;
}

/** Milliseconds since the epoch of an item's `createdAt`, for ordering. */
export function timeOf(item: Item): number {
  return Date.parse(item.createdAt);
}

/**
 * A deep copy. Items are plain JSON, and a JSON round trip copies them several times
 * faster than structuredClone in workerd.
 */
export function cloneItem<T extends Item>(item: T): T {
  return JSON.parse(JSON.stringify(item)) as T;
}

/** Deep copies of many items at once (one JSON round trip). */
export function cloneItems(items: readonly Item[]): Item[] {
  return JSON.parse(JSON.stringify(items)) as Item[];
}

/**
 * Items the framework built itself, complete as `Item.parse` would return them (every
 * default filled, keys in the schema's order), e.g. a model's streamed answer. Recording
 * one skips the schema; an item from anywhere else (a handler, a stored row) is parsed.
 * Object identity is the mark, so nothing a client sends can carry it.
 */
const builtItems = new WeakSet<object>();

/** Marks `item` as built complete by the framework (see `isBuiltItem`). Internal. */
export function builtItem<T extends Item>(item: T): T {
  builtItems.add(item);
  return item;
}

/** True for an item `builtItem` marked: it needs no validation. Internal. */
export function isBuiltItem(item: unknown): item is Item {
  return typeof item === "object" && item !== null && builtItems.has(item);
}
