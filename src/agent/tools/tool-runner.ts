import type { Context } from "@opentelemetry/api";
import type { JsonValue } from "../../protocol/json";
import type { ToolCall } from "../../providers/base/types";
import type { ToolRun } from "../agent-result";
import type { Tools } from "../tool";

export type { ToolRun } from "../agent-result";

/** How a turn's tool calls are run. */
export interface ToolRunOptions {
  signal: AbortSignal;
  /** A call still running after this long gets a timeout error result; a tool's own `timeoutMs` wins. */
  timeoutMs: number;
  /** Calls beyond this many in one model turn get error results instead of running. */
  maxCallsPerTurn: number;
  /** Run a turn's calls concurrently (results stay in call order) or one by one. */
  parallel: boolean;
  /**
   * A tool that throws or times out stops the turn: run one by one, the calls after
   * it do not run (they get error results); the caller ends the loop with a tool error.
   */
  stopOnError?: boolean;
  /** Called just before a call runs (or is refused), for clients watching the work. */
  onCall?: (call: ToolCall) => void;
  /** Called as soon as a call has its result. */
  onResult?: (run: ToolRun) => void;
  /** The trace context of a call's span (set while tracing is on). */
  traceContextOf?: (callId: string) => Context | undefined;
}

/**
 * Runs one turn's tool calls and returns one result per call, in call order: the provider
 * needs an answer for every call it made. Unknown tools, invalid or truncated arguments,
 * exceptions and timeouts become `isError` results so the loop can go on; a
 * cancellation of the task is rethrown.
 */
export async function runToolCalls(
  calls: readonly ToolCall[],
  tools: Tools,
  options: ToolRunOptions,
): Promise<ToolRun[]> {
  let stopped: string | null = null;
  const run = async (call: ToolCall, index: number): Promise<ToolRun> => {
    options.onCall?.(call);
    const result =
      index >= options.maxCallsPerTurn
        ? refused(call, `Not run: at most ${options.maxCallsPerTurn} tool calls per turn`)
        : stopped !== null
          ? refused(call, `Not run: tool ${stopped} failed before it`)
          : await runOne(call, tools, options);
    if (result.threw && options.stopOnError) stopped ??= call.name;
    options.onResult?.(result);
    return result;
  };
  if (options.parallel && !options.stopOnError) return Promise.all(calls.map(run));
  const results: ToolRun[] = [];
  for (const [index, call] of calls.entries()) results.push(await run(call, index));
  return results;
}

async function runOne(call: ToolCall, tools: Tools, options: ToolRunOptions): Promise<ToolRun> {
  const tool = Object.hasOwn(tools, call.name) ? tools[call.name] : undefined;
  if (!tool) return refused(call, `Unknown tool: ${call.name}`);
  if (call.input === null) {
    return refused(call, "Invalid arguments: not a JSON object (was the output cut off?)");
  }
  const parsed = tool.input.safeParse(call.input);
  if (!parsed.success) {
    const why = parsed.error.issues.map((i) => `${i.path.join(".") || "arguments"}: ${i.message}`);
    return refused(call, `Invalid arguments: ${why.join("; ")}`);
  }
  const timeoutMs = tool.timeoutMs ?? options.timeoutMs;
  const controller = new AbortController();
  const onAbort = () => controller.abort(options.signal.reason);
  options.signal.addEventListener("abort", onAbort, { once: true });
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const error = new ToolTimeoutError(call.name, timeoutMs);
      controller.abort(error);
      reject(error);
    }, timeoutMs);
  });
  const started = Date.now();
  try {
    const value: JsonValue =
      (await Promise.race([
        Promise.resolve(
          tool.run(parsed.data, {
            signal: controller.signal,
            callId: call.id,
            traceContext: options.traceContextOf?.(call.id),
          }),
        ),
        timeout,
      ])) ?? null;
    return {
      toolCallId: call.id,
      name: call.name,
      content: typeof value === "string" ? value : JSON.stringify(value),
      isError: false,
      value,
      durationMs: Date.now() - started,
      threw: false,
    };
  } catch (error) {
    if (options.signal.aborted) throw error;
    const message = error instanceof Error ? error.message : String(error);
    return { ...refused(call, message), durationMs: Date.now() - started, threw: true };
  } finally {
    if (timer !== undefined) clearTimeout(timer);
    options.signal.removeEventListener("abort", onAbort);
  }
}

/** A tool ran past its time limit. */
export class ToolTimeoutError extends Error {
  override name = "ToolTimeoutError";
  constructor(tool: string, ms: number) {
    super(`Tool ${tool} timed out after ${ms} ms`);
  }
}

function refused(call: ToolCall, message: string): ToolRun {
  return {
    toolCallId: call.id,
    name: call.name,
    content: message,
    isError: true,
    value: null,
    durationMs: 0,
    threw: false,
  };
}
