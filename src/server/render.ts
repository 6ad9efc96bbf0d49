import type { JsonObject } from "../models/json";
import type { ProtocolVersion } from "../models/requests";
import type { Task } from "../models/task";
import { taskToV1 } from "../models/wire-v1";
import { taskToV03 } from "../models/wire-v03";
import type { TaskList } from "./operations";

export interface RenderOptions {
  /** The request's historyLength: 0 omits `history` entirely (§3.2.4). */
  historyLength?: number;
  includeArtifacts?: boolean;
}

/** Renders a task in the version the client speaks. */
export function renderTask(
  task: Task,
  version: ProtocolVersion,
  options: RenderOptions = {},
): JsonObject {
  return version === "1.0" ? taskToV1(task, options) : taskToV03(task, options);
}

/** SendMessage's result: v1 wraps the task (`{task}`), v0.3 returns it bare. */
export function renderSendResult(
  task: Task,
  version: ProtocolVersion,
  options: RenderOptions = {},
): JsonObject {
  return version === "1.0" ? { task: taskToV1(task, options) } : taskToV03(task, options);
}

/** ListTasks' result; artifacts are omitted entirely unless asked for (§3.1.4). */
export function renderTaskList(list: TaskList, version: ProtocolVersion, options: RenderOptions) {
  return {
    tasks: list.tasks.map((t) => renderTask(t, version, options)),
    nextPageToken: list.nextPageToken,
    pageSize: list.pageSize,
    totalSize: list.totalSize,
  };
}

export const SSE_HEADERS = {
  "Content-Type": "text/event-stream; charset=utf-8",
  "Cache-Control": "no-cache, no-transform",
  "X-Accel-Buffering": "no",
} as const;
