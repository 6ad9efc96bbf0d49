import { ERROR_TABLE, type ErrorKind, type FieldViolation } from "../protocol/errors";
import type { JsonObject, JsonValue } from "../protocol/json";

/** A `google.rpc.ErrorInfo` detail: why the call failed, as the agent said it. */
export interface ErrorInfo {
  reason: string;
  domain: string;
  metadata: Record<string, string>;
}

export interface RemoteErrorInit {
  message: string;
  /** JSON-RPC code (derived from the HTTP status and reason on HTTP+JSON). */
  code: number;
  /** The HTTP status of the answer (200 for JSON-RPC errors sent in a 200). */
  httpStatus: number;
  errorInfo?: ErrorInfo;
  fieldViolations?: FieldViolation[];
  /** Every detail object the agent sent, `@type` included. */
  details?: JsonObject[];
}

/**
 * An error answered by a remote agent (JSON-RPC `error` or an HTTP+JSON
 * `google.rpc.Status`). Each A2A error code has its own subclass, so callers write
 * `catch (e) { if (e instanceof TaskNotFoundError) ... }`.
 * It is deliberately not the server's `A2AError`: a peer's error is data about that
 * peer, never something Edgelink answers its own clients with as if it were its own.
 */
export class A2ARemoteError extends Error {
  override name = "A2ARemoteError";
  readonly code: number;
  readonly httpStatus: number;
  readonly errorInfo: ErrorInfo | undefined;
  readonly fieldViolations: FieldViolation[];
  readonly details: JsonObject[];
  constructor(init: RemoteErrorInit) {
    super(init.message);
    this.code = init.code;
    this.httpStatus = init.httpStatus;
    this.errorInfo = init.errorInfo;
    this.fieldViolations = init.fieldViolations ?? [];
    this.details = init.details ?? [];
  }
  /** `ErrorInfo.reason` when the agent sent one (e.g. `TASK_NOT_FOUND`). */
  get reason(): string | undefined {
    return this.errorInfo?.reason;
  }
}

function named(name: string) {
  return class extends A2ARemoteError {
    override name = name;
  };
}

/** -32001: no such task (or not visible to this caller). */
export class TaskNotFoundError extends named("TaskNotFoundError") {}
/** -32002: the task is already finished. */
export class TaskNotCancelableError extends named("TaskNotCancelableError") {}
/** -32003: the agent does not do push notifications. */
export class PushNotificationNotSupportedError extends named("PushNotificationNotSupportedError") {}
/** -32004: the agent does not support this operation (or not on this task). */
export class UnsupportedOperationError extends named("UnsupportedOperationError") {}
/** -32005: a part's media type is not accepted. */
export class ContentTypeNotSupportedError extends named("ContentTypeNotSupportedError") {}
/** -32006: the agent's answer broke the protocol (also raised locally for a malformed answer). */
export class InvalidAgentResponseError extends named("InvalidAgentResponseError") {}
/** -32007: the agent has no extended card. */
export class ExtendedAgentCardNotConfiguredError extends named(
  "ExtendedAgentCardNotConfiguredError",
) {}
/** -32008: declare the extension(s) in `A2A-Extensions` (see `errorInfo.metadata`). */
export class ExtensionSupportRequiredError extends named("ExtensionSupportRequiredError") {}
/** -32009: the agent does not speak the protocol version sent. */
export class VersionNotSupportedError extends named("VersionNotSupportedError") {}
/** Edgelink's -32050: no such conversation. */
export class ContextNotFoundError extends named("ContextNotFoundError") {}
/** The conversation holds all the history it may: compact it or start a new context. */
export class ConversationFullError extends named("ConversationFullError") {}
/** Edgelink's -32052: an agent registry has no live entry by that id. */
export class AgentNotFoundError extends named("AgentNotFoundError") {}
/** Edgelink's -32053: an agent registry holds all the live entries it may. */
export class RegistryFullError extends named("RegistryFullError") {}
/** Edgelink's -32054: a long-term memory holds all the items it may and refuses more. */
export class MemoryFullError extends named("MemoryFullError") {}
/** Edgelink's -32055: no memory item by that id in the caller's memory. */
export class MemoryNotFoundError extends named("MemoryNotFoundError") {}
/** -32700 */
export class JSONParseError extends named("JSONParseError") {}
/** -32600 (also 413 Payload Too Large) */
export class InvalidRequestError extends named("InvalidRequestError") {}
/** -32601 (also 405 on HTTP+JSON) */
export class MethodNotFoundError extends named("MethodNotFoundError") {}
/** -32602: `fieldViolations` names each bad field. */
export class InvalidParamsError extends named("InvalidParamsError") {}
/** -32603 */
export class InternalError extends named("InternalError") {}
/** -32603 with HTTP 503: something the agent depends on is down for now; worth a retry. */
export class UnavailableError extends named("UnavailableError") {}
/**
 * HTTP 429 (-32603 under JSON-RPC, reason `RATE_LIMIT_EXCEEDED`): the agent's rate limit
 * refused the call; `errorInfo.metadata.retryAfterSeconds` says when to retry.
 */
