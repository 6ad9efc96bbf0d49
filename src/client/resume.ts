import type { TaskEvent } from "../protocol/events";
import type { Task } from "../protocol/task";
import { isInterrupted, isTerminal } from "../protocol/task-state";
import { taskIdOf } from "../push/stream-response";
import { eventOf } from "./answers";
import { A2AConnectionError, UnsupportedOperationError } from "./errors";
import type { StreamItem, Transport } from "./transport";
import type { AgentEvent, ResumeOptions } from "./types";

/** How a dropped stream is resumed unless the caller says otherwise. */
export const DEFAULT_RESUME = { retries: 5, delayMs: 250, maxDelayMs: 4000 };

/** What the resume loop needs of the client. */
export interface StreamSource {
  readonly transport: Transport;
  /** The endpoint's URL, named by the error of a stream that ends early. */
  readonly url: string;
  /** The client's resume options, for a call that sets none. */
  readonly resume: ResumeOptions | false;
  /** GetTask, for the final state of a task that finished while the stream was down. */
  getTask(id: string, signal: AbortSignal | undefined): Promise<Task>;
}

/** Where a stream starts, and how it may resume. */
export interface StreamStart {
  taskId: string | undefined;
  lastEventId: string | undefined;
  resume: ResumeOptions | false | undefined;
  signal: AbortSignal | undefined;
}

/** Whether an event ends a stream (terminal or interrupted task, or a direct message). */
function isFinal(event: TaskEvent): boolean {
  switch (event.kind) {
    case "message":
      return true;
    case "task":
      return isTerminal(event.task.status.state) || isInterrupted(event.task.status.state);
    case "status-update":
      return event.final || isTerminal(event.status.state) || isInterrupted(event.status.state);
    case "artifact-update":
      return false;
  }
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        reject(signal.reason);
      },
      { once: true },
    );
  });

/**
 * The resume loop shared by `stream` and `subscribe`. `first` is the initial connection
 * (undefined: start with SubscribeToTask). After a drop (an `A2AConnectionError`, or a body
 * that ends before a final event) it resubscribes with the last event id, up to `retries`
 * times in a row; each new event resets the count.
 */
export async function* followStream(
  source: StreamSource,
  first: AsyncGenerator<StreamItem> | undefined,
  start: StreamStart,
): AsyncGenerator<AgentEvent> {
  const { transport, url } = source;
  const resume = start.resume ?? source.resume;
  const limits = resume === false ? null : { ...DEFAULT_RESUME, ...resume };
  let { taskId, lastEventId } = start;
  let failures = 0;
  let opened = first;
  for (;;) {
    let lost: unknown;
    try {
      const items =
        opened ??
        transport.open("subscribe", { id: taskId ?? "" }, { lastEventId, signal: start.signal });
      opened = undefined;
      for await (const item of items) {
        // An event seen already (a peer replaying after a reconnection) is no progress.
        if (item.id !== undefined && item.id === lastEventId) continue;
        const event = eventOf(transport.version, item.payload);
        if (item.id !== undefined) lastEventId = item.id;
        taskId ??= taskIdOf(event);
        // New events reset the retry count; a bare snapshot after a reconnection does
        // not, so a peer that drops every connection after its snapshot is given up on.
        if (event.kind !== "task") failures = 0;
        yield item.id === undefined ? event : { ...event, eventId: item.id };
        if (isFinal(event)) return;
      }
      lost = new A2AConnectionError(
        `the stream of ${taskId ? `task ${taskId}` : "the message"} ended before the task finished`,
        url,
      );
    } catch (error) {
      if (!(error instanceof A2AConnectionError) || start.signal?.aborted) {
        // A resubscription refused because the task finished meanwhile (servers that
        // keep no event log): its final state is what the caller missed.
        if (error instanceof UnsupportedOperationError && failures > 0 && taskId) {
          yield { kind: "task", task: await source.getTask(taskId, start.signal) };
          return;
        }
        throw error;
      }
      lost = error;
    }
    if (!limits || !taskId || failures >= limits.retries) throw lost;
    failures++;
    limits.onRetry?.(failures, lost);
    await sleep(Math.min(limits.maxDelayMs, limits.delayMs * 2 ** (failures - 1)), start.signal);
  }
}
