import { errorReference } from "../../protocol/errors";
import type { JsonObject } from "../../protocol/json";
import { AllProvidersFailedError, type ProviderError } from "../../providers/base/errors";
import { logEvent } from "../../telemetry/log";

/**
 * The failure a task reports, public by design: which provider failed and how (status,
 * code), never the provider's error body, which may echo the request or account details.
 * The full error is logged under a reference id given in the reason.
 */
export function publicFailure(
  failure: ProviderError | null,
  error: unknown,
  ctx: { taskId: string; contextId: string },
): string {
  const reference = errorReference();
  const { taskId, contextId } = ctx;
  logEvent("error", `edgelink: model call failed ${reference}`, {
    taskId,
    contextId,
    reference,
    error,
  });
  if (!failure) return `The model call failed (reference ${reference})`;
  // A fallback names each member's failure: the first is usually the real cause.
  const how =
    failure instanceof AllProvidersFailedError && failure.failures.length > 0
      ? failure.failures.map((f) => `${f.provider}: ${failureKind(f)}`).join("; ")
      : failureKind(failure);
  return `The model provider ${failure.provider} failed (${how}; reference ${reference})`;
}

function failureKind(failure: ProviderError): string {
  return [failure.kind === "http" ? `HTTP ${failure.status}` : failure.kind, failure.code]
    .filter(Boolean)
    .join(", ");
}

/** A provider error's fields a task's metadata keeps (`providerError`). */
export function describeFailure(error: ProviderError): JsonObject {
  const out: JsonObject = {
    provider: error.provider,
    kind: error.kind,
    status: error.status,
    code: error.code,
    requestId: error.requestId,
    retryable: error.retryable,
  };
  // A fallback's error lists each member's failure, so the first (usually real) cause shows.
  if (error instanceof AllProvidersFailedError) {
    out.failures = error.failures.map(describeFailure);
  }
  return out;
}
