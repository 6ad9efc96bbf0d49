import type { Delivery, DeliveryResult } from "../../push/delivery";
import {
  A2A_TASK_ID,
  activeTracer,
  contextOfCarrier,
  EDGELINK_PUSH_ATTEMPT,
  EDGELINK_PUSH_CONFIG_ID,
  EDGELINK_PUSH_OUTCOME,
  ERROR_TYPE,
  HTTP_REQUEST_METHOD,
  HTTP_RESPONSE_STATUS_CODE,
  injectHeaders,
  SERVER_ADDRESS,
  SpanKind,
  STATUS_ERROR,
  startSpan,
  type Traced,
} from "../../telemetry";
import type { DeliveryRow } from "./push-deliveries";

/**
 * A CLIENT span for one webhook delivery attempt, in the trace of the run that queued it
 * (stored with the task, so a retry after a restart, an hour later, is still in it); the
 * webhook request carries it as `traceparent`. Undefined while tracing is off.
 */
export function tracePushAttempt(
  traceOf: (taskId: string) => string | null,
  row: DeliveryRow,
  attempt: number,
  delivery: Delivery,
): Traced | undefined {
  if (!activeTracer()) return undefined;
  let host = "";
  try {
    host = new URL(delivery.url).host;
  } catch {}
  const traced = startSpan("POST webhook", SpanKind.CLIENT, contextOfCarrier(traceOf(row.taskId)), {
    [HTTP_REQUEST_METHOD]: "POST",
    [SERVER_ADDRESS]: host,
    [A2A_TASK_ID]: row.taskId,
    [EDGELINK_PUSH_CONFIG_ID]: row.configId,
    [EDGELINK_PUSH_ATTEMPT]: attempt,
  });
  if (traced) injectHeaders(traced.ctx, delivery.init.headers);
  return traced;
}

export function endPushAttempt(traced: Traced | undefined, result: DeliveryResult): void {
  if (!traced) return;
  const { span } = traced;
  span.setAttribute(EDGELINK_PUSH_OUTCOME, result.outcome);
  if (result.status !== undefined && result.status !== null) {
    span.setAttribute(HTTP_RESPONSE_STATUS_CODE, result.status);
  }
  if (result.outcome !== "delivered") {
    span.setAttribute(ERROR_TYPE, result.status ? String(result.status) : "network");
    span.setStatus({ code: STATUS_ERROR, message: result.reason ?? result.outcome });
  }
  span.end();
}
