import * as z from "zod";
import type { TaskEvent } from "../protocol/events";
import { JsonObject, nowIso } from "../protocol/json";
import { isInterrupted, isTerminal } from "../protocol/task-state";
import {
  artifactFromV1,
  messageFromV1,
  taskFromV1,
  V1Artifact,
  V1Message,
  V1Task,
  V1TaskStatus,
} from "../protocol/wire/wire-v1";

/**
 * The A2A v1 `StreamResponse` (spec §3.2.3) as a receiver reads it: exactly one of task,
 * message, statusUpdate, artifactUpdate. It is the push payload (§4.3.3).
 */

export const V1TaskStatusUpdateEvent = z.object({
  taskId: z.string().min(1),
  contextId: z.string().default(""),
  status: V1TaskStatus,
  metadata: JsonObject.optional(),
});

export const V1TaskArtifactUpdateEvent = z.object({
  taskId: z.string().min(1),
  contextId: z.string().default(""),
  artifact: V1Artifact,
  append: z.boolean().optional(),
  lastChunk: z.boolean().optional(),
  metadata: JsonObject.optional(),
});

const PAYLOAD_KEYS = ["task", "message", "statusUpdate", "artifactUpdate"] as const;

/** Unknown extra members are ignored (ProtoJSON readers must), but exactly one payload. */
export const V1StreamResponse = z
  .object({
    task: V1Task.optional(),
    message: V1Message.optional(),
    statusUpdate: V1TaskStatusUpdateEvent.optional(),
    artifactUpdate: V1TaskArtifactUpdateEvent.optional(),
  })
  .refine((r) => PAYLOAD_KEYS.filter((k) => r[k] !== undefined).length === 1, {
    message: "a StreamResponse holds exactly one of task, message, statusUpdate, artifactUpdate",
  });
export type V1StreamResponse = z.output<typeof V1StreamResponse>;

/**
 * A parsed StreamResponse as Edgelink's version-neutral event. v1 has no `final` flag, so
 * a status update is final when its state ends the stream (terminal or interrupted), as
 * the agent's own event log marks it.
 * @example
 * const event = streamResponseToEvent(V1StreamResponse.parse(json));
 * if (event.kind === "status-update") console.log(event.status.state); // "completed"
 */
export function streamResponseToEvent(response: V1StreamResponse): TaskEvent {
  if (response.task) return { kind: "task", task: taskFromV1(response.task) };
  if (response.message) return { kind: "message", message: messageFromV1(response.message) };
  if (response.statusUpdate) {
    const u = response.statusUpdate;
    const state = u.status.state;
    return {
      kind: "status-update",
      taskId: u.taskId,
      contextId: u.contextId,
      status: {
        state,
        message: u.status.message ? messageFromV1(u.status.message) : null,
        timestamp: u.status.timestamp ?? nowIso(),
      },
      final: isTerminal(state) || isInterrupted(state),
      ...(u.metadata ? { metadata: u.metadata } : {}),
    };
  }
  const u = response.artifactUpdate;
  if (!u) throw new Error("streamResponseToEvent: the StreamResponse holds no payload");
  return {
    kind: "artifact-update",
    taskId: u.taskId,
    contextId: u.contextId,
    artifact: artifactFromV1(u.artifact),
    append: u.append ?? false,
    lastChunk: u.lastChunk ?? false,
    ...(u.metadata ? { metadata: u.metadata } : {}),
  };
}

/** The task an event is about (a message may belong to none). */
export function taskIdOf(event: TaskEvent): string | undefined {
  switch (event.kind) {
    case "task":
      return event.task.id;
    case "message":
      return event.message.taskId;
    default:
      return event.taskId;
  }
}
