import { A2AError, ERROR_TABLE, errorReference } from "../protocol/errors";
import { InvalidTransitionError } from "../protocol/task-state";
import { logEvent } from "../telemetry/log";

/**
 * Any thrown value as a protocol error. Unknown failures become Internal: logged once
 * with a reference id, and the client gets only that id, never the failure's text.
 */
export function toA2AError(error: unknown): A2AError {
  if (error instanceof A2AError) return error;
  if (error instanceof InvalidTransitionError) {
    return new A2AError("UnsupportedOperation", error.message);
  }
  const reference = errorReference();
  logEvent("error", `edgelink: unexpected error ${reference}`, { reference, error });
  return new A2AError("Internal", `Internal error (reference ${reference})`, { reference });
}

export type RpcId = string | number | null;

/** A JSON-RPC 2.0 error response body (§9.5). */
export function jsonRpcError(id: RpcId, error: A2AError) {
  return {
    jsonrpc: "2.0" as const,
    id,
    error: { code: error.code, message: error.message, data: error.details() },
  };
}

/**
 * Fields named as the HTTP+JSON binding sends them: its body and query are what JSON-RPC
 * calls `params`, so `params.message.messageId` is `message.messageId` there.
 */
const restFields = (text: string) => text.replace(/(^|[^\w.])params\.(?=\w)/g, "$1");

/**
 * HTTP headers an error's response carries in every binding: `Retry-After` for a refusal
 * that says when to come back (a rate limit).
 */
export function errorHeaders(error: A2AError): Record<string, string> {
  const after = error.kind === "RateLimited" ? error.metadata.retryAfterSeconds : undefined;
  return after === undefined ? {} : { "Retry-After": after };
}

/** A google.rpc.Status error response for the HTTP+JSON binding (§11.6). */
export function restError(error: A2AError): Response {
  return Response.json(restErrorBody(error), {
    status: ERROR_TABLE[error.kind].http,
    headers: { "Content-Type": "application/json", ...errorHeaders(error) },
  });
}

/** The body of `restError`: also the data of a stream's `error` event once it has begun. */
export function restErrorBody(error: A2AError) {
  const info = ERROR_TABLE[error.kind];
  const named = new A2AError(
    error.kind,
    restFields(error.message),
    error.metadata,
    error.fieldViolations.map((v) => ({
      field: restFields(v.field),
      description: restFields(v.description),
    })),
  );
  return {
    error: {
      code: info.http,
      status: info.status,
      message: named.message,
      details: named.details(),
    },
  };
}
