import type { JsonObject } from "../json";
import { isClientId, isTaskIdString, LIMITS } from "../limits";

/**
 * The plainest v1 SendMessage params, checked by hand: what nearly every message is
 * (text parts, no metadata, at most a blocking choice and a history length). zod walks a
 * schema generically inside a Worker (no code generation there) at a cost several times
 * this. Anything else, valid or not, is left to the schema (`null`), so the schema stays
 * the one rule and its errors are the only errors; the test holds the two to the same
 * answers.
 */
export interface PlainV1Send {
  message: {
    messageId: string;
    contextId?: string;
    taskId?: string;
    role: "user";
    parts: { text: string }[];
  };
  historyLength?: number;
  returnImmediately?: boolean;
}

const SEND_KEYS: ReadonlySet<string> = new Set(["message", "configuration"]);
const CONFIGURATION_KEYS: ReadonlySet<string> = new Set(["historyLength", "returnImmediately"]);
const MESSAGE_KEYS: ReadonlySet<string> = new Set([
  "messageId",
  "contextId",
  "taskId",
  "role",
  "parts",
]);

function isRecord(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Whether every own key of `value` is one of `keys`. */
function onlyKeys(value: JsonObject, keys: ReadonlySet<string>): boolean {
  for (const key in value) if (!keys.has(key)) return false;
  return true;
}

/** Text-only parts, as the schema would read them; null for anything else. */
function plainParts(parts: unknown): { text: string }[] | null {
  if (!Array.isArray(parts) || parts.length === 0 || parts.length > LIMITS.parts) return null;
  const out: { text: string }[] = [];
  for (const part of parts) {
    if (!isRecord(part)) return null;
    let keys = 0;
    for (const _ in part) keys++;
    if (keys !== 1 || typeof part.text !== "string") return null;
    out.push({ text: part.text });
  }
  return out;
}

/**
 * The params when they are plain (see `PlainV1Send`) and valid; null when the schema
 * must read them.
 */
export function plainV1Send(params: unknown): PlainV1Send | null {
  if (!isRecord(params) || !onlyKeys(params, SEND_KEYS)) return null;
  const m = params.message;
  if (!isRecord(m) || !onlyKeys(m, MESSAGE_KEYS)) return null;
  if (m.role !== "ROLE_USER" && m.role !== 1) return null;
  const { messageId, contextId, taskId } = m;
  if (typeof messageId !== "string" || messageId === "" || !isClientId(messageId)) return null;
  if (contextId !== undefined && (typeof contextId !== "string" || !isClientId(contextId))) {
    return null;
  }
  if (taskId !== undefined && (typeof taskId !== "string" || !isTaskIdString(taskId))) {
    return null;
  }
  const parts = plainParts(m.parts);
  if (parts === null) return null;
  const message: PlainV1Send["message"] = { messageId, role: "user", parts };
  if (contextId !== undefined) message.contextId = contextId;
  if (taskId !== undefined) message.taskId = taskId;
  const configuration = params.configuration;
  if (configuration === undefined) return { message };
  if (!isRecord(configuration) || !onlyKeys(configuration, CONFIGURATION_KEYS)) return null;
  const { historyLength, returnImmediately } = configuration;
  if (
    historyLength !== undefined &&
    !(
      typeof historyLength === "number" &&
      Number.isSafeInteger(historyLength) &&
      historyLength >= 0
    )
  ) {
    return null;
  }
  if (returnImmediately !== undefined && typeof returnImmediately !== "boolean") return null;
  return {
    message,
    historyLength: historyLength as number | undefined,
    returnImmediately: returnImmediately as boolean | undefined,
  };
}
