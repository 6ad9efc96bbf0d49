import { providerItems } from "../../history/config";
import { type ImageContent, type Item, isInstruction, type MessageItem } from "../../history/items";
import type { JsonObject, JsonValue } from "../../protocol/json";
import { ProviderError } from "../base/errors";
import type { ModelCapabilities, ModelRequest } from "../base/types";

/**
 * Request bodies for the Chat Completions wire format, shared by OpenAI itself,
 * OpenAI-compatible servers and Workers AI. The flavors differ only where the servers do:
 *
 * - `openai`: reasoning models (o-series, gpt-5) get their instructions as `developer` and
 *   the token limit as `max_completion_tokens`; `metadata` is sent (with `store: true`,
 *   the only way OpenAI accepts it).
 * - `compatible`: always `system` and `max_tokens`, no `metadata` (vLLM, Ollama, Groq,
 *   OpenRouter, DeepSeek know these; several reject unknown fields).
 * - `workers-ai`: the inputs of `env.AI.run`: no `model` (it is the first argument), no
 *   `stream_options`, no `reasoning_effort` (Workers AI models share no such knob; use
 *   `providerOptions`), and `""` rather than `null` as the text of a tool-calling turn.
 */
export type ChatFlavor = "openai" | "compatible" | "workers-ai";

export interface ChatBodyContext {
  /** Names the provider in configuration errors. */
  provider?: string;
  /** `tools: false` rejects tools; `structuredOutput: false` puts the schema in the instructions. */
  capabilities?: Pick<ModelCapabilities, "tools" | "structuredOutput">;
}

/**
 * OpenAI models that reason before answering; they take `developer` instructions and
 * `max_completion_tokens`. Matched on the name after any `vendor/` prefix.
 * @example
 * isOpenAIReasoningModel("o4-mini"); // true
 * isOpenAIReasoningModel("gpt-4o"); // false
 */
export function isOpenAIReasoningModel(model: string): boolean {
  const bare = model.slice(model.lastIndexOf("/") + 1);
  return /^(o\d|gpt-5)/.test(bare);
}

/**
 * The Chat Completions body for a request.
 *
 * Instructions: `request.system` and the FIRST system/developer message of the
 * conversation are the instructions; they go first, in one message, `system` (or
 * `developer` for OpenAI reasoning models). A later system/developer message is sent
 * where it stands as a `user` message: strict chat templates (Qwen, Mistral on vLLM)
 * reject a system message anywhere but first, and dropping it would lose what it says.
 *
 * Tool traffic: consecutive function calls become one assistant message with `tool_calls`
 * (joined to the assistant text right before them); each output becomes a `tool` message;
 * an output whose call is not in the conversation is dropped, since the API rejects it.
 * Thinking kept for replay on other providers (`extra.reasoning`) has no place in this
 * format and is not sent.
 *
 * @example
 * const body = toChatCompletionsBody(
 *   ModelRequest.parse({ system: "Be brief.", messages: [{ role: "user", content: "Hi" }], temperature: 0 }),
 *   "gpt-4o-mini",
 *   "openai",
 * );
 * // { model, messages: [{ role: "system", ... }, { role: "user", content: "Hi" }], temperature: 0, stream: true, ... }
 */
export function toChatCompletionsBody(
  request: ModelRequest,
  model: string,
  flavor: ChatFlavor = "openai",
  context: ChatBodyContext = {},
): JsonObject {
  const provider = context.provider ?? flavor;
  const structured = context.capabilities?.structuredOutput ?? true;
  if (request.tools.length > 0 && context.capabilities?.tools === false) {
    throw new ProviderError({
      provider,
      kind: "config",
      message: `${provider} model ${model} does not support tools (capabilities.tools is false)`,
    });
  }
  const reasoningModel = flavor === "openai" && isOpenAIReasoningModel(model);
  const { instructions, messages } = chatMessages(request.messages, flavor, provider);
  const head = [request.system, instructions].filter((text): text is string => !!text);
  if (request.outputSchema && !structured) head.push(schemaInstructions(request.outputSchema));
  if (head.length > 0) {
    messages.unshift({ role: reasoningModel ? "developer" : "system", content: head.join("\n\n") });
  }

  const body: JsonObject = {};
  if (flavor !== "workers-ai") body.model = model;
  body.messages = messages;
  body.stream = true;
  if (flavor !== "workers-ai") body.stream_options = { include_usage: true };
  if (request.tools.length > 0) {
    body.tools = request.tools.map((tool) => ({
      type: "function",
      function: { name: tool.name, description: tool.description, parameters: tool.parameters },
    }));
    if (request.toolChoice !== undefined) {
      body.tool_choice =
        typeof request.toolChoice === "string"
          ? request.toolChoice
          : { type: "function", function: { name: request.toolChoice.name } };
    }
  }
  if (request.outputSchema && structured) {
    body.response_format = {
      type: "json_schema",
      json_schema: { name: request.outputName, schema: request.outputSchema },
    };
  }
  if (request.temperature !== undefined) body.temperature = request.temperature;
  if (request.topP !== undefined) body.top_p = request.topP;
  if (request.maxTokens !== undefined) {
    body[reasoningModel ? "max_completion_tokens" : "max_tokens"] = request.maxTokens;
  }
  if (request.stop?.length) body.stop = request.stop;
  if (request.reasoning?.effort && flavor !== "workers-ai") {
    body.reasoning_effort = request.reasoning.effort;
  }
  if (request.metadata && flavor === "openai") {
    body.metadata = request.metadata;
    body.store = true;
  }
  return { ...body, ...request.providerOptions };
}

