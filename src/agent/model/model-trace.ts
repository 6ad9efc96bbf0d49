import type { Context } from "@opentelemetry/api";
import type { Item } from "../../history/items";
import type { Model, ModelRequest, ToolCall } from "../../providers/base/types";
import {
  ERROR_TYPE,
  EVENT_FALLBACK,
  EVENT_RETRY,
  endSpan,
  failSpan,
  GEN_AI_CONVERSATION_ID,
  GEN_AI_INPUT_MESSAGES,
  GEN_AI_OPERATION_NAME,
  GEN_AI_OUTPUT_MESSAGES,
  GEN_AI_PROVIDER_NAME,
  GEN_AI_REQUEST_MODEL,
  GEN_AI_RESPONSE_FINISH_REASONS,
  GEN_AI_RESPONSE_MODEL,
  GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK,
  GEN_AI_TOOL_CALL_ID,
  GEN_AI_TOOL_NAME,
  GEN_AI_TOOL_TYPE,
  GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS,
  GEN_AI_USAGE_INPUT_TOKENS,
  GEN_AI_USAGE_OUTPUT_TOKENS,
  OP_CHAT,
  OP_EXECUTE_TOOL,
  SpanKind,
  startSpan,
  type Traced,
} from "../../telemetry";
import type { ModelUse } from "../agent-result";
import type { ToolRun } from "../tools/tool-runner";

/**
 * The env flag that lets spans carry message content (prompts, answers, tool arguments
 * and results), the variable the GenAI conventions' instrumentations read. Off unless
 * the operator sets it to "true": content is the user's data.
 */
export const CAPTURE_CONTENT_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT";

export function capturesContent(env: unknown): boolean {
  return (env as Record<string, unknown> | undefined)?.[CAPTURE_CONTENT_ENV] === "true";
}

/** What a model call's span needs to know at its start. */
export interface ModelCallStart {
  parent: Context | undefined;
  model: Model;
  request: ModelRequest;
  conversationId: string;
  content: boolean;
}

/** Starts the CLIENT span of one logical model call (retries and fallbacks included). */
export function startModelCall(start: ModelCallStart): Traced | undefined {
  const { model, request } = start;
  const traced = startSpan(`${OP_CHAT} ${model.model}`, SpanKind.CLIENT, start.parent, {
    [GEN_AI_OPERATION_NAME]: OP_CHAT,
    [GEN_AI_PROVIDER_NAME]: model.provider,
    [GEN_AI_REQUEST_MODEL]: model.model,
    [GEN_AI_CONVERSATION_ID]: start.conversationId,
  });
  if (traced && start.content) {
    traced.span.setAttribute(GEN_AI_INPUT_MESSAGES, JSON.stringify(messagesOf(request.messages)));
  }
  return traced;
}

/** A failure a wrapper recovered from (a retry, a fallback), kept until the call ends. */
export interface RecoveredFailure {
  error: Error;
  provider: string;
  model: string;
  at: number;
}

/**
 * The recovered failures of a call as events of its span: a retry when the next attempt
 * asked the same model again, a fallback when it moved to another (the next failure's
 * model, else the one that answered).
 */
function recordFailures(traced: Traced, failures: readonly RecoveredFailure[], answered?: string) {
  failures.forEach((f, i) => {
    const next = failures[i + 1]?.model ?? answered;
    traced.span.addEvent(
      next === f.model ? EVENT_RETRY : EVENT_FALLBACK,
      {
        [GEN_AI_PROVIDER_NAME]: f.provider,
        [GEN_AI_REQUEST_MODEL]: f.model,
        [ERROR_TYPE]: errorKind(f.error),
      },
      f.at,
    );
  });
}

function errorKind(error: Error): string {
  const { status, kind } = error as Error & { status?: unknown; kind?: unknown };
  if (typeof status === "number" && status > 0) return String(status);
  return typeof kind === "string" ? kind : error.name;
}

/** What a finished call adds to its span. */
export interface ModelCallEnd {
  use: ModelUse;
  failures?: readonly RecoveredFailure[];
  finishReason: string | null;
  text: string;
  toolCalls: readonly ToolCall[];
}

