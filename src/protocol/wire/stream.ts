import { ChatView, chatFrames } from "../chat-stream";
import type { TaskEvent } from "../events";
import type { JsonObject } from "../json";
import type { Message } from "../message";
import { sseFrame } from "../sse";
import type { ProtocolVersion } from "./requests";
import { eventToV1 } from "./wire-v1";
import { eventToV03 } from "./wire-v03";

/** How a stream's events are framed: protocol version, binding, and the JSON-RPC id. */
export interface StreamFormat {
  version: ProtocolVersion;
  /** `chat`: the chat endpoint's view of the same events (see `ChatView`). */
  binding: "jsonrpc" | "rest" | "chat";
  /** JSON-RPC request id echoed in every event (jsonrpc binding only). */
  rpcId?: string | number | null;
  /** The agent's model id, for the chat view's `start` event. */
  model?: string | null;
}

/**
 * A JSON-RPC success response around a result already serialized (`resultJson` is the output
 * of `JSON.stringify`): the same bytes as `JSON.stringify({ jsonrpc, id, result })`.
 */
export function rpcResultJson(id: string | number | null, resultJson: string): string {
  return `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${resultJson}}`;
}

/** The JSON body of one stream event in the requested format. */
export function renderEvent(event: TaskEvent, format: StreamFormat): JsonObject {
  const result = format.version === "1.0" ? eventToV1(event) : eventToV03(event);
  return format.binding === "jsonrpc"
    ? { jsonrpc: "2.0", id: format.rpcId ?? null, result }
    : result;
}

/**
 * Each event's result as JSON, by protocol version: built once however many streams send
 * the event (every subscriber of a task gets the same event object from the hub).
 */
const resultJson = new WeakMap<TaskEvent, Partial<Record<ProtocolVersion, string>>>();

/**
 * `renderEvent` as JSON text, the same bytes `JSON.stringify` gives: the event's result is
 * serialized once per protocol version, and each stream only wraps it in its JSON-RPC id.
 */
export function renderEventJson(event: TaskEvent, format: StreamFormat): string {
  let byVersion = resultJson.get(event);
  if (byVersion === undefined) {
    byVersion = {};
    resultJson.set(event, byVersion);
  }
  let result = byVersion[format.version];
  if (result === undefined) {
    result = JSON.stringify(format.version === "1.0" ? eventToV1(event) : eventToV03(event));
    byVersion[format.version] = result;
  }
  return format.binding === "jsonrpc" ? rpcResultJson(format.rpcId ?? null, result) : result;
}

/**
 * A stream of one message and its end: SendStreamingMessage answered directly (§3.1.1,
 * "exactly one Message object and then close"). Nothing is logged, so no event id.
 */
export function replyStream(message: Message, format: StreamFormat): ReadableStream<Uint8Array> {
  const event: TaskEvent = { kind: "message", message };
  const frame =
    format.binding === "chat"
      ? chatFrames(
          new ChatView({ model: format.model ?? null, resumed: false, task: noTask }).events(event),
          0,
        )
      : sseFrame(renderEvent(event, format));
  const bytes = new TextEncoder().encode(frame);
  return new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(bytes);
      controller.close();
    },
  });
}

const noTask = (): never => {
  throw new Error("a direct reply has no task");
};
