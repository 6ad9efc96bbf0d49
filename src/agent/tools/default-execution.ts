import {
  isKnownPart,
  type Part,
  Parts,
  type ToolCallPart,
  type ToolOutputPart,
} from "../../protocol/part";
import type { ToolCall } from "../../providers/base/types";
import type { Agent } from "../definition";
import type { RunContext } from "../run-context";
import { runToolCalls } from "./tool-runner";
import { announceCall, announceResult } from "./tool-work";

/**
 * The default execution: run the `tool_call` and `infer` parts of the latest message,
 * add their outputs as one `result` artifact, then end the task completed, failed (an
 * error part, a failed tool output, an exception) or input-required (a status part asking
 * for input). Tool calls go through the same runner as a model's (time limit, per-turn
 * cap, visible to streaming clients). What an agent without a `handler` does, for a
 * handler to fall back on.
 * @example
 * ```ts
 * defineAgent({
 *   card,
 *   tools,
 *   handler: (ctx) =>
 *     ctx.message.parts.some((p) => p.type === "tool_call")
 *       ? runDefaultExecution(ctx, { tools, infer: null })
 *       : "Send me a tool_call part.",
 * });
 * ```
 */
export async function runDefaultExecution<Env>(
  ctx: RunContext<Env>,
  agent: DefaultExecutionAgent<Env>,
): Promise<void> {
  const outputs: Part[] = [];
  let failure: string | null = null;
  let question: string | null = null;
  let toolCalls = 0;

  for (const part of ctx.message.parts) {
    ctx.signal.throwIfAborted();
    if (!isKnownPart(part)) continue;
    if ((part.type === "tool_call" || part.type === "infer") && !accepts(agent, part.type)) {
      // The Worker refuses these before a task exists; this guards other callers (a
      // handler passing the message on, server code reaching the object directly).
      const option = part.type === "infer" ? "acceptInfer" : "acceptToolCalls";
      const error = Parts.error("NOT_ACCEPTED", `${part.type} parts are not accepted (${option})`);
      outputs.push(error);
      failure ??= error.content.message;
    } else if (part.type === "tool_call") {
      const output = await runTool(part, agent, ctx, toolCalls++);
      outputs.push(output);
      if (output.content.error !== null) {
        failure ??= `Tool ${part.content.toolName} failed: ${output.content.error}`;
      }
    } else if (part.type === "infer") {
      if (!agent.infer) {
        const error = Parts.error("NO_MODEL", "This agent has no model configured for infer parts");
        outputs.push(error);
        failure ??= error.content.message;
        continue;
      }
      outputs.push(Parts.inferOutput(await agent.infer(part, ctx)));
    } else if (part.type === "error") {
      failure ??= `${part.content.code}: ${part.content.message}`;
    } else if (part.type === "status" && part.content.state === "input-required") {
      question ??= part.content.message ?? "More input is required";
    }
  }

  if (outputs.length) ctx.artifact({ name: "result", parts: outputs });
  if (failure !== null) ctx.fail(failure);
  else if (question !== null) ctx.requestInput(question);
  else ctx.complete();
}

/**
 * What the default execution needs of an agent; the limits default to the catalogue's,
 * and parts are accepted unless `acceptInfer`/`acceptToolCalls` say false.
 */
export type DefaultExecutionAgent<Env> = Pick<Agent<Env>, "tools" | "infer"> &
  Partial<
    Pick<Agent<Env>, "toolTimeoutMs" | "maxToolCallsPerTurn" | "acceptInfer" | "acceptToolCalls">
  >;

const accepts = <Env>(agent: DefaultExecutionAgent<Env>, type: "infer" | "tool_call") =>
  (type === "infer" ? agent.acceptInfer : agent.acceptToolCalls) !== false;

async function runTool<Env>(
  part: ToolCallPart,
  agent: DefaultExecutionAgent<Env>,
  ctx: RunContext<Env>,
  index: number,
): Promise<ToolOutputPart> {
  const { toolName, args, callId } = part.content;
  const call: ToolCall = {
    id: callId,
    name: toolName,
    arguments: JSON.stringify(args),
    input: args,
  };
  const cap = agent.maxToolCallsPerTurn ?? 16;
  const [run] = await runToolCalls([call], agent.tools, {
    signal: ctx.signal,
    timeoutMs: agent.toolTimeoutMs ?? 60_000,
    // The cap counts every tool_call part of the message, not only this one.
    maxCallsPerTurn: Math.max(0, cap - index),
    parallel: false,
    onCall: (c) => announceCall(ctx, c),
    onResult: (r) => announceResult(ctx, r),
  });
  if (!run) throw new Error("the tool runner returned no result");
  if (run.isError) {
    const error = run.content.startsWith("Not run: at most")
      ? `Not run: at most ${cap} tool calls per message`
      : run.content;
    return Parts.toolOutput(callId, null, error);
  }
  return Parts.toolOutput(callId, run.value);
}
