import * as z from "zod";
import { providerItems } from "../../history/config";
import {
  type ContentPart,
  type FunctionCallItem,
  type ImageContent,
  isInstruction,
  type MessageItem,
  messageText,
} from "../../history/items";
import { ProviderError } from "../base/errors";
import { type ModelRequest, ReasoningBlock, type ToolChoice } from "../base/types";

/**
 * Request conversion for the OpenAI Responses API: conversation items
 * become `input` items, the system prompt becomes `instructions`, and thinking stored on an
 * assistant turn is replayed as encrypted `reasoning` items. The adapter keeps no state on
 * OpenAI's side (`store: false`): every call carries the whole conversation.
 */

/** Provider name of the adapter and of the reasoning blocks it writes and replays. */
export const OPENAI_RESPONSES = "openai-responses";

/** Part of a multimodal message. */
export type ResponsesContent =
  | { type: "input_text"; text: string }
  | { type: "input_image"; image_url: string; detail?: "low" | "high" };

export interface ResponsesMessage {
  role: "user" | "assistant" | "system" | "developer";
  /** A string when the message is text only, as recorded requests send it. */
  content: string | ResponsesContent[];
}

export interface ResponsesReasoningItem {
  type: "reasoning";
  id: string;
  encrypted_content: string;
  summary: { type: "summary_text"; text: string }[];
}

export interface ResponsesFunctionCall {
  type: "function_call";
  /** The provider's `fc_` item id; sent only next to the reasoning item it belongs to. */
  id?: string;
  call_id: string;
  name: string;
  arguments: string;
}

export interface ResponsesFunctionOutput {
  type: "function_call_output";
  call_id: string;
  output: string;
}

export type ResponsesInputItem =
  | ResponsesMessage
  | ResponsesReasoningItem
  | ResponsesFunctionCall
  | ResponsesFunctionOutput;

/** Tools for Responses: function tools are flat, not nested under `function`. */
export interface ResponsesTool {
  type: "function";
  name: string;
  description: string;
  parameters: Record<string, unknown>;
  strict?: boolean;
}

export interface ResponsesBody {
  model: string;
  instructions?: string;
  input: ResponsesInputItem[];
  tools?: ResponsesTool[];
  tool_choice?: "auto" | "none" | "required" | { type: "function"; name: string };
  text?: { format: { type: "json_schema"; name: string; schema: Record<string, unknown> } };
  reasoning?: { effort?: string; summary?: "auto" };
  include?: string[];
  temperature?: number;
  top_p?: number;
  max_output_tokens?: number;
  metadata?: Record<string, string>;
  stream: true;
  store?: boolean;
  /** `providerOptions` keys, merged last. */
  [key: string]: unknown;
}

export interface ResponsesBodyOptions {
  model: string;
  /**
   * The model reasons (o-series, gpt-5): later instruction messages go as `developer`, and
   * encrypted reasoning is asked for so it can be replayed on the next turn.
   */
  reasoningModel: boolean;
  /** Sends `strict: true` on every tool; only valid when each schema meets OpenAI's strict rules. */
  strictTools?: boolean;
}

/**
 * The Responses request body for a normalized request.
 *
 * Decisions: `store: false` always, since the adapter replays the whole history itself
 * and never uses `previous_response_id` (nothing is kept on OpenAI's side;
 * `providerOptions: { store: true }` turns storage back on). Encrypted reasoning is asked
 * for (`include: ["reasoning.encrypted_content"]`) whenever the model reasons or reasoning
 * was requested, because without storage it is the only way to hand a reasoning item back.
 * @example
 * const body = responsesBody(ModelRequest.parse({ messages: [{ role: "user", content: "Hi" }] }), {
 *   model: "gpt-5-mini",
 *   reasoningModel: true,
 * });
 */
export function responsesBody(request: ModelRequest, options: ResponsesBodyOptions): ResponsesBody {
  if (request.stop?.length) {
    throw new ProviderError({
      provider: OPENAI_RESPONSES,
      kind: "config",
      message: "the OpenAI Responses API has no stop sequences; leave `stop` unset for this model",
    });
  }
  const { instructions, input } = convertItems(request, options.reasoningModel);
  const body: ResponsesBody = { model: options.model, input, stream: true, store: false };
  if (instructions) body.instructions = instructions;
  if (request.tools.length) {
    body.tools = request.tools.map((tool) => ({
      type: "function",
      name: tool.name,
      description: tool.description,
      parameters: tool.parameters,
      ...(options.strictTools ? { strict: true } : {}),
    }));
  }
  if (request.toolChoice !== undefined) body.tool_choice = toolChoice(request.toolChoice);
  if (request.outputSchema) {
    body.text = {
      format: { type: "json_schema", name: request.outputName, schema: request.outputSchema },
    };
  }
  if (request.reasoning) {
    const reasoning: NonNullable<ResponsesBody["reasoning"]> = {};
    if (request.reasoning.effort) reasoning.effort = request.reasoning.effort;
    if (request.reasoning.include) reasoning.summary = "auto";
    if (Object.keys(reasoning).length) body.reasoning = reasoning;
  }
  // Asking a model that cannot reason for encrypted reasoning is an error on OpenAI's side.
  if (options.reasoningModel || request.reasoning) body.include = ["reasoning.encrypted_content"];
  if (request.temperature !== undefined) body.temperature = request.temperature;
  if (request.topP !== undefined) body.top_p = request.topP;
  if (request.maxTokens !== undefined) body.max_output_tokens = request.maxTokens;
  if (request.metadata) body.metadata = request.metadata;
  return { ...body, ...request.providerOptions };
}

