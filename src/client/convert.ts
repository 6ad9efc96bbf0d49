import type { z } from "zod";
import type { JsonObject, JsonValue } from "../protocol/json";
import { Message } from "../protocol/message";
import { type Part, Parts } from "../protocol/part";
import type { Task } from "../protocol/task";
import { invalidResponse } from "./errors";
import type {
  MessageLike,
  PushConfigInit,
  PushNotificationConfig,
  SendOptions,
  SendResult,
} from "./types";

/** Between the caller's inputs and the wire: messages, push configs, answers. */

export const isObj = (v: JsonValue | undefined): v is JsonObject =>
  v !== null && typeof v === "object" && !Array.isArray(v);

/** Parses a peer's answer; a mismatch is InvalidAgentResponseError naming the field. */
export function read<S extends z.ZodType>(schema: S, value: unknown, what: string): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const where = issue?.path.length ? ` at ${issue.path.join(".")}` : "";
  throw invalidResponse(`the agent's ${what} is malformed${where}: ${issue?.message ?? "invalid"}`);
}

export function compactConfig(c: {
  id: string;
  taskId: string;
  url: string;
  token?: string | undefined;
  authentication?: { scheme: string; credentials?: string | undefined } | undefined;
}): PushNotificationConfig {
  const out: PushNotificationConfig = { id: c.id, taskId: c.taskId, url: c.url };
  if (c.token) out.token = c.token;
  if (c.authentication) {
    out.authentication = { scheme: c.authentication.scheme };
    if (c.authentication.credentials) out.authentication.credentials = c.authentication.credentials;
  }
  return out;
}

export function pushToV1(c: PushConfigInit): JsonObject {
  const out: JsonObject = { url: c.url };
  if (c.id) out.id = c.id;
  if (c.token) out.token = c.token;
  if (c.authentication) out.authentication = { ...c.authentication };
  return out;
}

export function pushToV03(c: PushConfigInit): JsonObject {
  const out: JsonObject = { url: c.url };
  if (c.id) out.id = c.id;
  if (c.token) out.token = c.token;
  if (c.authentication) {
    out.authentication = {
      schemes: [c.authentication.scheme],
      ...(c.authentication.credentials ? { credentials: c.authentication.credentials } : {}),
    };
  }
  return out;
}

/** Text, parts or a message input as a user message addressed per the options. */
export function toMessage(input: MessageLike, options: SendOptions): Message {
  const message =
    typeof input === "string"
      ? Message.parse({ role: "user", parts: [Parts.text(input)] })
      : Array.isArray(input)
        ? Message.parse({ role: "user", parts: input })
        : Message.parse(input);
  if (options.taskId) message.taskId = options.taskId;
  if (options.contextId) message.contextId = options.contextId;
  return message;
}

/**
 * The answer of a send, as text: a direct message's text, else the task's artifacts'
 * text, else its status message's text.
 * @example
 * console.log(answerOf(await agent.send("2 + 2?"))); // "4"
 */
export function answerOf(result: SendResult | Task): string {
  const text = (parts: readonly Part[]) =>
    parts
      .filter((p) => p.type === "text")
      .map((p) => p.content as string)
      .join("");
  if ("kind" in result && result.kind === "message") return text(result.message.parts);
  const task = "kind" in result ? result.task : result;
  const fromArtifacts = task.artifacts.map((a) => text(a.parts)).join("\n");
  if (fromArtifacts) return fromArtifacts;
  return task.status.message ? text(task.status.message.parts) : "";
}
