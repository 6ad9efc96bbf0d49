/**
 * Streams of a conversation's tasks: one task's updates as SSE bytes (its snapshot or
 * backlog, then live events), and the caps on open streams, per task and per conversation.
 */
import type { Agent } from "../../agent/definition";
import { ChatView, chatFrames } from "../../protocol/chat-stream";
import { A2AError } from "../../protocol/errors";
import type { TaskEvent } from "../../protocol/events";
import { SSE_KEEP_ALIVE, sseJsonFrame } from "../../protocol/sse";
import type { Task } from "../../protocol/task";
import { isInterrupted, isTerminal } from "../../protocol/task-state";
import { renderEventJson, type StreamFormat } from "../../protocol/wire/stream";
import type { TaskStore } from "../tasks/task-store";
import type { EventHub } from "./event-hub";

/** A task as a stream's first event shows it, and the log position it stands for. */
export interface Snapshot {
  task: Task;
  seq: number;
}

/** Where a stream starts: a fresh task snapshot, or right after an event the client saw. */
/**
 * Where a stream starts: the task as it is now, or the events after `afterSeq`. `retry`:
 * a retried send, whose stream also ends at once when the task already ended or paused
 * (a subscription to a paused task stays open for what comes next).
 */
export type StreamStart =
  | { snapshot: true; retry?: boolean }
  | { snapshot: false; afterSeq: number };

const isFinal = (e: TaskEvent): boolean => e.kind === "status-update" && e.final;

/** The text a dropped subscriber gets last, before its stream closes. */
export const DROPPED_COMMENT =
  ": dropped: this client read too slowly; reconnect with Last-Event-ID to resume\n\n";

/**
 * One task's updates as SSE bytes: the snapshot or the backlog, then live events until
 * the task ends or pauses, with a keep-alive comment every `keepAliveMs`.
 *
 * Bounded: the backlog of a resumed stream is read `pageSize` events at a time, as the
 * client reads; a live subscriber more than `bufferBytes` behind is dropped with a
 * closing comment (it resumes with Last-Event-ID) instead of being buffered without
 * limit. The last backlog page is read and the live listener registered in one
 * synchronous turn, so no event can fall between them. Cancelling the stream (the client
 * left) only stops this stream.
 */
export function openTaskStream(options: {
  taskId: string;
  format: StreamFormat;
  from: StreamStart;
  store: TaskStore;
  hub: EventHub;
  snapshot: () => Snapshot;
  keepAliveMs: number;
  bufferBytes: number;
  pageSize: number;
  /** Called once when the stream ends, however it ends (finished, dropped, cancelled). */
  onEnd?: () => void;
}): ReadableStream<Uint8Array> {
  const { taskId, format, from, store, hub, keepAliveMs, bufferBytes, pageSize } = options;
  const encoder = new TextEncoder();
  let stop = () => {};
  let pump = () => {};
  // A throw (a read failed) ends the stream first: it holds no listener and no place.
  const guarded = (fn: () => void) => {
    try {
      fn();
    } catch (error) {
      stop();
      throw error;
    }
  };
  return new ReadableStream<Uint8Array>(
    {
      start: (controller) =>
        guarded(() => {
          let closed = false;
          let unsubscribe = () => {};
          let timer: ReturnType<typeof setInterval> | undefined;
          // Frames sent in one turn leave as one chunk: each chunk costs an encode, a write
          // across the object's RPC and one on the client's connection, and a handler's
          // chunks (an instant answer's whole stream) come in one turn.
          let pending = "";
          let flushQueued = false;
          const flush = () => {
            flushQueued = false;
            if (pending === "" || closed) return;
            const frames = pending;
            pending = "";
            controller.enqueue(encoder.encode(frames));
          };
          stop = () => {
            if (closed) return;
            closed = true;
            pending = "";
            unsubscribe();
            if (timer !== undefined) clearInterval(timer);
            options.onEnd?.();
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
              : sseJsonFrame(renderEventJson(event, format), seq);
            if (!frame) return;
            pending += frame;
            if (pending.length >= FLUSH_CHARS) flush();
            else if (!flushQueued) {
              flushQueued = true;
              queueMicrotask(flush);
            }
          };
          /** Room left in the buffer, counting the frames not yet handed to it. */
          const room = () => (controller.desiredSize ?? 0) - pending.length;
          const close = () => {
            if (closed) return;
            flush();
            stop();
            controller.close();
          };
          const live = () => {
            unsubscribe = hub.on(taskId, ({ seq, event }) => {
              if (closed) return;
              if (room() < 0) {
                flush();
                controller.enqueue(encoder.encode(DROPPED_COMMENT));
                return close();
              }
              send(event, seq);
              if (isFinal(event)) close();
            });
            // Armed after the turn that opened the stream: a task answered in that turn
            // (an instant handler's) closed it already and needs no timer.
            queueMicrotask(() => {
              if (closed) return;
              timer = setInterval(() => {
                if (!closed && room() > 0) controller.enqueue(encoder.encode(SSE_KEEP_ALIVE));
              }, keepAliveMs);
            });
          };
          if (from.snapshot) {
            const { task, seq } = options.snapshot();
            send({ kind: "task", task }, seq);
            const state = task.status.state;
            if (from.retry && (isTerminal(state) || isInterrupted(state))) return close();
            return live();
          }
          let cursor = from.afterSeq;
          let backlog = true;
          let pumping = false;
          pump = () => {
            // enqueue may call pull (and so pump) again from inside; one pump at a time.
            if (pumping) return;
            pumping = true;
            try {
              while (backlog && !closed && room() > 0) {
                const page = store.events.after(taskId, cursor, pageSize);
                const last = page.at(-1);
                if (last) cursor = last.seq;
                for (const { seq, event } of page) send(event, seq);
                // The page goes to the buffer now, so the loop sees the room it took.
                flush();
                if (page.length === pageSize) continue;
                backlog = false;
                const state = store.state(taskId);
                if ((last && isFinal(last.event)) || (state && isTerminal(state))) return close();
                live();
              }
            } finally {
              pumping = false;
            }
          };
          pump();
        }),
      pull: () => guarded(pump),
      cancel: () => stop(),
    },
    { highWaterMark: bufferBytes, size: (chunk) => chunk.byteLength },
  );
}

