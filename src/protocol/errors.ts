import type { JsonObject } from "./json";

/**
 * Every protocol error Edgelink can answer with, and the one table that maps each to its
 * JSON-RPC code, HTTP status and google.rpc reason (A2A §5.4, §9.5, §11.6).
 */
export const ERROR_TABLE = {
  TaskNotFound: { code: -32001, http: 404, status: "NOT_FOUND", reason: "TASK_NOT_FOUND" },
  TaskNotCancelable: {
    code: -32002,
    http: 400,
    status: "FAILED_PRECONDITION",
    reason: "TASK_NOT_CANCELABLE",
  },
  PushNotificationNotSupported: {
    code: -32003,
    http: 400,
    status: "FAILED_PRECONDITION",
    reason: "PUSH_NOTIFICATION_NOT_SUPPORTED",
  },
  UnsupportedOperation: {
    code: -32004,
    http: 400,
    status: "FAILED_PRECONDITION",
    reason: "UNSUPPORTED_OPERATION",
  },
  ContentTypeNotSupported: {
    code: -32005,
    http: 400,
    status: "INVALID_ARGUMENT",
    reason: "CONTENT_TYPE_NOT_SUPPORTED",
  },
  InvalidAgentResponse: {
    code: -32006,
    http: 500,
    status: "INTERNAL",
    reason: "INVALID_AGENT_RESPONSE",
  },
  ExtendedAgentCardNotConfigured: {
    code: -32007,
    http: 400,
    status: "FAILED_PRECONDITION",
    reason: "EXTENDED_AGENT_CARD_NOT_CONFIGURED",
  },
  ExtensionSupportRequired: {
    code: -32008,
    http: 400,
    status: "FAILED_PRECONDITION",
    reason: "EXTENSION_SUPPORT_REQUIRED",
  },
  VersionNotSupported: {
    code: -32009,
    http: 400,
    status: "FAILED_PRECONDITION",
    reason: "VERSION_NOT_SUPPORTED",
  },
  /** Edgelink's own: a conversation that has no tasks and no history (custom server code). */
  ContextNotFound: {
    code: -32050,
    http: 404,
    status: "NOT_FOUND",
    reason: "CONTEXT_NOT_FOUND",
  },
  /**
   * Edgelink's own: a conversation at `limits.historyItems` takes no new message until it
   * is compacted (custom server code).
   */
  ConversationFull: {
    code: -32051,
    http: 409,
    status: "FAILED_PRECONDITION",
    reason: "CONVERSATION_FULL",
  },
  /** Edgelink's own: an agent registry has no live entry by that id (custom server code). */
  AgentNotFound: {
    code: -32052,
    http: 404,
    status: "NOT_FOUND",
    reason: "AGENT_NOT_FOUND",
  },
  /** Edgelink's own: an agent registry holds its `limits.maxAgents` live entries. */
  RegistryFull: {
    code: -32053,
    http: 409,
    status: "FAILED_PRECONDITION",
    reason: "REGISTRY_FULL",
  },
  /**
   * Edgelink's own: a long-term memory at `memory.limits.maxItems` refuses a new item
   * (when it is configured to refuse rather than evict).
   */
  MemoryFull: {
    code: -32054,
    http: 409,
    status: "FAILED_PRECONDITION",
    reason: "MEMORY_FULL",
  },
  /** Edgelink's own: no memory item by that id in the caller's memory (custom server code). */
  MemoryNotFound: {
    code: -32055,
    http: 404,
    status: "NOT_FOUND",
    reason: "MEMORY_NOT_FOUND",
  },
  JSONParse: { code: -32700, http: 400, status: "INVALID_ARGUMENT", reason: "INVALID_JSON" },
  InvalidRequest: {
    code: -32600,
    http: 400,
    status: "INVALID_ARGUMENT",
    reason: "INVALID_REQUEST",
  },
  PayloadTooLarge: {
    code: -32600,
    http: 413,
    status: "INVALID_ARGUMENT",
    reason: "PAYLOAD_TOO_LARGE",
  },
  MethodNotFound: { code: -32601, http: 404, status: "NOT_FOUND", reason: "METHOD_NOT_FOUND" },
  MethodNotAllowed: {
    code: -32601,
    http: 405,
    status: "UNIMPLEMENTED",
    reason: "METHOD_NOT_ALLOWED",
  },
  InvalidParams: {
    code: -32602,
    http: 400,
    status: "INVALID_ARGUMENT",
    reason: "INVALID_PARAMS",
  },
  Unauthenticated: {
    code: -32010,
    http: 401,
    status: "UNAUTHENTICATED",
    reason: "UNAUTHENTICATED",
  },
  /** A body that is not JSON (§5.4 ContentTypeNotSupportedError's code, HTTP 415). */
  UnsupportedMediaType: {
    code: -32005,
    http: 415,
    status: "INVALID_ARGUMENT",
    reason: "UNSUPPORTED_MEDIA_TYPE",
  },
  /** The caller is authenticated but may not do this (A2A §3.3.2 authorization errors). */
  PermissionDenied: {
    code: -32011,
    http: 403,
    status: "PERMISSION_DENIED",
    reason: "PERMISSION_DENIED",
  },
  /**
   * A rate limit refused the request. A2A §3.3.2 files "rate limit exceeded" under system
   * errors with JSON-RPC -32603; the HTTP status (429), the reason and `Retry-After` say
   * which it is and when to retry.
   */
  RateLimited: {
    code: -32603,
    http: 429,
    status: "RESOURCE_EXHAUSTED",
    reason: "RATE_LIMIT_EXCEEDED",
  },
  Internal: { code: -32603, http: 500, status: "INTERNAL", reason: "INTERNAL" },
  /** A service Edgelink depends on did not answer (an issuer's keys): worth a retry. */
  Unavailable: { code: -32603, http: 503, status: "UNAVAILABLE", reason: "UNAVAILABLE" },
  /**
   * Edgelink's own: the Worker is deployed wrong (a binding, migration, secret or base URL);
   * every request answers this until its operator fixes what the message names.
   */
  Misconfigured: { code: -32603, http: 503, status: "UNAVAILABLE", reason: "MISCONFIGURED" },
  /**
   * Edgelink's own: an object's storage was made by a development build (not migrated) or by a later
   * release; the object answers every call with this, reading and writing nothing, until
   * its operator does what the message names.
   */
  StorageOutdated: {
    code: -32603,
    http: 503,
    status: "UNAVAILABLE",
    reason: "STORAGE_OUTDATED",
  },
} as const;

