import { REQUEST_KIND } from "./approval";
import type { TaskEvent } from "./events";
import type { JsonObject, JsonValue } from "./json";
import type { Message } from "./message";
import { isKnownPart, type Part, textOf } from "./part";
import { sseFrame } from "./sse";
import type { Task } from "./task";

/**
 * The chat view of a task's event log: the same events A2A streams carry, told
 * the way a chat front end wants them. `start {taskId, model, sessionId}`, `chunk
 * {content}` per streamed text, `tool_call {tool, arguments, toolCallId}` before each tool
 * runs, `tool_result {tool, content, toolCallId, isError}` after it, `approval {taskId,
 * calls, waiting, relayed?}` when the turn ends waiting for decisions on held calls, then, per turn,
 * exactly one of `done {taskId, sessionId, state, thinking?, hasThinking, totalTimeMs}` or
 * `error {error}` (a replay of a task that asked for input has one per turn). Each frame is `event:` + `data:` with the log position as its `id:`, so a
 * reconnect with `Last-Event-ID` resumes right after it.
 */
export interface ChatEvent {
  event: "start" | "chunk" | "tool_call" | "tool_result" | "approval" | "done" | "error";
  data: JsonObject;
}

export interface ChatViewOptions {
  /** The agent's configured model id; null for agents without one. */
  model: string | null;
  /** Whether the stream resumes after an event the client saw (no `start` then). */
  resumed: boolean;
  /** The task as it is now, for the totals of `done`. */
  task: () => Task;
}

/** Turns a task's events into chat events, one stream at a time (it remembers `start`). */
export class ChatView {
  #started: boolean;
  constructor(private readonly options: ChatViewOptions) {
    this.#started = options.resumed;
  }

  events(event: TaskEvent): ChatEvent[] {
    const out: ChatEvent[] = [];
    if (!this.#started) {
      this.#started = true;
      const taskId = event.kind === "task" ? event.task.id : taskIdOf(event);
      const sessionId = event.kind === "task" ? event.task.contextId : contextIdOf(event);
      out.push({ event: "start", data: { taskId, model: this.options.model, sessionId } });
    }
    switch (event.kind) {
      case "task":
        break;
      case "message": {
        const content = textOf(event.message.parts);
        if (content) out.push({ event: "chunk", data: { content } });
        out.push(event.message.taskId ? this.done("completed") : replyDone(event.message));
        break;
      }
      case "artifact-update": {
        const content = textOf(event.artifact.parts);
        if (content) out.push({ event: "chunk", data: { content } });
        break;
      }
      case "status-update": {
        const parts = event.status.message?.parts ?? [];
        if (!event.final) {
          for (const part of parts) {
            const work = toolWork(part);
            if (work) out.push(work);
          }
          break;
        }
        const state = event.status.state;
        if (state === "input-required" || state === "auth-required") {
          const content = textOf(parts);
          if (content) out.push({ event: "chunk", data: { content } });
          const request = approvalRequest(parts);
          if (request) out.push({ event: "approval", data: { taskId: event.taskId, ...request } });
          out.push(this.done(state));
        } else if (state === "completed") {
          out.push(this.done(state));
        } else {
          out.push({ event: "error", data: { error: this.failure(state, textOf(parts)) } });
        }
        break;
      }
    }
    return out;
  }

  private done(state: string): ChatEvent {
    const task = this.options.task();
    const result = task.metadata.result as JsonObject | undefined;
    const data: JsonObject = {
      taskId: task.id,
      sessionId: task.contextId,
      state,
      hasThinking: result?.hasThinking === true,
      totalTimeMs:
        typeof result?.totalTimeMs === "number"
          ? result.totalTimeMs
          : Math.max(0, Date.parse(task.status.timestamp) - Date.parse(task.createdAt)),
    };
    if (typeof result?.thinking === "string") data.thinking = result.thinking;
    return { event: "done", data };
  }

  private failure(state: string, text: string): string {
    const error = this.options.task().metadata.error;
    if (typeof error === "string" && error) return error;
    if (text) return text;
    return state === "canceled" ? "The task was canceled" : `The task ended ${state}`;
  }
}

function toolWork(part: Part): ChatEvent | null {
  if (!isKnownPart(part)) return null;
  if (part.type === "tool_call") {
    const { toolName, args, callId } = part.content;
    return { event: "tool_call", data: { tool: toolName, arguments: args, toolCallId: callId } };
  }
  if (part.type === "tool_output" && part.content.toolName !== undefined) {
    const { toolName, callId, result, error } = part.content;
    return {
      event: "tool_result",
      data: {
        tool: toolName,
        content: error ?? textOfValue(result),
        toolCallId: callId,
        isError: error !== null,
      },
    };
  }
  return null;
}

/** The request for decisions among a status message's parts (its fields but `kind`). */
function approvalRequest(parts: readonly Part[]): JsonObject | null {
  for (const part of parts) {
    const content = part.type === "data" ? part.content : null;
    if (typeof content !== "object" || content === null || Array.isArray(content)) continue;
    if (content.kind !== REQUEST_KIND) continue;
    const { kind: _, ...request } = content;
    return request;
  }
  return null;
}

const textOfValue = (value: JsonValue): string =>
  typeof value === "string" ? value : JSON.stringify(value);

/** `done` for a direct reply (A2A §3.1.1): there is no task to read totals from. */
const replyDone = (message: Message): ChatEvent => ({
  event: "done",
  data: {
    taskId: null,
    sessionId: message.contextId ?? null,
    state: "completed",
    hasThinking: false,
    totalTimeMs: 0,
  },
});

const taskIdOf = (e: Exclude<TaskEvent, { kind: "task" }>): string | null =>
  e.kind === "message" ? (e.message.taskId ?? null) : e.taskId;
const contextIdOf = (e: Exclude<TaskEvent, { kind: "task" }>): string | null =>
  e.kind === "message" ? (e.message.contextId ?? null) : e.contextId;

/** SSE frames of one log event's chat events; the last carries the event's id. */
export function chatFrames(events: readonly ChatEvent[], id: number): string {
  return events
    .map((e, i) => sseFrame(e.data, i === events.length - 1 ? id : undefined, e.event))
    .join("");
}