export class RateLimitedError extends named("RateLimitedError") {}
/**
 * 503 MISCONFIGURED: the agent's Worker is deployed wrong; the message names what to fix.
 * Also 503 STORAGE_OUTDATED: its storage was made by a release it does not read.
 */
export class MisconfiguredError extends named("MisconfiguredError") {}
/** 401, or -32010: missing or refused credentials. */
export class UnauthenticatedError extends named("UnauthenticatedError") {}
/** 403, or -32011: authenticated, but not allowed to do this. */
export class PermissionDeniedError extends named("PermissionDeniedError") {}

type RemoteErrorClass = new (init: RemoteErrorInit) => A2ARemoteError;

const CLASS_OF: Record<ErrorKind, RemoteErrorClass> = {
  TaskNotFound: TaskNotFoundError,
  TaskNotCancelable: TaskNotCancelableError,
  PushNotificationNotSupported: PushNotificationNotSupportedError,
  UnsupportedOperation: UnsupportedOperationError,
  ContentTypeNotSupported: ContentTypeNotSupportedError,
  UnsupportedMediaType: ContentTypeNotSupportedError,
  InvalidAgentResponse: InvalidAgentResponseError,
  ExtendedAgentCardNotConfigured: ExtendedAgentCardNotConfiguredError,
  ExtensionSupportRequired: ExtensionSupportRequiredError,
  VersionNotSupported: VersionNotSupportedError,
  ContextNotFound: ContextNotFoundError,
  ConversationFull: ConversationFullError,
  AgentNotFound: AgentNotFoundError,
  RegistryFull: RegistryFullError,
  MemoryFull: MemoryFullError,
  MemoryNotFound: MemoryNotFoundError,
  JSONParse: JSONParseError,
  InvalidRequest: InvalidRequestError,
  PayloadTooLarge: InvalidRequestError,
  MethodNotFound: MethodNotFoundError,
  MethodNotAllowed: MethodNotFoundError,
  InvalidParams: InvalidParamsError,
  Unauthenticated: UnauthenticatedError,
  PermissionDenied: PermissionDeniedError,
  Internal: InternalError,
  Unavailable: UnavailableError,
  RateLimited: RateLimitedError,
  Misconfigured: MisconfiguredError,
  StorageOutdated: MisconfiguredError,
};

const KINDS = Object.entries(ERROR_TABLE) as [ErrorKind, (typeof ERROR_TABLE)[ErrorKind]][];

/** The error kind: the ErrorInfo reason decides, then the JSON-RPC code, then the HTTP status. */
function kindOf(
  reason: string | undefined,
  code: number | undefined,
  http: number,
): ErrorKind | null {
  const byReason = KINDS.find(([, row]) => row.reason === reason);
  if (byReason) return byReason[0];
  const byCode = KINDS.find(([, row]) => row.code === code);
  if (byCode) return byCode[0];
  if (http === 401) return "Unauthenticated";
  if (http === 403) return "PermissionDenied";
  if (http === 405) return "MethodNotAllowed";
  if (http === 413) return "PayloadTooLarge";
  if (http >= 500) return "Internal";
  return null;
}

const isObject = (v: unknown): v is JsonObject =>
  v !== null && typeof v === "object" && !Array.isArray(v);

