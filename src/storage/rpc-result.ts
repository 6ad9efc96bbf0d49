import { A2AError, type ErrorData, errorReference } from "../protocol/errors";
import { InvalidTransitionError } from "../protocol/task-state";
import { logEvent } from "../telemetry/log";

/** Outcome of an RPC: errors cross the Durable Object boundary as plain data. */
export type Result<T> = { ok: true; value: T } | { ok: false; error: ErrorData };

/**
 * Runs an object's RPC method body: its value, or its protocol error as data. Anything
 * else is logged under `what` and answered as an internal error, its details kept in.
 */
export async function attempt<T>(what: string, fn: () => T | Promise<T>): Promise<Result<T>> {
  try {
    return { ok: true, value: await fn() };
  } catch (error) {
    return { ok: false, error: errorData(what, error) };
  }
}

/** A thrown error as the data that crosses the boundary (see `attempt`). */
function errorData(what: string, error: unknown): ErrorData {
  if (error instanceof A2AError) return error.toData();
  if (error instanceof InvalidTransitionError) {
    return { kind: "UnsupportedOperation", message: error.message };
  }
  const reference = errorReference();
  logEvent("error", `edgelink: ${what} error ${reference}`, { reference, error });
  const message = `Internal error (reference ${reference})`;
  return { kind: "Internal", message, metadata: { reference } };
}

/**
 * `attempt` for a method answering text: the text itself, or its error as data. A bare
 * string crosses the boundary for less than a `Result` object holding it, and text the
 * body had at once is answered at once (RPC takes a plain value as a resolved one).
 */
export function attemptText(
  what: string,
  fn: () => string | Promise<string>,
): string | ErrorData | Promise<string | ErrorData> {
  let answer: string | Promise<string>;
  try {
    answer = fn();
  } catch (error) {
    return errorData(what, error);
  }
  if (typeof answer === "string") return answer;
  return answer.then(
    (text) => text,
    (error: unknown) => errorData(what, error),
  );
}

/** The caller's side of `attemptText`: the text, or the error thrown again. */
export function unwrapText(answer: string | ErrorData): string {
  if (typeof answer === "string") return answer;
  throw A2AError.fromData(answer);
}

/** The caller's side: the value, or the error thrown again as an A2AError. */
export function unwrap<T>(result: Result<T>): T {
  if (!result.ok) throw A2AError.fromData(result.error);
  return result.value;
}