/**
 * Frames held for one chunk are handed over at this many characters, so a turn that sends
 * many holds a bounded string.
 */
const FLUSH_CHARS = 16 * 1024;

/** The streams of a conversation's tasks: opened on its event hub, capped per task and in all. */
export class TaskStreams {
  /** Streams open now across the conversation's tasks. */
  private opened = 0;

  constructor(
    private readonly store: TaskStore,
    private readonly hub: EventHub,
    /** The agent, read at each call (a test may replace it). */
    private readonly agent: () => Pick<Agent<unknown>, "limits" | "keepAliveMs">,
    /** A task as it is now (TaskNotFound when it is not there). */
    private readonly read: (taskId: string) => Task,
  ) {}

  /**
   * Refuses one more stream, on `taskId` when named, past either cap
   * (`limits.maxSubscribersPerTask`, `limits.maxStreamsPerConversation`); asked before a
   * message is written, and again as the stream opens.
   */
  checkRoom(taskId?: string): void {
    const { maxSubscribersPerTask, maxStreamsPerConversation } = this.agent().limits;
    if (taskId !== undefined && this.hub.count(taskId) >= maxSubscribersPerTask) {
      throw full(`Task ${taskId}`, maxSubscribersPerTask, "maxSubscribersPerTask", { taskId });
    }
    // Each stream may buffer `streamBufferBytes` for a slow reader: together they must fit
    // in the object's memory, whichever tasks they follow.
    if (this.opened >= maxStreamsPerConversation) {
      throw full("This conversation", maxStreamsPerConversation, "maxStreamsPerConversation", {});
    }
  }

  /** Opens a stream of a task's updates from `from` (`start`: the snapshot it begins with). */
  open(
    taskId: string,
    format: StreamFormat,
    from: StreamStart,
    start?: Snapshot,
  ): ReadableStream<Uint8Array> {
    this.checkRoom(taskId);
    const agent = this.agent();
    const { streamBufferBytes, backlogPageSize } = agent.limits;
    // Counted before it opens: one that ends while opening (a retry of a finished task, a
    // task read that failed) gives its place back at once.
    this.opened++;
    return openTaskStream({
      bufferBytes: streamBufferBytes,
      pageSize: backlogPageSize,
      taskId,
      format,
      from,
      store: this.store,
      hub: this.hub,
      snapshot: () => start ?? { task: this.read(taskId), seq: this.store.events.lastSeq(taskId) },
      keepAliveMs: agent.keepAliveMs,
      onEnd: () => {
        this.opened--;
      },
    });
  }
}

/** A stream refused at a cap: the same error and shape for both. */
const full = (what: string, max: number, limit: string, data: Record<string, string>) =>
  new A2AError(
    "UnsupportedOperation",
    `${what} already has ${max} open streams, the limit (limits.${limit}); close one or poll with GetTask`,
    { ...data, limit: String(max) },
  );
