import * as z from "zod";
import { invalidParams } from "../errors";
import { compact, JsonObject } from "../json";
import { ClientId, Metadata, NameList, TaskIdString } from "../limits";
import { MARK, stripClientMarks } from "../markers";
import type { Message } from "../message";
import { InferContent, ToolCallContent } from "../part";
import type { TaskState } from "../task-state";
import { plainV1Send } from "./send-fast-path";
import { messageFromV1, V1RequestMessage, V1TaskState } from "./wire-v1";
import { messageFromV03, V03RequestMessage } from "./wire-v03";

/** Protocol version a request is served under (§3.6). */
export type ProtocolVersion = "1.0" | "0.3";

/** Binding- and version-neutral operation parameters. */
export interface SendParams {
  message: Message;
  historyLength?: number;
  /** v1 `returnImmediately`; v0.3 `blocking: false`. */
  returnImmediately: boolean;
  acceptedOutputModes?: string[];
  metadata?: JsonObject;
}
export interface TaskIdParams {
  id: string;
  historyLength?: number;
  metadata?: JsonObject;
}
export interface ListTasksParams {
  contextId?: string;
  state?: TaskState;
  pageSize: number;
  pageToken?: string;
  historyLength?: number;
  statusTimestampAfter?: string;
  includeArtifacts: boolean;
}

export const MAX_PAGE_SIZE = 100;
export const DEFAULT_PAGE_SIZE = 50;

const tenant = ClientId.optional();
const historyLength = z.number().int().min(0, "historyLength must be >= 0").optional();

const V1Send = z.object({
  tenant,
  message: V1RequestMessage,
  configuration: z
    .object({
      acceptedOutputModes: NameList.optional(),
      taskPushNotificationConfig: JsonObject.optional(),
      historyLength,
      returnImmediately: z.boolean().optional(),
    })
    .optional(),
  metadata: Metadata.optional(),
});
const V03Send = z.object({
  message: V03RequestMessage,
  configuration: z
    .object({
      acceptedOutputModes: NameList.optional(),
      pushNotificationConfig: JsonObject.optional(),
      historyLength,
      blocking: z.boolean().optional(),
    })
    .optional(),
  metadata: Metadata.optional(),
});
const TaskId = z.object({
  tenant,
  id: TaskIdString.min(1, "id is required"),
  historyLength,
  metadata: Metadata.optional(),
});
const V1List = z.object({
  tenant,
  contextId: ClientId.optional(),
  status: V1TaskState.optional(),
  pageSize: z
    .number()
    .int()
    .min(1, "pageSize must be between 1 and 100")
    .max(MAX_PAGE_SIZE, "pageSize must be between 1 and 100")
    .optional(),
  pageToken: z.string().optional(),
  historyLength,
  statusTimestampAfter: z.iso.datetime({ offset: true }).optional(),
  includeArtifacts: z.boolean().optional(),
});

function parse<S extends z.ZodType>(schema: S, params: unknown): z.output<S> {
  const result = schema.safeParse(params ?? {});
  if (!result.success) throw invalidParams(result.error.issues, "params");
  return result.data;
}

/**
 * What a client's parts must be beyond their wire shape (a peer's parts are read as they
 * come): a file's URL is absolute, so whoever fetches it later reads what was meant; and
 * the parts a client may mark as Edgelink's own have fitting content, since a
 * `tool_call` whose data has no tool name would otherwise fail deep in the conversion as
 * an unexpected error (a 500). v0.3 data parts wrap a non-object value in `{value}`.
 */
function checkClientParts(
  parts: readonly {
    data?: unknown;
    metadata?: JsonObject;
    url?: string;
    file?: { uri?: string };
  }[],
  v03: boolean,
): void {
  parts.forEach((part, i) => {
    const url = v03 ? part.file?.uri : part.url;
    if (url !== undefined && !URL.canParse(url)) {
      const field = v03 ? "file.uri" : "url";
      throw invalidParams(
        [{ path: [i, ...field.split(".")], message: "must be an absolute URL" }],
        "params.message.parts",
      );
    }
    const type = part.metadata?.[MARK.part];
    const schema =
      type === "tool_call" ? ToolCallContent : type === "infer" ? InferContent : undefined;
    if (schema === undefined || part.data === undefined) return;
    const wrapped = v03 && part.metadata?.["edgelink/wrapped"] === true;
    const content = wrapped ? ((part.data as { value?: unknown }).value ?? null) : part.data;
    const result = schema.safeParse(content);
    if (!result.success) {
      const field = `params.message.parts.${i}.data${wrapped ? ".value" : ""}`;
      throw invalidParams(result.error.issues, field);
    }
  });
}

/**
 * A client speaks as the user (§4.1 Role: USER is client to server, AGENT server to
 * client). A message claiming the agent's role would enter the history as the agent's
 * own words, and a model would read it as what it said.
 */
