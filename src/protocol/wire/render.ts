import type { JsonObject } from "../json";
import type { Message } from "../message";
import type { Task } from "../task";
import type { ProtocolVersion } from "./requests";
import { messageToV1, taskToV1 } from "./wire-v1";
import { messageToV03, taskToV03 } from "./wire-v03";

/** A ListTasks page before rendering. */
export interface TaskList {
  tasks: Task[];
  nextPageToken: string;
  pageSize: number;
  totalSize: number;
}

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

/** SendMessage's result when the agent replied directly (§3.1.1): `{message}` in v1. */
export function renderReplyResult(message: Message, version: ProtocolVersion): JsonObject {
  return version === "1.0" ? { message: messageToV1(message) } : messageToV03(message);
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