/** Reads ErrorInfo and BadRequest out of `details` / `data` (an array, or one object). */
function readDetails(
  raw: unknown,
): Pick<RemoteErrorInit, "errorInfo" | "fieldViolations" | "details"> {
  const details = (Array.isArray(raw) ? raw : isObject(raw) ? [raw] : []).filter(isObject);
  let errorInfo: ErrorInfo | undefined;
  const fieldViolations: FieldViolation[] = [];
  for (const d of details) {
    const type = typeof d["@type"] === "string" ? d["@type"] : "";
    if (type.endsWith("google.rpc.ErrorInfo") && !errorInfo) {
      const metadata: Record<string, string> = {};
      if (isObject(d.metadata)) {
        for (const [k, v] of Object.entries(d.metadata)) if (typeof v === "string") metadata[k] = v;
      }
      errorInfo = {
        reason: typeof d.reason === "string" ? d.reason : "",
        domain: typeof d.domain === "string" ? d.domain : "",
        metadata,
      };
    } else if (type.endsWith("google.rpc.BadRequest") && Array.isArray(d.fieldViolations)) {
      for (const v of d.fieldViolations) {
        if (isObject(v) && typeof v.field === "string") {
          fieldViolations.push({
            field: v.field,
            description: typeof v.description === "string" ? v.description : "",
          });
        }
      }
    }
  }
  return { errorInfo, fieldViolations, details };
}

function build(kind: ErrorKind | null, init: RemoteErrorInit): A2ARemoteError {
  const Class = kind ? CLASS_OF[kind] : A2ARemoteError;
  return new Class(init);
}

/** A JSON-RPC `error` member as a typed error. */
export function errorFromJsonRpc(error: JsonValue | undefined, httpStatus = 200): A2ARemoteError {
  const e = isObject(error) ? error : {};
  const code = typeof e.code === "number" ? e.code : -32603;
  const message = typeof e.message === "string" ? e.message : `JSON-RPC error ${code}`;
  const read = readDetails(e.data);
  return build(kindOf(read.errorInfo?.reason, code, httpStatus), {
    message,
    code,
    httpStatus,
    ...read,
  });
}

/**
 * An HTTP+JSON error answer (`{"error": {code, status, message, details}}`) as a typed
 * error. A body that is not that shape (a proxy's HTML page) still gives a typed error
 * from the status, with the start of the body as the message.
 */
export function errorFromHttp(status: number, body: string): A2ARemoteError {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {}
  const error = isObject(json) ? (isObject(json.error) ? json.error : json) : {};
  const read = readDetails(error.details ?? error.data);
  const kind = kindOf(
    read.errorInfo?.reason,
    // v0.3 REST errors are bare `{code, message}` with a JSON-RPC code.
    typeof error.code === "number" && error.code < 0 ? error.code : undefined,
    status,
  );
  const text = body.trim().slice(0, 200);
  const message =
    typeof error.message === "string" ? error.message : `HTTP ${status}${text ? `: ${text}` : ""}`;
  const code = kind ? ERROR_TABLE[kind].code : status >= 500 ? -32603 : -32600;
  return build(kind, { message, code, httpStatus: status, ...read });
}

/** A local finding that the agent's answer is not what the protocol says. */
export function invalidResponse(message: string): InvalidAgentResponseError {
  return new InvalidAgentResponseError({
    message,
    code: ERROR_TABLE.InvalidAgentResponse.code,
    httpStatus: 0,
  });
}

/**
 * The agent could not be reached, or the connection dropped (not an answer from it).
 * `cause` is the underlying network error.
 */
export class A2AConnectionError extends Error {
  override name = "A2AConnectionError";
  constructor(
    message: string,
    readonly url: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * The client refused to send credentials (`auth`, `headers`) where the operator did not
 * point it: an endpoint on another origin than the one connected to (and not in
 * `trustedOrigins`), a redirect, or an API key the card wants in the query string. Raised
 * before anything is sent there; `url` is where they would have gone.
 * @example
 * try {
 *   await connect("https://example.com", { auth: { bearer: token } });
 * } catch (e) {
 *   if (e instanceof CredentialPolicyError) console.error(`not sent to ${e.url}: ${e.message}`);
 * }
 */
export class CredentialPolicyError extends Error {
  override name = "CredentialPolicyError";
  constructor(
    message: string,
    readonly url: string,
  ) {
    super(message);
  }
}