function requireUserRole(role: string, version: ProtocolVersion): void {
  if (role === "user") return;
  const user = version === "1.0" ? "ROLE_USER" : "user";
  throw invalidParams(
    [{ path: ["message", "role"], message: `a client's message has role ${user}` }],
    "params",
  );
}

/** A message's push config is accepted on the wire; the push issue will honour it. */
export function parseSend(
  params: unknown,
  version: ProtocolVersion,
): SendParams & {
  pushConfig?: JsonObject;
} {
  const plain = version === "1.0" ? plainV1Send(params) : null;
  if (plain === null) return parseSendBySchema(params, version);
  return compact({
    message: messageFromV1(plain.message),
    historyLength: plain.historyLength,
    returnImmediately: plain.returnImmediately ?? false,
  });
}

/** `parseSend` by the schemas alone, with no fast path (its test compares the two). */
export function parseSendBySchema(
  params: unknown,
  version: ProtocolVersion,
): SendParams & {
  pushConfig?: JsonObject;
} {
  // Fields left out rather than undefined: the params cross to the object, cloned key by key.
  if (version === "1.0") {
    const p = parse(V1Send, params);
    requireUserRole(p.message.role, version);
    const message = stripClientMarks(p.message);
    checkClientParts(message.parts, false);
    return compact({
      message: messageFromV1(message),
      historyLength: p.configuration?.historyLength,
      returnImmediately: p.configuration?.returnImmediately ?? false,
      acceptedOutputModes: p.configuration?.acceptedOutputModes,
      metadata: p.metadata,
      pushConfig: p.configuration?.taskPushNotificationConfig,
    });
  }
  const p = parse(V03Send, params);
  requireUserRole(p.message.role, version);
  const message = stripClientMarks(p.message);
  checkClientParts(message.parts, true);
  return compact({
    message: messageFromV03(message),
    historyLength: p.configuration?.historyLength,
    returnImmediately: p.configuration?.blocking === false,
    acceptedOutputModes: p.configuration?.acceptedOutputModes,
    metadata: p.metadata,
    pushConfig: p.configuration?.pushNotificationConfig,
  });
}

export function parseTaskId(params: unknown): TaskIdParams {
  const p = parse(TaskId, params);
  return { id: p.id, historyLength: p.historyLength, metadata: p.metadata };
}

export function parseList(params: unknown): ListTasksParams {
  const p = parse(V1List, params);
  const state = p.status === "unknown" ? undefined : p.status;
  return {
    contextId: p.contextId || undefined,
    state,
    pageSize: p.pageSize ?? DEFAULT_PAGE_SIZE,
    pageToken: p.pageToken || undefined,
    historyLength: p.historyLength,
    statusTimestampAfter: p.statusTimestampAfter
      ? new Date(p.statusTimestampAfter).toISOString()
      : undefined,
    includeArtifacts: p.includeArtifacts ?? false,
  };
}

/** Paging of a conversation's history (Edgelink's history API). */
export interface HistoryParams {
  contextId: string;
  pageSize: number;
  /** Position after which the page starts (decoded from the opaque page token). */
  after?: number;
}

export const DEFAULT_HISTORY_PAGE_SIZE = 100;
export const MAX_HISTORY_PAGE_SIZE = 1000;

const History = z.object({
  tenant,
  contextId: ClientId.min(1, "contextId is required"),
  pageSize: z
    .number()
    .int()
    .min(1, `pageSize must be between 1 and ${MAX_HISTORY_PAGE_SIZE}`)
    .max(MAX_HISTORY_PAGE_SIZE, `pageSize must be between 1 and ${MAX_HISTORY_PAGE_SIZE}`)
    .optional(),
  pageToken: z.string().optional(),
});

/** History page tokens are the base64 of the last position shown. */
export function encodeHistoryToken(seq: number): string {
  return btoa(`h${seq}`);
}

export function parseHistory(params: unknown): HistoryParams {
  const p = parse(History, params);
  let after: number | undefined;
  if (p.pageToken) {
    let decoded = "";
    try {
      decoded = atob(p.pageToken);
    } catch {}
    // Exactly what encodeHistoryToken writes: Number() alone reads "h0x10" or "h-5" too.
    after = /^h\d+$/.test(decoded) ? Number(decoded.slice(1)) : Number.NaN;
    if (!Number.isSafeInteger(after)) {
      throw invalidParams([{ path: ["pageToken"], message: "unknown page token" }], "params");
    }
  }
  return { contextId: p.contextId, pageSize: p.pageSize ?? DEFAULT_HISTORY_PAGE_SIZE, after };
}

/** The context a compaction targets; the rest of the body is the compaction request. */
export function parseCompact(params: unknown): { contextId: string; request: JsonObject } {
  const p = parse(
    z.looseObject({ tenant, contextId: ClientId.min(1, "contextId is required") }),
    params,
  );
  const { contextId, tenant: _tenant, ...request } = p;
  return { contextId, request: request as JsonObject };
}
