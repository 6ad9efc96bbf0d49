import * as z from "zod";
import { JsonObject, newId, nowIso } from "./json";
import { Part, Parts } from "./part";

/** Who sent a message. A2A knows user and agent; assistant and system ride along. */
export const Role = z.enum(["user", "agent", "assistant", "system"]);
export type Role = z.infer<typeof Role>;

export const Message = z.object({
  messageId: z
    .string()
    .min(1)
    .default(() => newId()),
  role: Role.default("user"),
  parts: z.array(Part).default([]),
  contextId: z.string().optional(),
  taskId: z.string().optional(),
  metadata: JsonObject.optional(),
  extensions: z.array(z.string()).optional(),
  referenceTaskIds: z.array(z.string()).optional(),
  timestamp: z.iso.datetime().default(() => nowIso()),
});
export type Message = z.infer<typeof Message>;
export type MessageInput = z.input<typeof Message>;

function make(role: Role, parts: Part[]): Message {
  return { messageId: newId(), role, parts, timestamp: nowIso() };
}

/**
 * Message factories and chainable edits.
 * @example
 * const m = Messages.user("What is 2 + 2?");
 * Messages.addPart(m, Parts.data({ hint: "math" }));
 */
export const Messages = {
  create: (input: MessageInput = {}): Message => Message.parse(input),
  user: (text: string): Message => make("user", [Parts.text(text)]),
  agent: (text: string): Message => make("agent", [Parts.text(text)]),
  assistant: (text: string): Message => make("assistant", [Parts.text(text)]),
  system: (text: string): Message => make("system", [Parts.text(text)]),
  /** A user message holding one infer part. */
  infer: (content: Parameters<typeof Parts.infer>[0] = {}): Message =>
    make("user", [Parts.infer(content)]),
  addText: (message: Message, text: string): Message => {
    message.parts.push(Parts.text(text));
    return message;
  },
  addPart: (message: Message, part: Part): Message => {
    message.parts.push(part);
    return message;
  },
} as const;
