import type { Agent } from "../../agent/definition";
import type { TaskState } from "../../protocol/task-state";
import { taskRow } from "../../storage/task-keys";
import {
  A2A_TASK_ID,
  A2A_TASK_STATE,
  activeTracer,
  carrierOf,
  contextOfCarrier,
  EDGELINK_COMPACTION_ITEMS,
  EDGELINK_COMPACTION_STRATEGY,
  ERROR_TYPE,
  endSpan,
  GEN_AI_AGENT_NAME,
  GEN_AI_CONVERSATION_ID,
  GEN_AI_OPERATION_NAME,
  GEN_AI_PROVIDER_NAME,
  GEN_AI_REQUEST_MODEL,
  inSpan,
  OP_INVOKE_AGENT,
  SpanKind,
  STATUS_ERROR,
  startSpan,
  TRACE_CONTEXT,
  type TraceCarrier,
  type Traced,
  type TraceHolder,
} from "../../telemetry";

/** The trace a task's latest run belongs to, as stored with the task (null: none). */
export function storedTrace(sql: SqlStorage, taskId: string): TraceCarrier | null {
  const row = sql
    .exec<{ trace: string | null }>(`SELECT trace FROM tasks WHERE ${taskRow()}`, taskId)
    .toArray()[0];
  return row?.trace ?? null;
}

/**
 * Opens the `invoke_agent` span of a task's run, under the request that started it (its
 * carrier) or, for a run resumed after a restart, the trace stored with the task; then
 * stores this run's context with the task for what is queued later (push deliveries, a
 * resumed run). Undefined, with nothing read or written, while tracing is off.
 */
export function traceRun(
  store: { readonly sql: SqlStorage; setTrace(taskId: string, carrier: TraceCarrier): void },
  run: TraceHolder & { taskId: string; contextId: string },
  agent: Agent<unknown>,
  carrier: TraceCarrier | undefined,
): Traced | undefined {
  if (!activeTracer()) return undefined;
  const parent = contextOfCarrier(carrier ?? storedTrace(store.sql, run.taskId));
  const name = agent.card.name;
  const traced = startSpan(`${OP_INVOKE_AGENT} ${name}`, SpanKind.INTERNAL, parent, {
    [GEN_AI_OPERATION_NAME]: OP_INVOKE_AGENT,
    [GEN_AI_AGENT_NAME]: name,
    [GEN_AI_CONVERSATION_ID]: run.contextId,
    [A2A_TASK_ID]: run.taskId,
    ...(agent.model
      ? {
          [GEN_AI_PROVIDER_NAME]: agent.model.provider,
          [GEN_AI_REQUEST_MODEL]: agent.model.model,
        }
      : {}),
  });
  if (!traced) return undefined;
  run[TRACE_CONTEXT] = traced.ctx;
  const own = carrierOf(traced.ctx);
  if (own) store.setTrace(run.taskId, own);
  return traced;
}

/** Ends a run's span with the state the task was left in (failed marks it an error). */
export function endRun(traced: Traced | undefined, state: TaskState | null, error?: unknown): void {
  if (!traced) return;
  if (state) traced.span.setAttribute(A2A_TASK_STATE, state);
  if (error === undefined && state === "failed") {
    traced.span.setAttribute(ERROR_TYPE, "task_failed");
    traced.span.setStatus({ code: STATUS_ERROR, message: "the task failed" });
  }
  endSpan(traced, error);
}

/** An INTERNAL span around a history compaction, under the request that asked for it. */
export function traceCompaction<T>(
  carrier: TraceCarrier | undefined,
  strategy: string | undefined,
  items: number,
  compact: () => Promise<T>,
): Promise<T> {
  return inSpan(
    "compact_history",
    SpanKind.INTERNAL,
    contextOfCarrier(carrier),
    () => ({
      [EDGELINK_COMPACTION_STRATEGY]: strategy ?? "default",
      [EDGELINK_COMPACTION_ITEMS]: items,
    }),
    compact,
  );
}