/** An output schema without native support: the schema goes into the instructions. */
export function schemaInstructions(schema: JsonObject): string {
  return `Answer with JSON only, no other text. The JSON must match this JSON Schema:\n${JSON.stringify(schema)}`;
}

export interface ChatMessages {
  /** Text of the first system/developer message, or null. */
  instructions: string | null;
  messages: JsonObject[];
}

/** Conversation items → Chat Completions messages, without the leading instructions. */
export function chatMessages(
  items: readonly Item[],
  flavor: ChatFlavor = "openai",
  provider: string = flavor,
): ChatMessages {
  const messages: JsonObject[] = [];
  let instructions: string | null = null;
  let seenInstructions = false;
  const calls = new Set<string>();
  // The assistant message that calls right after it join; anything else closes it.
  let open: { message: JsonObject; calls: JsonValue[] } | null = null;
  for (const item of providerItems(items)) {
    if (item.type === "function_call") {
      if (!open) {
        open = { message: { role: "assistant", content: "" }, calls: [] };
        messages.push(open.message);
      }
      // A turn that only calls tools has no text: `null` for OpenAI, "" where null is refused.
      if (open.message.content === "" && flavor !== "workers-ai") open.message.content = null;
      open.calls.push({
        id: item.callId,
        type: "function",
        function: { name: item.name, arguments: item.arguments },
      });
      open.message.tool_calls = open.calls;
      calls.add(item.callId);
      continue;
    }
    open = null;
    if (item.type === "function_call_output") {
      if (!calls.has(item.callId)) continue;
      messages.push({ role: "tool", tool_call_id: item.callId, content: item.output });
      continue;
    }
    if (item.type !== "message") continue;
    if (isInstruction(item) && !seenInstructions) {
      seenInstructions = true;
      instructions = textOf(item);
      continue;
    }
    if (item.role === "assistant") {
      const text = textOf(item);
      const message: JsonObject = { role: "assistant", content: text };
      if (item.name !== undefined) message.name = item.name;
      messages.push(message);
      open = { message, calls: [] };
      continue;
    }
    const message: JsonObject = { role: "user", content: userContent(item, provider) };
    if (item.name !== undefined) message.name = item.name;
    messages.push(message);
  }
  return { instructions, messages };
}

function textOf(item: MessageItem): string {
  return item.content.filter((part): part is string => typeof part === "string").join("\n");
}

/** Text alone stays a string; with images, parts in their order. */
function userContent(item: MessageItem, provider: string): JsonValue {
  if (item.content.every((part) => typeof part === "string")) return textOf(item);
  return item.content.map((part) =>
    typeof part === "string" ? { type: "text", text: part } : imagePart(part, provider),
  );
}

/** An image as `image_url`; bytes as a `data:` URL; `detail` only when not `auto`. */
export function imagePart(image: ImageContent, provider: string): JsonObject {
  const url = image.url ?? `data:${mediaTypeOf(image, provider)};base64,${image.bytes ?? ""}`;
  const imageUrl: JsonObject = { url };
  if (image.detail !== "auto") imageUrl.detail = image.detail;
  return { type: "image_url", image_url: imageUrl };
}

const SIGNATURES: [prefix: string, mediaType: string][] = [
  ["iVBORw0KGgo", "image/png"],
  ["/9j/", "image/jpeg"],
  ["R0lGOD", "image/gif"],
  ["UklGR", "image/webp"],
];

/** The declared media type, or the one the bytes announce; a guess would be sent as fact. */
function mediaTypeOf(image: ImageContent, provider: string): string {
  if (image.mediaType) return image.mediaType;
  const bytes = image.bytes ?? "";
  const known = SIGNATURES.find(([prefix]) => bytes.startsWith(prefix));
  if (known) return known[1];
  throw new ProviderError({
    provider,
    kind: "config",
    message: "an image given as bytes needs a mediaType (its format could not be recognised)",
  });
}
