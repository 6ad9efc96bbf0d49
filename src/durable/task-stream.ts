import { ChatView, chatFrames } from "../models/chat-stream";
import type { TaskEvent } from "../models/events";
import { renderEvent, SSE_KEEP_ALIVE, type StreamFormat, sseFrame } from "../models/stream";
import type { Task } from "../models/task";
import { isTerminal } from "../models/task-state";
import type { EventHub } from "./event-hub";
import type { TaskStore } from "./task-store";

/** A task as a stream's first event shows it, and the log position it stands for. */
export interface Snapshot {
  task: Task;
  seq: number;
}

/** Where a stream starts: a fresh task snapshot, or right after an event the client saw. */
export type StreamStart = { snapshot: true } | { snapshot: false; afterSeq: number };

const isFinal = (e: TaskEvent): boolean => e.kind === "status-update" && e.final;

/**
 * One task's updates as SSE bytes: the snapshot or the backlog, then live events until
 * the task ends or pauses, with a keep-alive comment every `keepAliveMs`. Reading the
 * backlog and registering for live events happen in one synchronous turn, so no event
 * can fall between them. Cancelling the stream (the client left) only stops this stream.
 */
export function openTaskStream(options: {
  taskId: string;
  format: StreamFormat;
  from: StreamStart;
  store: TaskStore;
  hub: EventHub;
  snapshot: () => Snapshot;
  keepAliveMs: number;
}): ReadableStream<Uint8Array> {
  const { taskId, format, from, store, hub, keepAliveMs } = options;
  const encoder = new TextEncoder();
  let stop = () => {};
  return new ReadableStream<Uint8Array>({
    start: (controller) => {
      let closed = false;
      let unsubscribe = () => {};
      let timer: ReturnType<typeof setInterval> | undefined;
      stop = () => {
        closed = true;
        unsubscribe();
        if (timer !== undefined) clearInterval(timer);
      };
      const chat =
        format.binding === "chat"
          ? new ChatView({
              model: format.model ?? null,
              resumed: !from.snapshot && from.afterSeq > 0,
              task: () => store.read(taskId) ?? options.snapshot().task,
            })
          : null;
      const send = (event: TaskEvent, seq: number) => {
        const frame = chat
          ? chatFrames(chat.events(event), seq)
          : sseFrame(renderEvent(event, format), seq);
        if (frame) controller.enqueue(encoder.encode(frame));
      };
      const close = () => {
        if (closed) return;
        stop();
        controller.close();
      };
      if (from.snapshot) {
        const { task, seq } = options.snapshot();
        send({ kind: "task", task }, seq);
      } else {
        const backlog = store.eventsAfter(taskId, from.afterSeq);
        for (const { seq, event } of backlog) send(event, seq);
        const last = backlog.at(-1);
        const state = store.state(taskId);
        if ((last && isFinal(last.event)) || (state && isTerminal(state))) return close();
      }
      unsubscribe = hub.on(taskId, ({ seq, event }) => {
        send(event, seq);
        if (isFinal(event)) close();
      });
      timer = setInterval(() => {
        if (!closed) controller.enqueue(encoder.encode(SSE_KEEP_ALIVE));
      }, keepAliveMs);
    },
    cancel: () => stop(),
  });
}
