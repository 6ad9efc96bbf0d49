import * as z from "zod";
import type { Artifact } from "../artifact";
import type { TaskEvent } from "../events";
import { compact, JsonObject, JsonValue, newId, nowIso } from "../json";
import { ClientId, LIMITS, Metadata, NameList, TaskIdString } from "../limits";
import { MARK, splitMarks, taskMarks, timestampOr, trimHistory, withMarks } from "../markers";
import type { Message } from "../message";
import { isKnownPart, Part } from "../part";
import type { Task, TaskStatus } from "../task";
import type { TaskState } from "../task-state";
import { artifactFromWire, artifactToWire, messageFromWire, stateHistoryOf } from "./wire-shapes";

/**
 * A2A v1.0 JSON (ProtoJSON: camelCase fields, enum names as strings) and the lossless
 * mapping between it and Edgelink's models.
 */

const STATE_TO_V1: Record<TaskState, string> = {
  submitted: "TASK_STATE_SUBMITTED",
  working: "TASK_STATE_WORKING",
  completed: "TASK_STATE_COMPLETED",
  failed: "TASK_STATE_FAILED",
  canceled: "TASK_STATE_CANCELED",
  "input-required": "TASK_STATE_INPUT_REQUIRED",
  rejected: "TASK_STATE_REJECTED",
  "auth-required": "TASK_STATE_AUTH_REQUIRED",
  unknown: "TASK_STATE_UNSPECIFIED",
};
const V1_STATE_NUMBERS = [
  "TASK_STATE_UNSPECIFIED",
  "TASK_STATE_SUBMITTED",
  "TASK_STATE_WORKING",
  "TASK_STATE_COMPLETED",
  "TASK_STATE_FAILED",
  "TASK_STATE_CANCELED",
  "TASK_STATE_INPUT_REQUIRED",
  "TASK_STATE_REJECTED",
  "TASK_STATE_AUTH_REQUIRED",
] as const;
const V1_TO_STATE = Object.fromEntries(
  Object.entries(STATE_TO_V1).map(([k, v]) => [v, k as TaskState]),
) as Record<string, TaskState>;

export const stateToV1 = (state: TaskState): string => STATE_TO_V1[state];

/** A v1 TaskState: its enum name or, as ProtoJSON allows, its number. */
export const V1TaskState = z
  .union([z.enum(V1_STATE_NUMBERS), z.number().int().min(0).max(8)], {
    error: "must be a TaskState name (TASK_STATE_SUBMITTED, TASK_STATE_WORKING, ...) or its number",
  })
  .transform(
    (v) => V1_TO_STATE[typeof v === "number" ? (V1_STATE_NUMBERS[v] ?? "") : v] ?? "unknown",
  );

const V1Role = z
  .union([z.enum(["ROLE_USER", "ROLE_AGENT"]), z.literal(1), z.literal(2)], {
    error: "must be ROLE_USER or ROLE_AGENT (or 1, 2)",
  })
  .transform((v): "user" | "agent" => (v === "ROLE_USER" || v === 1 ? "user" : "agent"));

/** A part's shape; `metadata` is the one field with a limit when a client sends it. */
const v1Part = (metadata: z.ZodType<JsonObject>) =>
  z
    .object({
      text: z.string().optional(),
      raw: z.base64().optional(),
      url: z.string().optional(),
      data: JsonValue.optional(),
      metadata: metadata.optional(),
      filename: z.string().optional(),
      mediaType: z.string().optional(),
    })
    .refine(
      (p) => [p.text, p.raw, p.url, p.data].filter((v) => v !== undefined).length === 1,
      "a part needs exactly one of text, raw, url or data",
    );

/**
 * A part as any agent sends it (answers, stream events, webhooks), read by the client:
 * the protocol's shape, without the limits Edgelink sets on its own clients.
 */
export const V1Part = v1Part(JsonObject);
export type V1Part = z.infer<typeof V1Part>;

/** A message as any agent sends it (see `V1Part`). */
export const V1Message = z.object({
  messageId: z.string().min(1, "messageId is required"),
  contextId: z.string().optional(),
  taskId: z.string().optional(),
  role: V1Role,
  parts: z.array(V1Part).min(1, "at least one part is required"),
  metadata: JsonObject.optional(),
  extensions: z.array(z.string()).optional(),
  referenceTaskIds: z.array(z.string()).optional(),
});

/** A message in a request to Edgelink: the same shape, within `LIMITS`. */
export const V1RequestMessage = V1Message.extend({
  messageId: ClientId.min(1, "messageId is required"),
  contextId: ClientId.optional(),
  taskId: TaskIdString.optional(),
  parts: z
    .array(v1Part(Metadata))
    .min(1, "at least one part is required")
    .max(LIMITS.parts, `at most ${LIMITS.parts} parts`),
  metadata: Metadata.optional(),
  extensions: NameList.optional(),
  referenceTaskIds: NameList.optional(),
});
export type V1MessageIn = z.input<typeof V1RequestMessage>;

export const V1Artifact = z.object({
  artifactId: z.string().min(1),
  name: z.string().optional(),
  description: z.string().optional(),
  parts: z.array(V1Part),
  metadata: JsonObject.optional(),
  extensions: z.array(z.string()).optional(),
});

export const V1TaskStatus = z.object({
  state: V1TaskState,
  message: V1Message.optional(),
  timestamp: z.iso.datetime().optional(),
});

