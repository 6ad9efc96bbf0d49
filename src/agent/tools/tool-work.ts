import type { JsonObject } from "../../protocol/json";
import type { OtherPart, ToolCallPart, ToolOutputPart } from "../../protocol/part";
import type { ToolCall } from "../../providers/base/types";
import type { RunContext } from "../run-context";
import type { ToolRun } from "./tool-runner";

/**
 * Tool work made visible to A2A clients: each call and each result is a transient status
 * update (streamed and pushed, not stored as the task's status) whose message carries one
 * A2A data part marked `edgelink/part: tool_call` (`{toolName, args, callId}`) or
 * `tool_output` (`{callId, toolName, result, error}`). Reasoning, when the agent opts in,
 * is a data part marked `reasoning` (`{text}`).
 */
export function announceCall(ctx: RunContext<unknown>, call: ToolCall): void {
  const part: ToolCallPart = {
    type: "tool_call",
    content: { toolName: call.name, args: call.input ?? {}, callId: call.id },
  };
  ctx.status([part], { transient: true });
}

export function announceResult(ctx: RunContext<unknown>, run: ToolRun): void {
  const part: ToolOutputPart = {
    type: "tool_output",
    content: {
      callId: run.toolCallId,
      toolName: run.name,
      result: run.isError ? null : run.value,
      error: run.isError ? run.content : null,
    },
    metadata: { durationMs: run.durationMs },
  };
  ctx.status([part], { transient: true });
}

/** The part type of streamed reasoning. */
export const REASONING_PART = "reasoning";

export function announceReasoning(ctx: RunContext<unknown>, text: string): void {
  const part: OtherPart = { type: REASONING_PART, content: { text } satisfies JsonObject };
  ctx.status([part], { transient: true });
}