export function endModelCall(
  traced: Traced | undefined,
  end: ModelCallEnd | { error: unknown; failures?: readonly RecoveredFailure[] },
  content: boolean,
): void {
  if (!traced) return;
  if ("error" in end) {
    if (end.failures?.length) recordFailures(traced, end.failures);
    endSpan(traced, end.error);
    return;
  }
  const { span } = traced;
  const { use } = end;
  if (end.failures?.length) recordFailures(traced, end.failures, use.model);
  span.setAttribute(GEN_AI_RESPONSE_MODEL, use.model);
  if (use.provider) span.setAttribute(GEN_AI_PROVIDER_NAME, use.provider);
  if (use.usage) {
    span.setAttribute(GEN_AI_USAGE_INPUT_TOKENS, use.usage.promptTokens);
    span.setAttribute(GEN_AI_USAGE_OUTPUT_TOKENS, use.usage.completionTokens);
    if (use.usage.cachedPromptTokens !== undefined) {
      span.setAttribute(GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS, use.usage.cachedPromptTokens);
    }
  }
  if (end.finishReason) span.setAttribute(GEN_AI_RESPONSE_FINISH_REASONS, [end.finishReason]);
  if (use.timeToFirstTokenMs !== undefined) {
    // Seconds, as the conventions measure durations.
    span.setAttribute(GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK, use.timeToFirstTokenMs / 1000);
  }
  if (content) {
    const parts: unknown[] = end.text ? [{ type: "text", content: end.text }] : [];
    for (const c of end.toolCalls) {
      parts.push({ type: "tool_call", id: c.id, name: c.name, arguments: c.input ?? c.arguments });
    }
    const output = [{ role: "assistant", parts, finish_reason: end.finishReason ?? "stop" }];
    span.setAttribute(GEN_AI_OUTPUT_MESSAGES, JSON.stringify(output));
  }
  span.end();
}

/** Conversation items in the conventions' message shape (only when content is on). */
function messagesOf(items: readonly Item[]): unknown[] {
  return items.map((item) => {
    switch (item.type) {
      case "message":
        return {
          role: item.role,
          parts: item.content.map((c) =>
            typeof c === "string" ? { type: "text", content: c } : { type: "data", content: c },
          ),
        };
      case "function_call":
        return {
          role: "assistant",
          parts: [
            { type: "tool_call", id: item.callId, name: item.name, arguments: item.arguments },
          ],
        };
      case "function_call_output":
        return {
          role: "tool",
          parts: [{ type: "tool_call_response", id: item.callId, response: item.output }],
        };
      default:
        return { role: "system", parts: [{ type: item.type }] };
    }
  });
}

/** The `execute_tool` spans of one round's calls, by call id. */
export class ToolSpans {
  private readonly open = new Map<string, Traced>();

  constructor(
    private readonly parent: Context | undefined,
    private readonly content: boolean,
  ) {}

  started(call: ToolCall): void {
    const traced = startSpan(`${OP_EXECUTE_TOOL} ${call.name}`, SpanKind.INTERNAL, this.parent, {
      [GEN_AI_OPERATION_NAME]: OP_EXECUTE_TOOL,
      [GEN_AI_TOOL_NAME]: call.name,
      [GEN_AI_TOOL_CALL_ID]: call.id,
      [GEN_AI_TOOL_TYPE]: "function",
    });
    if (!traced) return;
    if (this.content) {
      traced.span.setAttribute("gen_ai.tool.call.arguments", call.arguments);
    }
    this.open.set(call.id, traced);
  }

  /** The context of a call's span, passed to the tool's `run`. */
  contextOf(callId: string): Context | undefined {
    return this.open.get(callId)?.ctx;
  }

  finished(run: ToolRun): void {
    const traced = this.open.get(run.toolCallId);
    if (!traced) return;
    this.open.delete(run.toolCallId);
    if (this.content) traced.span.setAttribute("gen_ai.tool.call.result", run.content);
    if (run.isError) {
      const type = run.threw ? "ToolError" : "ToolCallRefused";
      // A tool's error text is content too (it may name its input): only when opted in.
      const error = new Error(this.content ? run.content.slice(0, 500) : type);
      error.name = type;
      failSpan(traced.span, error, type);
    }
    traced.span.end();
  }
}