function toolChoice(choice: ToolChoice): NonNullable<ResponsesBody["tool_choice"]> {
  return typeof choice === "string" ? choice : { type: "function", name: choice.name };
}

/**
 * The system prompt and the first instruction message make `instructions`; later
 * instruction messages stay where they are, as `developer` for reasoning models and as
 * `system` otherwise. Outputs whose call is not in the input are dropped (OpenAI rejects
 * them).
 */
function convertItems(
  request: ModelRequest,
  reasoningModel: boolean,
): { instructions: string; input: ResponsesInputItem[] } {
  const items = providerItems(request.messages);
  const first = items.findIndex(isInstruction);
  const head = first >= 0 ? messageText(items[first] as MessageItem) : "";
  const instructions = [request.system ?? "", head].filter((text) => text !== "").join("\n\n");
  const input: ResponsesInputItem[] = [];
  const calls = new Set<string>();
  // Whether the current assistant turn replayed its reasoning (see functionCall).
  let replayed = false;
  items.forEach((item, index) => {
    if (index === first) return;
    switch (item.type) {
      case "message":
        if (item.role === "assistant") {
          replayed = pushReasoning(input, item.extra.reasoning) || replayed;
          const text = messageText(item);
          if (text !== "") input.push({ role: "assistant", content: text });
          return;
        }
        replayed = false;
        input.push(message(item, reasoningModel));
        return;
      case "function_call":
        replayed = pushReasoning(input, item.metadata?.reasoning) || replayed;
        calls.add(item.callId);
        input.push(functionCall(item, replayed));
        return;
      case "function_call_output":
        replayed = false;
        if (calls.has(item.callId)) {
          input.push({ type: "function_call_output", call_id: item.callId, output: item.output });
        }
        return;
      default:
        return;
    }
  });
  return { instructions, input };
}

function message(item: MessageItem, reasoningModel: boolean): ResponsesMessage {
  const role = item.role === "user" ? "user" : reasoningModel ? "developer" : "system";
  if (role !== "user" || item.content.every((part) => typeof part === "string")) {
    return { role, content: messageText(item) };
  }
  return { role, content: item.content.map(contentPart) };
}

function contentPart(part: ContentPart): ResponsesContent {
  if (typeof part === "string") return { type: "input_text", text: part };
  const image: ResponsesContent = { type: "input_image", image_url: imageUrl(part) };
  if (part.detail !== "auto") image.detail = part.detail;
  return image;
}

function imageUrl(image: ImageContent): string {
  if (image.url !== undefined) return image.url;
  if (!image.mediaType) {
    throw new ProviderError({
      provider: OPENAI_RESPONSES,
      kind: "config",
      message: "an image given as bytes needs a mediaType (e.g. image/png) to be sent to OpenAI",
    });
  }
  return `data:${image.mediaType};base64,${image.bytes}`;
}

/**
 * The provider's item id goes with a call only when that turn's reasoning items are
 * replayed too: OpenAI rejects an `fc_` id whose reasoning item is missing ("provided
 * without its required 'reasoning' item"), while a call without an id is always accepted.
 */
function functionCall(item: FunctionCallItem, replayed: boolean): ResponsesFunctionCall {
  const itemId = item.metadata?.itemId;
  const id = replayed && typeof itemId === "string" && itemId !== "" ? itemId : null;
  return {
    type: "function_call",
    ...(id ? { id } : {}),
    call_id: item.callId,
    name: item.name,
    arguments: item.arguments,
  };
}

const StoredReasoning = z.array(ReasoningBlock);

/**
 * Appends the reasoning items stored on an assistant turn; returns whether there were any.
 * The decoder writes one block per summary part, all with the item's id (the first one
 * also carries the encrypted content), so consecutive blocks of one id are one item. An
 * item without encrypted content cannot be replayed without storage and is left out.
 */
function pushReasoning(input: ResponsesInputItem[], stored: unknown): boolean {
  if (stored === undefined) return false;
  const parsed = StoredReasoning.safeParse(stored);
  if (!parsed.success) return false;
  const items: { id: string; encrypted: string; summary: string[] }[] = [];
  for (const block of parsed.data) {
    if (block.provider !== OPENAI_RESPONSES || !block.id) continue;
    let last = items.at(-1);
    if (last?.id !== block.id) {
      last = { id: block.id, encrypted: "", summary: [] };
      items.push(last);
    }
    if (block.encrypted && !last.encrypted) last.encrypted = block.encrypted;
    if (block.text !== "") last.summary.push(block.text);
  }
  let pushed = false;
  for (const item of items) {
    if (!item.encrypted) continue;
    input.push({
      type: "reasoning",
      id: item.id,
      encrypted_content: item.encrypted,
      summary: item.summary.map((text) => ({ type: "summary_text", text })),
    });
    pushed = true;
  }
  return pushed;
}
