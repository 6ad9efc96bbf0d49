import type { TaskEvent } from "../../src/protocol/events";
import { Messages } from "../../src/protocol/message";
import type { PushConfig } from "../../src/push/config";
import { bareArtifact, fullArtifact, fullTask } from "../protocol/fixtures";

export const AGENT = "https://agent.example.com";
export const HOOK = "https://hooks.example.com/a2a";
export const TASK_ID = "task-1";
export const NOW = Date.UTC(2026, 0, 15, 12, 0, 0);

/** A stored config with every field set. */
export function fullConfig(over: Partial<PushConfig> = {}): PushConfig {
  return {
    id: "cfg-1",
    taskId: TASK_ID,
    url: HOOK,
    token: "tok-123",
    authentication: { scheme: "Bearer", credentials: "s3cret" },
    protocolVersion: "1.0",
    ...over,
  };
}

/** One event of each kind, all about TASK_ID. */
export function everyEvent(): Record<string, TaskEvent> {
  const task = fullTask();
  return {
    task: { kind: "task", task },
    message: {
      kind: "message",
      message: { ...Messages.agent("hi"), taskId: TASK_ID, contextId: "ctx-1" },
    },
    "status-update": {
      kind: "status-update",
      taskId: TASK_ID,
      contextId: "ctx-1",
      status: {
        state: "working",
        message: Messages.agent("thinking"),
        timestamp: new Date(NOW).toISOString(),
      },
      final: false,
      metadata: { step: 2 },
    },
    "final status-update": {
      kind: "status-update",
      taskId: TASK_ID,
      contextId: "ctx-1",
      status: { state: "completed", message: null, timestamp: new Date(NOW).toISOString() },
      final: true,
    },
    "artifact-update": {
      kind: "artifact-update",
      taskId: TASK_ID,
      contextId: "ctx-1",
      artifact: fullArtifact(),
      append: true,
      lastChunk: false,
    },
    "artifact-update last chunk": {
      kind: "artifact-update",
      taskId: TASK_ID,
      contextId: "ctx-1",
      artifact: bareArtifact(),
      append: false,
      lastChunk: true,
    },
  };
}

export function statusEvent(state: "working" | "completed" = "completed"): TaskEvent {
  return {
    kind: "status-update",
    taskId: TASK_ID,
    contextId: "ctx-1",
    status: { state, message: null, timestamp: new Date(NOW).toISOString() },
    final: state === "completed",
  };
}