export const V1Task = z.object({
  id: z.string().min(1),
  contextId: z.string().default(""),
  status: V1TaskStatus,
  artifacts: z.array(V1Artifact).optional(),
  history: z.array(V1Message).optional(),
  metadata: JsonObject.optional(),
});

// ---- our models -> v1 --------------------------------------------------------------

export function partToV1(part: Part): JsonObject {
  const md = part.metadata;
  if (!isKnownPart(part)) return customPartTo(part);
  switch (part.type) {
    case "text":
      return compact({ text: part.content, mediaType: part.mediaType, metadata: md });
    case "data":
      return compact({ data: part.content, mediaType: part.mediaType, metadata: md });
    case "file": {
      const f = part.content;
      return compact({
        ...(f.url !== undefined ? { url: f.url } : { raw: f.bytes }),
        filename: f.filename,
        mediaType: f.mediaType,
        metadata: md,
      });
    }
    default:
      return customPartTo(part);
  }
}

/** Edgelink's own and unknown part types ride in a data part marked with their type. */
function customPartTo(part: Part): JsonObject {
  return compact({
    data: part.content as JsonValue,
    mediaType: "application/json",
    metadata: withMarks(part.metadata, { [MARK.part]: part.type }),
  });
}

export function messageToV1(m: Message): JsonObject {
  const a2aRole = m.role === "user" || m.role === "system" ? "ROLE_USER" : "ROLE_AGENT";
  const extraRole = m.role === "assistant" || m.role === "system" ? m.role : undefined;
  return compact({
    messageId: m.messageId,
    contextId: m.contextId,
    taskId: m.taskId,
    role: a2aRole,
    parts: m.parts.map(partToV1),
    metadata: withMarks(m.metadata, { [MARK.role]: extraRole, [MARK.timestamp]: m.timestamp }),
    extensions: m.extensions,
    referenceTaskIds: m.referenceTaskIds,
  });
}

export function artifactToV1(a: Artifact): JsonObject {
  return artifactToWire(a, partToV1);
}

export function statusToV1(s: TaskStatus): JsonObject {
  return compact({
    state: stateToV1(s.state),
    message: s.message ? messageToV1(s.message) : undefined,
    timestamp: s.timestamp,
  });
}

/** A task on the wire. `historyLength` follows §3.2.4; artifacts may be left out (ListTasks). */
export function taskToV1(
  t: Task,
  options: { historyLength?: number; includeArtifacts?: boolean } = {},
): JsonObject {
  const { historyLength, includeArtifacts = true } = options;
  const history = trimHistory(t.history, historyLength);
  return compact({
    id: t.id,
    contextId: t.contextId,
    status: statusToV1(t.status),
    artifacts: includeArtifacts ? t.artifacts.map(artifactToV1) : undefined,
    history: history?.map(messageToV1),
    metadata: withMarks(t.metadata, taskMarks(t)),
  });
}

/** A StreamResponse for one logged event. */
export function eventToV1(e: TaskEvent): JsonObject {
  switch (e.kind) {
    case "task":
      return { task: taskToV1(e.task) };
    case "message":
      return { message: messageToV1(e.message) };
    case "status-update":
      return {
        statusUpdate: compact({
          taskId: e.taskId,
          contextId: e.contextId,
          status: statusToV1(e.status),
          metadata: e.metadata,
        }),
      };
    case "artifact-update":
      return {
        artifactUpdate: compact({
          taskId: e.taskId,
          contextId: e.contextId,
          artifact: artifactToV1(e.artifact),
          append: e.append || undefined,
          lastChunk: e.lastChunk || undefined,
          metadata: e.metadata,
        }),
      };
  }
}

// ---- v1 -> our models --------------------------------------------------------------

export function partFromV1(p: V1Part): Part {
  const { metadata, marks } = splitMarks(p.metadata);
  const type = marks[MARK.part];
  if (typeof type === "string" && p.data !== undefined) {
    return Part.parse(compact({ type, content: p.data, metadata }));
  }
  if (p.text !== undefined) {
    return compact({ type: "text" as const, content: p.text, mediaType: p.mediaType, metadata });
  }
  if (p.data !== undefined) {
    return compact({ type: "data" as const, content: p.data, mediaType: p.mediaType, metadata });
  }
  const content = compact({
    url: p.url,
    bytes: p.raw,
    mediaType: p.mediaType,
    filename: p.filename,
  });
  return compact({ type: "file" as const, content, metadata });
}

export function messageFromV1(m: z.output<typeof V1Message>): Message {
  return messageFromWire(m, partFromV1);
}

export function artifactFromV1(a: z.output<typeof V1Artifact>): Artifact {
  return artifactFromWire(a, partFromV1);
}

export function taskFromV1(t: z.output<typeof V1Task>): Task {
  const { metadata, marks } = splitMarks(t.metadata);
  const createdAt = marks[MARK.createdAt];
  return {
    id: t.id,
    // A peer may omit contextId (the spec's own streaming example does); ours is required.
    contextId: t.contextId || newId(),
    status: {
      state: t.status.state,
      message: t.status.message ? messageFromV1(t.status.message) : null,
      timestamp: t.status.timestamp ?? nowIso(),
    },
    history: (t.history ?? []).map(messageFromV1),
    artifacts: (t.artifacts ?? []).map(artifactFromV1),
    metadata: metadata ?? {},
    stateHistory: stateHistoryOf(marks[MARK.stateHistory]),
    createdAt: timestampOr(createdAt, nowIso),
    flowState: {},
  };
}
