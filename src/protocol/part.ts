import * as z from "zod";
import { compact, JsonObject, JsonValue, newId } from "./json";

/**
 * A part is `{ type, content }` plus optional A2A part metadata. Text, data and file
 * parts are A2A's own; the others are Edgelink's and travel inside A2A `data` parts with
 * a marker, so any A2A peer can carry them and we get them back as themselves.
 */
const base = { metadata: JsonObject.optional() };

export const TextPart = z.object({
  type: z.literal("text"),
  content: z.string(),
  mediaType: z.string().optional(),
  ...base,
});
/** Structured JSON; the seed calls it `json`, A2A calls it `data`. */
export const DataPart = z.object({
  type: z.literal("data"),
  content: JsonValue,
  mediaType: z.string().optional(),
  ...base,
});
/** A file, image, audio or video, by URL or by base64 bytes; content is opaque. */
export const FileContent = z
  .object({
    url: z.string().optional(),
    bytes: z.base64().optional(),
    mediaType: z.string().optional(),
    filename: z.string().optional(),
  })
  .refine((f) => (f.url === undefined) !== (f.bytes === undefined), {
    message: "a file part needs exactly one of url or bytes",
  });
export const FilePart = z.object({ type: z.literal("file"), content: FileContent, ...base });

export const ToolCallContent = z.object({
  toolName: z.string().min(1),
  args: JsonObject.default({}),
  callId: z
    .string()
    .min(1)
    .default(() => newId("call_")),
});
export const ToolCallPart = z.object({
  type: z.literal("tool_call"),
  content: ToolCallContent,
  ...base,
});
export const ToolOutputContent = z.object({
  callId: z.string().min(1),
  /** The tool that answered; set on the results agents stream while they work. */
  toolName: z.string().optional(),
  result: JsonValue.default(null),
  error: z.string().nullable().default(null),
});
export const ToolOutputPart = z.object({
  type: z.literal("tool_output"),
  content: ToolOutputContent,
  ...base,
});
/** A request for model inference; absent keys stay absent, empty strings stay. */
export const InferContent = z.object({
  prompt: z.string().optional(),
  user: z.string().optional(),
  outputSchema: JsonObject.optional(),
  metadata: JsonObject.optional(),
});
export const InferPart = z.object({ type: z.literal("infer"), content: InferContent, ...base });
export const InferOutputPart = z.object({
  type: z.literal("infer_output"),
  content: z.union([z.string(), JsonObject]),
  ...base,
});
/** An error; it fails the task, `retryable` is advice only. */
export const ErrorContent = z.object({
  code: z.string(),
  message: z.string(),
  retryable: z.boolean().default(false),
});
export const ErrorPart = z.object({ type: z.literal("error"), content: ErrorContent, ...base });
/** A status report; `message` is present as null when absent. */
export const StatusContent = z.object({
  state: z.string(),
  message: z.string().nullable().default(null),
});
export const StatusPart = z.object({ type: z.literal("status"), content: StatusContent, ...base });
/** A routing decision. */
export const RouteContent = z.object({
  routeKey: z.string().min(1),
  reason: z.string().optional(),
  confidence: z.number().min(0).max(1).optional(),
  metadata: JsonObject.default({}),
});
export const RoutePart = z.object({ type: z.literal("route"), content: RouteContent, ...base });
export const DecisionPart = z.object({
  type: z.literal("decision"),
  content: RouteContent,
  ...base,
});

export const KNOWN_PART_TYPES = [
  "text",
  "data",
  "file",
  "tool_call",
  "tool_output",
  "infer",
  "infer_output",
  "error",
  "status",
  "route",
  "decision",
] as const;
export type KnownPartType = (typeof KNOWN_PART_TYPES)[number];

/** A part of a type this version does not know; preserved untouched. */
export const OtherPart = z.object({
  type: z
    .string()
    .min(1)
    .refine((t) => !(KNOWN_PART_TYPES as readonly string[]).includes(t), "reserved part type"),
  content: JsonValue,
  ...base,
});

const KnownPart = z.discriminatedUnion("type", [
  TextPart,
  DataPart,
  FilePart,
  ToolCallPart,
  ToolOutputPart,
  InferPart,
  InferOutputPart,
  ErrorPart,
  StatusPart,
  RoutePart,
  DecisionPart,
]);

