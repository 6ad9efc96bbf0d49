/**
 * One model call of a turn: streaming its answer into the task's artifact as it comes,
 * and what the call leaves in the conversation history.
 */
import {
  builtItem,
  type FunctionCallItem,
  ID_PREFIX,
  type ItemInput,
  type MessageItem,
} from "../../history/items";
import type { JsonObject } from "../../protocol/json";
import { newId, nowIso } from "../../protocol/json";
import type { Message } from "../../protocol/message";
import { Parts } from "../../protocol/part";
import { isFirstToken } from "../../providers/base/collect";
import type { ReasoningBlock, StreamEvent, ToolCall } from "../../providers/base/types";
import type { Traced } from "../../telemetry";
import type { ModelUse } from "../agent-result";
import type { RunContext } from "../run-context";
import type { RecoveredFailure } from "./model-trace";

/** The artifact an LLM agent streams its answer into. */
export const RESPONSE_ARTIFACT = "response";

/** What one model call produced. */
export interface Round {
  /** Why the model stopped (`message_end`), for the call's span. */
  finishReason: string | null;
  /** Failures a retry or fallback recovered from, kept only while tracing. */
  failures?: RecoveredFailure[];
  text: string;
  reasoning: string;
  reasoningBlocks: ReasoningBlock[];
  toolCalls: ToolCall[];
  use: ModelUse;
  startedAt: number;
}

export async function streamRound(
  batches: AsyncIterable<StreamEvent[]>,
  artifact: ArtifactWriter,
  onReasoning: ((text: string) => void) | null,
  span?: Traced,
): Promise<Round> {
  const startedAt = Date.now();
  const round: Round = {
    finishReason: null,
    text: "",
    reasoning: "",
    reasoningBlocks: [],
    toolCalls: [],
    use: { provider: "", model: "", latencyMs: 0 },
    startedAt,
  };
  const text: string[] = [];
  const reasoning: string[] = [];
  for await (const batch of batches) {
    let chunk = "";
    let thought = "";
    for (const event of batch) {
      if (round.use.timeToFirstTokenMs === undefined && isFirstToken(event)) {
        round.use.timeToFirstTokenMs = Date.now() - startedAt;
      }
      switch (event.type) {
        case "message_start":
          round.use.provider = event.provider;
          round.use.model = event.model;
          break;
        case "text_delta":
          chunk += event.text;
          break;
        case "reasoning_delta":
          thought += event.text;
          break;
        case "tool_call_end":
          round.toolCalls.push(event.call);
          break;
        case "message_end":
          round.use.usage = event.usage ?? undefined;
          round.use.cost = event.costEstimate ?? undefined;
          round.reasoningBlocks = event.reasoning;
          round.finishReason = event.stopReason;
          break;
        case "error":
          // A failure a retry or a fallback recovered from: an event on the call's span.
          if (span) {
            round.failures ??= [];
            round.failures.push({ ...event, at: Date.now() });
          }
          break;
        default:
          break;
      }
    }
    if (thought) {
      reasoning.push(thought);
      onReasoning?.(thought);
    }
    if (chunk) {
      text.push(chunk);
      artifact.write(chunk);
    }
  }
  // Text before tool calls is not the answer's end: send it before the tools run.
  if (round.toolCalls.length > 0) artifact.flush();
  round.use.latencyMs = Date.now() - startedAt;
  round.text = text.join("");
  round.reasoning = reasoning.join("");
  return round;
}

/**
 * The history items of one model turn, in the shape every converter replays: the
 * assistant's text (carrying its thinking), then its calls. With no text, the thinking
 * rides on the first call.
 */
export function turnItems(round: Round, ids: { taskId: string; contextId: string }): ItemInput[] {
  const items: ItemInput[] = [];
  const reasoning = round.reasoningBlocks as unknown as JsonObject[];
  const hasMessage = round.text !== "" || round.toolCalls.length === 0;
  if (hasMessage) {
    const a2a = agentMessage(round.text, ids);
    const extra: JsonObject = { a2a: a2a as unknown as JsonObject };
    if (reasoning.length) extra.reasoning = reasoning;
    if (round.reasoning) extra.thinking = round.reasoning;
    // Built complete, as the schema would (its text and the A2A message are ours), so
    // recording it costs no validation pass.
    const message: MessageItem = {
      type: "message",
      id: newId(ID_PREFIX.message),
      createdAt: a2a.timestamp,
      role: "assistant",
      content: [round.text],
      interrupted: false,
      extra,
    };
    items.push(builtItem(message));
  }
  round.toolCalls.forEach((call, index) => {
    const metadata: JsonObject = { ...call.metadata };
    if (!hasMessage && index === 0 && reasoning.length) metadata.reasoning = reasoning;
    const item: Omit<FunctionCallItem, "id" | "createdAt"> = {
      type: "function_call",
      name: call.name,
      arguments: call.arguments,
      callId: call.id,
    };
    if (Object.keys(metadata).length) item.metadata = metadata;
    items.push(item);
  });
  return items;
}

/** The answer as an A2A message, keys in the schema's order (it is stored as built). */
function agentMessage(text: string, ids: { taskId: string; contextId: string }): Message {
  return {
    messageId: newId(),
    role: "agent",
    parts: [Parts.text(text)],
    contextId: ids.contextId,
    taskId: ids.taskId,
    timestamp: nowIso(),
  };
}

/**
 * Streams text into one artifact: the first write creates it, later writes append. Each
 * chunk is sent when the next one arrives (or the round ends), so the chunk that ends the
 * answer can carry `lastChunk` itself: a closing write of its own would have to add an
 * empty text part to the artifact.
 */
export class ArtifactWriter {
  #id: string | null = null;
  #pending: string | null = null;
  constructor(private readonly ctx: RunContext<unknown>) {}

  /** Holds a chunk, sending the one held before it. */
  write(text: string): void {
    this.flush();
    this.#pending = text;
  }

  /** Sends the held chunk, not as the answer's end (more rounds follow, or the turn failed). */
  flush(): void {
    if (this.#pending !== null) this.#send(this.#pending, false);
    this.#pending = null;
  }

  /**
   * Sends the held chunk as the answer's end. With none held (the last round wrote no
   * text) nothing is sent: the task's final status ends the artifact.
   */
  finish(): void {
    if (this.#pending !== null) this.#send(this.#pending, true);
    this.#pending = null;
  }

  #send(text: string, last: boolean): void {
    const end = last ? { lastChunk: true } : {};
    if (this.#id === null) {
      this.#id = this.ctx.artifact({ name: RESPONSE_ARTIFACT, parts: [Parts.text(text)], ...end });
    } else {
      this.ctx.artifact({ artifactId: this.#id, append: true, parts: [Parts.text(text)], ...end });
    }
  }
}
