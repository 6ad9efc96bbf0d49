import type { JsonValue } from "../models/json";
import type { ToolCall, ToolResult } from "../providers/types";
import type { Tools } from "./tools";

/** How a model's tool calls are run (H11–H14). */
export interface ToolRunOptions {
  signal: AbortSignal;
  /** A call still running after this long gets a timeout error result (H12). */
  timeoutMs: number;
  /** Calls beyond this many in one model turn get error results instead of running (H11). */
  maxCallsPerTurn: number;
  /** Run a turn's calls concurrently (results stay in call order) or one by one (H13). */
  parallel: boolean;
}

/**
 * Runs one model turn's tool calls and returns one result per call, in call order: the
 * provider needs an answer for every call it made. Unknown tools, invalid or truncated
 * arguments, exceptions and timeouts become `isError` results so the loop can go on (H14);
 * a cancellation of the task is rethrown.
 */
export async function runToolCalls(
  calls: readonly ToolCall[],
  tools: Tools,
  options: ToolRunOptions,
): Promise<ToolResult[]> {
  const run = (call: ToolCall, index: number): Promise<ToolResult> =>
    index >= options.maxCallsPerTurn
      ? Promise.resolve(
          errorResult(call, `Not run: at most ${options.maxCallsPerTurn} tool calls per turn`),
        )
      : runOne(call, tools, options);
  if (options.parallel) return Promise.all(calls.map(run));
  const results: ToolResult[] = [];
  for (const [index, call] of calls.entries()) results.push(await run(call, index));
  return results;
}

async function runOne(call: ToolCall, tools: Tools, options: ToolRunOptions): Promise<ToolResult> {
  const tool = Object.hasOwn(tools, call.name) ? tools[call.name] : undefined;
  if (!tool) return errorResult(call, `Unknown tool: ${call.name}`);
  if (call.input === null) {
    return errorResult(call, "Invalid arguments: not a JSON object (was the output cut off?)");
  }
  const parsed = tool.input.safeParse(call.input);
  if (!parsed.success) {
    const why = parsed.error.issues.map((i) => `${i.path.join(".") || "arguments"}: ${i.message}`);
    return errorResult(call, `Invalid arguments: ${why.join("; ")}`);
  }
  const controller = new AbortController();
  const onAbort = () => controller.abort(options.signal.reason);
  options.signal.addEventListener("abort", onAbort, { once: true });
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const error = new ToolTimeoutError(call.name, options.timeoutMs);
      controller.abort(error);
      reject(error);
    }, options.timeoutMs);
  });
  try {
    const value: JsonValue = await Promise.race([
      Promise.resolve(tool.run(parsed.data, { signal: controller.signal, callId: call.id })),
      timeout,
    ]);
    return {
      toolCallId: call.id,
      name: call.name,
      content: typeof value === "string" ? value : JSON.stringify(value ?? null),
      isError: false,
    };
  } catch (error) {
    if (options.signal.aborted) throw error;
    return errorResult(call, error instanceof Error ? error.message : String(error));
  } finally {
    if (timer !== undefined) clearTimeout(timer);
    options.signal.removeEventListener("abort", onAbort);
  }
}

/** A tool ran past its time limit (H12). */
export class ToolTimeoutError extends Error {
  override name = "ToolTimeoutError";
  constructor(tool: string, ms: number) {
    super(`Tool ${tool} timed out after ${ms} ms`);
  }
}

function errorResult(call: ToolCall, message: string): ToolResult {
  return { toolCallId: call.id, name: call.name, content: message, isError: true };
}
