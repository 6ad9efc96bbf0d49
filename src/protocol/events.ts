import type { Artifact } from "./artifact";
import type { JsonObject } from "./json";
import type { Message } from "./message";
import type { Task, TaskStatus } from "./task";

/**
 * One entry of a task's event log, binding- and version-neutral. The server renders it
 * as a v1 StreamResponse or a v0.3 event. `final` marks the last event of a stream.
 */
export type TaskEvent =
  | { kind: "task"; task: Task }
  | { kind: "message"; message: Message }
  | {
      kind: "status-update";
      taskId: string;
      contextId: string;
      status: TaskStatus;
      final: boolean;
      metadata?: JsonObject;
    }
  | {
      kind: "artifact-update";
      taskId: string;
      contextId: string;
      artifact: Artifact;
      append: boolean;
      lastChunk: boolean;
      metadata?: JsonObject;
    };

/** An event with its position in the log: the SSE `id:`. */
export interface LoggedEvent {
  seq: number;
  event: TaskEvent;
}
