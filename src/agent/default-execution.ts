import type { JsonValue } from "../models/json";
import {
  isKnownPart,
  type Part,
  Parts,
  type ToolCallPart,
  type ToolOutputPart,
} from "../models/part";
import type { TaskContext } from "./context";
import type { Agent } from "./definition";

/**
 * The default execution (B10): run the `tool_call` and `infer` parts of the latest
 * message, add their outputs as one `result` artifact, then end the task completed,
 * failed (an error part, a failed tool output, an exception) or input-required (a status
 * part asking for input).
 */
export async function runDefaultExecution<Env>(
  ctx: TaskContext<Env>,
  agent: Pick<Agent<Env>, "tools" | "infer">,
): Promise<void> {
  const outputs: Part[] = [];
  let failure: string | null = null;
  let question: string | null = null;

  for (const part of ctx.message.parts) {
    ctx.signal.throwIfAborted();
    if (!isKnownPart(part)) continue;
    if (part.type === "tool_call") {
      const output = await runTool(part, agent, ctx.signal);
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

async function runTool<Env>(
  call: ToolCallPart,
  agent: Pick<Agent<Env>, "tools">,
  signal: AbortSignal,
): Promise<ToolOutputPart> {
  const { toolName, args, callId } = call.content;
  const tool = Object.hasOwn(agent.tools, toolName) ? agent.tools[toolName] : undefined;
  if (!tool) return Parts.toolOutput(callId, null, `Unknown tool: ${toolName}`);
  const parsed = tool.input.safeParse(args);
  if (!parsed.success) {
    const why = parsed.error.issues.map((i) => `${i.path.join(".") || "args"}: ${i.message}`);
    return Parts.toolOutput(callId, null, `Invalid arguments: ${why.join("; ")}`);
  }
  try {
    const result: JsonValue = await tool.run(parsed.data, { signal });
    return Parts.toolOutput(callId, result ?? null);
  } catch (error) {
    if (signal.aborted) throw error;
    return Parts.toolOutput(callId, null, error instanceof Error ? error.message : String(error));
  }
}
