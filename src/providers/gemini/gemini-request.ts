import { providerItems } from "../../history/config";
import {
  type FunctionCallItem,
  type FunctionOutputItem,
  type ImageContent,
  type MessageItem,
  messageText,
} from "../../history/items";
import type { JsonObject, JsonValue } from "../../protocol/json";
import { parseArguments } from "../base/assemble";
import { isObject } from "../base/http";
import type { ModelRequest, ReasoningBlock, ToolChoice } from "../base/types";

/**
 * Conversation items → a Gemini `generateContent` body.
 *
 * - Instructions (request.system first, then system/developer messages) go to
 *   `systemInstruction`; Gemini has no system role in `contents`.
 * - user → `user`, assistant → `model`; consecutive contents of one role are merged, so all
 *   function responses of a turn travel in one `user` content, as Gemini expects.
 * - A function call carries its thought signature on the same part, byte for byte as the
 *   model sent it; Gemini 3 rejects a turn whose signature is missing or changed.
 */

/**
 * Which schema fields to send. `json-schema` (default): `parametersJsonSchema` and
 * `responseJsonSchema`, which take the JSON Schema our tools and output schemas are written
 * in (`additionalProperties`, `anyOf`, `$ref` ...). `openapi`: `parameters` and
 * `responseSchema`, the older OpenAPI-subset fields, for endpoints that lack the JSON
 * Schema ones; the schema is sent unchanged, so it must already fit that subset.
 */
export type GeminiSchemaMode = "json-schema" | "openapi";

type Role = "user" | "model";
interface Content {
  role: Role;
  parts: JsonObject[];
}

/**
 * Builds the request body. `providerOptions` is merged last, shallowly (e.g.
 * `safetySettings`, or a whole `generationConfig` of your own).
 * @example
 * geminiRequestBody(ModelRequest.parse({ messages: [{ role: "user", content: "Hi" }] }));
 * // { contents: [{ role: "user", parts: [{ text: "Hi" }] }] }
 */
export function geminiRequestBody(
  request: ModelRequest,
  schemaMode: GeminiSchemaMode = "json-schema",
): JsonObject {
  const system: string[] = request.system ? [request.system] : [];
  const contents: Content[] = [];
  const push = (role: Role, parts: JsonObject[]) => {
    if (parts.length === 0) return;
    const last = contents.at(-1);
    if (last?.role === role) last.parts.push(...parts);
    else contents.push({ role, parts });
  };
  const calls = new Map<string, string>();
  for (const item of providerItems(request.messages)) {
    if (item.type === "message") {
      const role = item.role;
      if (role === "system" || role === "developer") system.push(messageText(item));
      else if (role === "user") push("user", item.content.map(contentPart));
      else push("model", assistantParts(item));
    } else if (item.type === "function_call") {
      calls.set(item.callId, item.name);
      push("model", [functionCallPart(item)]);
    } else if (item.type === "function_call_output") {
      const calledName = calls.get(item.callId);
      // Gemini rejects a response to a call it never made (e.g. history trimmed
      // between the two), so an orphaned output is left out.
      if (calledName !== undefined) push("user", [functionResponsePart(item, calledName)]);
    }
  }

  const body: JsonObject = { contents: contents as unknown as JsonValue[] };
  if (system.length) body.systemInstruction = { parts: system.map((text) => ({ text })) };
  if (request.tools.length) {
    const field = schemaMode === "openapi" ? "parameters" : "parametersJsonSchema";
    body.tools = [
      {
        functionDeclarations: request.tools.map((tool) => ({
          name: tool.name,
          description: tool.description,
          [field]: tool.parameters,
        })),
      },
    ];
  }
  if (request.toolChoice !== undefined) {
    body.toolConfig = { functionCallingConfig: functionCallingConfig(request.toolChoice) };
  }
  const generationConfig = generationConfigOf(request, schemaMode);
  if (Object.keys(generationConfig).length) body.generationConfig = generationConfig;
  return { ...body, ...request.providerOptions };
}

function contentPart(part: string | ImageContent): JsonObject {
  return typeof part === "string" ? { text: part } : imagePart(part);
}

/**
 * An assistant message's parts. Its thought signature (from a text answer) rides on the
 * last text part, where Gemini put it; an empty string is dropped (it is the placeholder
 * of a turn that only called tools, and Gemini refuses empty text) unless the signature
 * needs a part to sit on.
 */
function assistantParts(message: MessageItem): JsonObject[] {
  const parts = message.content.filter((part) => part !== "").map((part) => contentPart(part));
  const signature = textSignature(message);
  if (signature !== undefined) {
    const last = parts.findLast((part) => "text" in part);
    if (last) last.thoughtSignature = signature;
    else parts.push({ text: "", thoughtSignature: signature });
  }
  return parts;
}

