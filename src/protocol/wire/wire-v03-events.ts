import * as z from "zod";
import { Artifact } from "../artifact";
import type { TaskEvent } from "../events";
import { JsonObject, nowIso } from "../json";
import { artifactFieldsOf, splitMarks } from "../markers";
import { TaskState } from "../task-state";
import { messageFromV03, partFromV03, taskFromV03, V03Message, V03Part, V03Task } from "./wire-v03";

/**
 * What a v0.3 agent answers with, read back: a SendMessage result (task or message) and
 * the events of a v0.3 stream (`kind` discriminated), as Edgelink's `TaskEvent`.
 */

const V03Artifact = z.object({
  artifactId: z.string().min(1),
  name: z.string().optional(),
  description: z.string().optional(),
  parts: z.array(V03Part),
  metadata: JsonObject.optional(),
  extensions: z.array(z.string()).optional(),
});

export const V03StreamEvent = z.discriminatedUnion("kind", [
  V03Task.extend({ kind: z.literal("task") }),
  V03Message.extend({ kind: z.literal("message") }),
  z.object({
    kind: z.literal("status-update"),
    taskId: z.string().min(1),
    contextId: z.string().default(""),
    status: z.object({
      state: TaskState,
      message: V03Message.optional(),
      timestamp: z.iso.datetime().optional(),
    }),
    final: z.boolean().default(false),
    metadata: JsonObject.optional(),
  }),
  z.object({
    kind: z.literal("artifact-update"),
    taskId: z.string().min(1),
    contextId: z.string().default(""),
    artifact: V03Artifact,
    append: z.boolean().optional(),
    lastChunk: z.boolean().optional(),
    metadata: JsonObject.optional(),
  }),
]);
export type V03StreamEvent = z.output<typeof V03StreamEvent>;

/**
 * A parsed v0.3 event as a `TaskEvent`.
 * @example
 * eventFromV03(V03StreamEvent.parse({ kind: "status-update", taskId: "t", contextId: "c",
 *   status: { state: "completed" }, final: true })); // { kind: "status-update", final: true, ... }
 */
export function eventFromV03(e: V03StreamEvent): TaskEvent {
  switch (e.kind) {
    case "task":
      return { kind: "task", task: taskFromV03(e) };
    case "message":
      return { kind: "message", message: messageFromV03(e) };
    case "status-update":
      return {
        kind: "status-update",
        taskId: e.taskId,
        contextId: e.contextId,
        status: {
          state: e.status.state,
          message: e.status.message ? messageFromV03(e.status.message) : null,
          timestamp: e.status.timestamp ?? nowIso(),
        },
        final: e.final,
        ...(e.metadata ? { metadata: e.metadata } : {}),
      };
    case "artifact-update": {
      const split = splitMarks(e.artifact.metadata);
      return {
        kind: "artifact-update",
        taskId: e.taskId,
        contextId: e.contextId,
        artifact: Artifact.parse({
          artifactId: e.artifact.artifactId,
          name: e.artifact.name ?? null,
          description: e.artifact.description ?? null,
          parts: e.artifact.parts.map(partFromV03),
          metadata: split.metadata ?? {},
          extensions: e.artifact.extensions,
          ...artifactFieldsOf(split.marks),
        }),
        append: e.append ?? false,
        lastChunk: e.lastChunk ?? false,
        ...(e.metadata ? { metadata: e.metadata } : {}),
      };
    }
  }
}