/** Accepts the seed's `json` spelling for data parts on input. */
export const Part = z.preprocess(
  (v) =>
    v && typeof v === "object" && (v as { type?: unknown }).type === "json"
      ? { ...v, type: "data" }
      : v,
  z.union([KnownPart, OtherPart]),
);
export type KnownPart = z.infer<typeof KnownPart>;
export type OtherPart = z.infer<typeof OtherPart>;
export type Part = KnownPart | OtherPart;

/**
 * Whether a part is one of Edgelink's types (text, data, file, tool_call, ...), not
 * another party's custom type; narrows it to those.
 * @example
 * ```ts
 * for (const part of message.parts) if (isKnownPart(part) && part.type === "text") console.log(part.content);
 * ```
 */
export const isKnownPart = (part: Part): part is KnownPart =>
  (KNOWN_PART_TYPES as readonly string[]).includes(part.type);
export type TextPart = z.infer<typeof TextPart>;
export type DataPart = z.infer<typeof DataPart>;
export type FilePart = z.infer<typeof FilePart>;
export type ToolCallPart = z.infer<typeof ToolCallPart>;
export type ToolOutputPart = z.infer<typeof ToolOutputPart>;
export type InferPart = z.infer<typeof InferPart>;
export type InferOutputPart = z.infer<typeof InferOutputPart>;
export type ErrorPart = z.infer<typeof ErrorPart>;
export type StatusPart = z.infer<typeof StatusPart>;
export type RoutePart = z.infer<typeof RoutePart>;
export type DecisionPart = z.infer<typeof DecisionPart>;
export type FileContent = z.infer<typeof FileContent>;

/**
 * Part factories.
 * @example
 * ```ts
 * const parts = [Parts.text("hi"), Parts.toolCall("add", { a: 1, b: 2 })];
 * ```
 */
export const Parts = {
  text: (content: string): TextPart => ({ type: "text", content }),
  data: (content: JsonValue): DataPart => ({ type: "data", content }),
  json: (content: JsonValue): DataPart => ({ type: "data", content }),
  file: (content: FileContent): FilePart => ({ type: "file", content: FileContent.parse(content) }),
  image: (url: string, mediaType = "image/png"): FilePart => ({
    type: "file",
    content: { url, mediaType },
  }),
  toolCall: (toolName: string, args: JsonObject = {}, callId?: string): ToolCallPart => ({
    type: "tool_call",
    content: ToolCallContent.parse({ toolName, args, callId }),
  }),
  toolOutput: (callId: string, result: JsonValue, error: string | null = null): ToolOutputPart => ({
    type: "tool_output",
    content: { callId, result, error },
  }),
  infer: (content: z.input<typeof InferContent> = {}): InferPart => ({
    type: "infer",
    content: compact(InferContent.parse(content)),
  }),
  inferOutput: (content: string | JsonObject): InferOutputPart => ({
    type: "infer_output",
    content,
  }),
  error: (code: string, message: string, retryable = false): ErrorPart => ({
    type: "error",
    content: { code, message, retryable },
  }),
  status: (state: string, message: string | null = null): StatusPart => ({
    type: "status",
    content: { state, message },
  }),
  route: (
    routeKey: string,
    extra: Omit<z.input<typeof RouteContent>, "routeKey"> = {},
  ): RoutePart => ({
    type: "route",
    content: RouteContent.parse({ ...extra, routeKey }),
  }),
  decision: (
    routeKey: string,
    extra: Omit<z.input<typeof RouteContent>, "routeKey"> = {},
  ): DecisionPart => ({ type: "decision", content: RouteContent.parse({ ...extra, routeKey }) }),
} as const;

/**
 * Concatenated text of the text parts, the way a human reads a message.
 * @example
 * ```ts
 * textOf([Parts.text("Hello, "), Parts.data({ n: 1 }), Parts.text("world")]); // "Hello, world"
 * ```
 */
export function textOf(parts: readonly Part[]): string {
  return parts
    .filter((p): p is TextPart => p.type === "text")
    .map((p) => p.content)
    .join("");
}