export type ErrorKind = keyof typeof ERROR_TABLE;

/** One invalid field: `field` is a dotted path such as `message.parts.0.text`. */
export interface FieldViolation {
  field: string;
  description: string;
}

/** Plain-data form of an error, safe to pass across a Durable Object RPC boundary. */
export interface ErrorData {
  kind: ErrorKind;
  message: string;
  metadata?: Record<string, string>;
  fieldViolations?: FieldViolation[];
}

/**
 * An A2A or JSON-RPC protocol error. Throw it anywhere; the server maps it to the right
 * code and shape for the binding in use.
 * @example
 * throw new A2AError("TaskNotFound", `Task ${id} not found`, { taskId: id });
 */
export class A2AError extends Error {
  override readonly name = "A2AError";
  constructor(
    /** The error's row in the table (`TaskNotFound`, `InvalidParams`, `MemoryFull`, ...). */
    readonly kind: ErrorKind,
    message: string,
    /** Sent in the error's details (google.rpc.ErrorInfo metadata). */
    readonly metadata: Record<string, string> = {},
    /** The fields at fault, each named as the client sent it. */
    readonly fieldViolations: FieldViolation[] = [],
  ) {
    super(message);
  }

  /** The JSON-RPC code of its kind. */
  get code(): number {
    return ERROR_TABLE[this.kind].code;
  }

  /** The HTTP status of its kind. */
  get httpStatus(): number {
    return ERROR_TABLE[this.kind].http;
  }

  toData(): ErrorData {
    const data: ErrorData = { kind: this.kind, message: this.message };
    if (Object.keys(this.metadata).length) data.metadata = this.metadata;
    if (this.fieldViolations.length) data.fieldViolations = this.fieldViolations;
    return data;
  }

  static fromData(data: ErrorData): A2AError {
    return new A2AError(data.kind, data.message, data.metadata, data.fieldViolations);
  }

  /** Error details as google.rpc Any objects (ErrorInfo, then BadRequest if any). */
  details(): JsonObject[] {
    const info = ERROR_TABLE[this.kind];
    const out: JsonObject[] = [
      {
        "@type": "type.googleapis.com/google.rpc.ErrorInfo",
        reason: info.reason,
        domain: "a2a-protocol.org",
        metadata: { ...this.metadata, timestamp: new Date().toISOString() },
      },
    ];
    if (this.fieldViolations.length) {
      out.push({
        "@type": "type.googleapis.com/google.rpc.BadRequest",
        fieldViolations: this.fieldViolations.map((v) => ({ ...v })),
      });
    }
    return out;
  }
}

/**
 * An error whose message is meant for the agent's users. Throw it from a handler and the
 * task fails with this message; any other exception is logged with a reference id and the
 * client sees only "internal error" and that id, so stack details and secrets stay in.
 * @example
 * if (!order) throw new UserFacingError(`No order ${id}; check the number and try again`);
 */
export class UserFacingError extends Error {
  override readonly name = "UserFacingError";
}

/** A reference id to quote in a log line and in the answer that hides its details. */
export function errorReference(): string {
  return `ref_${crypto.randomUUID().replaceAll("-", "").slice(0, 16)}`;
}

/** Turns zod issues into an InvalidParams error that names every bad field. */
export function invalidParams(
  issues: readonly { path: readonly PropertyKey[]; message: string; keys?: readonly string[] }[],
  prefix = "",
): A2AError {
  const field = (path: readonly PropertyKey[]) =>
    [prefix, ...path.map(String)].filter(Boolean).join(".") || "(root)";
  // A strict schema's unknown keys: one violation per key, naming it as a field.
  const violations = issues.flatMap((i) =>
    i.keys?.length
      ? i.keys.map((key) => ({ field: field([...i.path, key]), description: "unknown field" }))
      : [{ field: field(i.path), description: i.message }],
  );
  const summary = violations.map((v) => `${v.field}: ${v.description}`).join("; ");
  return new A2AError("InvalidParams", `Invalid parameters: ${summary}`, {}, violations);
}
