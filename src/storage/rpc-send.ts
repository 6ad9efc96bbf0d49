/**
 * SendMessage's call to its conversation object in the shape that costs least to cross
 * the RPC boundary. Each argument and each property crosses serialized on both sides;
 * what nearly every message is (text parts, nothing else) crosses as one flat array of
 * strings, which the object reads back into exactly the scope and params the Worker had.
 */
import type { Message } from "../protocol/message";
import type { ProtocolVersion, SendParams } from "../protocol/wire/requests";
import type { Scope } from "./ids";

/** A plain message's call, flat (see `packSend`). */
export type PackedSend = readonly (string | number | null)[];

/** What a packed call carries: the object's `sendMessage` arguments. */
export interface SendCall {
  scope: Scope;
  params: SendParams;
  version: ProtocolVersion;
}

const SCOPE_KEYS: ReadonlySet<string> = new Set([
  "tenant",
  "contextId",
  "owner",
  "inspector",
  "newTaskId",
  "newApproverTaskId",
]);
const PARAMS_KEYS: ReadonlySet<string> = new Set(["message", "historyLength", "returnImmediately"]);
const MESSAGE_KEYS: ReadonlySet<string> = new Set([
  "messageId",
  "role",
  "parts",
  "contextId",
  "taskId",
  "timestamp",
]);

function onlyKeys(value: object, keys: ReadonlySet<string>): boolean {
  for (const key in value) if (!keys.has(key)) return false;
  return true;
}

/** Where each field sits in a packed call; the message's texts follow `TEXTS`. */
const AT = {
  version: 0,
  tenant: 1,
  contextId: 2,
  owner: 3,
  newTaskId: 4,
  newApproverTaskId: 5,
  /** 1: the inspector is on; 2: returnImmediately. */
  flags: 6,
  historyLength: 7,
  messageId: 8,
  role: 9,
  messageContextId: 10,
  taskId: 11,
  timestamp: 12,
} as const;
const TEXTS = 13;

/**
 * The call packed flat, or null when it is not plain (a part other than bare text, any
 * metadata, a trace, an approver, a push config): those cross as they are.
 */
export function packSend(
  scope: Scope,
  params: SendParams,
  version: ProtocolVersion,
): PackedSend | null {
  if (!onlyKeys(scope, SCOPE_KEYS) || typeof scope.owner !== "string") return null;
  if (!onlyKeys(params, PARAMS_KEYS) || typeof params.returnImmediately !== "boolean") return null;
  const m = params.message;
  if (!onlyKeys(m, MESSAGE_KEYS)) return null;
  const packed: (string | number | null)[] = [
    version,
    scope.tenant,
    scope.contextId,
    scope.owner,
    scope.newTaskId ?? null,
    scope.newApproverTaskId ?? null,
    (scope.inspector ? 1 : 0) | (params.returnImmediately ? 2 : 0),
    params.historyLength ?? null,
    m.messageId,
    m.role,
    m.contextId ?? null,
    m.taskId ?? null,
    m.timestamp,
  ];
  for (const part of m.parts) {
    if (part.type !== "text" || typeof part.content !== "string") return null;
    if (!onlyKeys(part, TEXT_PART_KEYS)) return null;
    packed.push(part.content);
  }
  return packed;
}
const TEXT_PART_KEYS: ReadonlySet<string> = new Set(["type", "content"]);

/**
 * The scope and params `packSend` packed, as they were: the same fields in the same
 * order, an absent one absent. Throws a TypeError on anything `packSend` cannot have made.
 */
export function unpackSend(packed: PackedSend): SendCall {
  if (!Array.isArray(packed) || packed.length < TEXTS) {
    throw new TypeError("sendMessage: not a packed call");
  }
  const at = (i: number) => packed[i] as string;
  const optional = (i: number) => (packed[i] === null ? undefined : at(i));
  const flags = packed[AT.flags] as number;
  const scope: Scope = { tenant: at(AT.tenant), contextId: at(AT.contextId), owner: at(AT.owner) };
  if (flags & 1) scope.inspector = true;
  const newTaskId = optional(AT.newTaskId);
  if (newTaskId !== undefined) scope.newTaskId = newTaskId;
  const newApproverTaskId = optional(AT.newApproverTaskId);
  if (newApproverTaskId !== undefined) scope.newApproverTaskId = newApproverTaskId;
  const parts: Message["parts"] = [];
  for (let i = TEXTS; i < packed.length; i++) parts.push({ type: "text", content: at(i) });
  const message = { messageId: at(AT.messageId), role: at(AT.role), parts } as Message;
  const contextId = optional(AT.messageContextId);
  if (contextId !== undefined) message.contextId = contextId;
  const taskId = optional(AT.taskId);
  if (taskId !== undefined) message.taskId = taskId;
  message.timestamp = at(AT.timestamp);
  const params = { message } as SendParams;
  const historyLength = packed[AT.historyLength];
  if (historyLength !== null) params.historyLength = historyLength as number;
  params.returnImmediately = (flags & 2) !== 0;
  return { scope, params, version: at(AT.version) as ProtocolVersion };
}