/** `extra.thoughtSignature`, or the last Gemini block of `extra.reasoning`. */
function textSignature(message: MessageItem): string | undefined {
  const direct = message.extra.thoughtSignature;
  if (typeof direct === "string" && direct !== "") return direct;
  const blocks = message.extra.reasoning;
  if (!Array.isArray(blocks)) return undefined;
  const gemini = blocks.filter(
    (block): block is ReasoningBlock & JsonObject =>
      isObject(block) && block.provider === "gemini" && typeof block.signature === "string",
  );
  return gemini.at(-1)?.signature;
}

function functionCallPart(item: FunctionCallItem): JsonObject {
  // Arguments that are not a JSON object (cut off by the token limit) cannot be a Struct.
  const args = parseArguments(item.arguments) ?? {};
  const part: JsonObject = { functionCall: { args, id: item.callId, name: item.name } };
  const signature = item.metadata?.thoughtSignature;
  if (typeof signature === "string") part.thoughtSignature = signature;
  return part;
}

/**
 * `response` must be an object. Following Google's convention, a result goes under
 * `output` and a failure under `error`; a tool output that is a JSON object or array is
 * passed as that value (the model reads structure better than an escaped string), any
 * other output as the string itself.
 */
function functionResponsePart(item: FunctionOutputItem, calledName: string): JsonObject {
  const value = structuredOutput(item.output);
  return {
    functionResponse: {
      id: item.callId,
      name: item.name || calledName,
      response: item.isError ? { error: value } : { output: value },
    },
  };
}

function structuredOutput(output: string): JsonValue {
  const trimmed = output.trim();
  if (!trimmed.startsWith("{") && !trimmed.startsWith("[")) return output;
  try {
    return JSON.parse(trimmed) as JsonValue;
  } catch {
    return output;
  }
}

function imagePart(image: ImageContent): JsonObject {
  if (image.bytes !== undefined) {
    return {
      inlineData: { mimeType: image.mediaType ?? sniffImageType(image.bytes), data: image.bytes },
    };
  }
  const url = image.url ?? "";
  const data = /^data:([^;,]*)((?:;[^;,]*)*),(.*)$/s.exec(url);
  if (data) {
    const isBase64 = (data[2] ?? "").split(";").includes("base64");
    const payload = data[3] ?? "";
    const bytes = isBase64 ? payload : base64OfText(decodeURIComponent(payload));
    return {
      inlineData: {
        mimeType: image.mediaType ?? (data[1] || sniffImageType(bytes)),
        data: bytes,
      },
    };
  }
  const mimeType = image.mediaType ?? imageTypeOfPath(url);
  return { fileData: mimeType ? { mimeType, fileUri: url } : { fileUri: url } };
}

const SIGNATURES: [string, string][] = [
  ["/9j/", "image/jpeg"],
  ["iVBORw0KGgo", "image/png"],
  ["R0lGOD", "image/gif"],
  ["UklGR", "image/webp"],
];

/** Gemini requires a MIME type for inline bytes; guess it from the first bytes. */
function sniffImageType(base64: string): string {
  return SIGNATURES.find(([prefix]) => base64.startsWith(prefix))?.[1] ?? "image/png";
}

const EXTENSIONS: Record<string, string> = {
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  png: "image/png",
  gif: "image/gif",
  webp: "image/webp",
  heic: "image/heic",
  heif: "image/heif",
};

function imageTypeOfPath(url: string): string | undefined {
  const path = url.split(/[?#]/)[0] ?? "";
  const extension = path.slice(path.lastIndexOf(".") + 1).toLowerCase();
  return EXTENSIONS[extension];
}

function base64OfText(text: string): string {
  let binary = "";
  for (const byte of new TextEncoder().encode(text)) binary += String.fromCharCode(byte);
  return btoa(binary);
}

function functionCallingConfig(choice: ToolChoice): JsonObject {
  if (choice === "auto") return { mode: "AUTO" };
  if (choice === "none") return { mode: "NONE" };
  if (choice === "required") return { mode: "ANY" };
  return { mode: "ANY", allowedFunctionNames: [choice.name] };
}

function generationConfigOf(request: ModelRequest, schemaMode: GeminiSchemaMode): JsonObject {
  const config: JsonObject = {};
  // A zero temperature is a value; test for undefined, never for falsiness.
  if (request.temperature !== undefined) config.temperature = request.temperature;
  if (request.topP !== undefined) config.topP = request.topP;
  if (request.maxTokens !== undefined) config.maxOutputTokens = request.maxTokens;
  if (request.stop?.length) config.stopSequences = request.stop;
  if (request.outputSchema) {
    config.responseMimeType = "application/json";
    const field = schemaMode === "openapi" ? "responseSchema" : "responseJsonSchema";
    config[field] = request.outputSchema;
  }
  const reasoning = request.reasoning;
  if (reasoning) {
    const thinking: JsonObject = { includeThoughts: reasoning.include };
    if (reasoning.budgetTokens !== undefined) thinking.thinkingBudget = reasoning.budgetTokens;
    // Gemini 3 takes a level instead of a budget; a model that knows neither says so.
    else if (reasoning.effort !== undefined) thinking.thinkingLevel = reasoning.effort;
    config.thinkingConfig = thinking;
  }
  return config;
}
