import * as z from "zod";
import type { Artifact } from "../artifact";
import type { TaskEvent } from "../events";
import { compact, JsonObject, type JsonValue, nowIso } from "../json";
import { ClientId, LIMITS, Metadata, NameList, TaskIdString } from "../limits";
import { MARK, splitMarks, taskMarks, timestampOr, trimHistory, withMarks } from "../markers";
import type { Message } from "../message";
import { isKnownPart, Part } from "../part";
import type { Task, TaskStatus } from "../task";
import { TaskState } from "../task-state";
import { artifactFromWire, artifactToWire, messageFromWire, stateHistoryOf } from "./wire-shapes";

/**
 * A2A v0.3 JSON: `kind` discriminators, lower-case states and roles. v0.3 clients send
 * no `A2A-Version` header (§3.6.2), so this is also what an absent header means.
 */

/** A part's shape; `metadata` is the one field with a limit when a client sends it. */
const v03Part = (metadata: z.ZodType<JsonObject>) =>
  z.discriminatedUnion("kind", [
    z.object({ kind: z.literal("text"), text: z.string(), metadata: metadata.optional() }),
    z.object({
      kind: z.literal("file"),
      file: z
        .object({
          uri: z.string().optional(),
          bytes: z.base64().optional(),
          mimeType: z.string().optional(),
          name: z.string().optional(),
        })
        .refine((f) => (f.uri === undefined) !== (f.bytes === undefined), {
          message: "a file needs exactly one of uri or bytes",
        }),
      metadata: metadata.optional(),
    }),
    z.object({ kind: z.literal("data"), data: JsonObject, metadata: metadata.optional() }),
  ]);

/**
 * A part as any agent sends it, read by the client: the protocol's shape, without the
 * limits Edgelink sets on its own clients.
 */
export const V03Part = v03Part(JsonObject);
export type V03Part = z.infer<typeof V03Part>;

/** A message as any agent sends it (see `V03Part`). */
export const V03Message = z.object({
  kind: z.literal("message").default("message"),
  messageId: z.string().min(1, "messageId is required"),
  role: z.enum(["user", "agent"]),
  parts: z.array(V03Part).min(1, "at least one part is required"),
  contextId: z.string().optional(),
  taskId: z.string().optional(),
  metadata: JsonObject.optional(),
  extensions: z.array(z.string()).optional(),
  referenceTaskIds: z.array(z.string()).optional(),
});

/** A message in a request to Edgelink: the same shape, within `LIMITS`. */
export const V03RequestMessage = V03Message.extend({
  messageId: ClientId.min(1, "messageId is required"),
  parts: z
    .array(v03Part(Metadata))
    .min(1, "at least one part is required")
    .max(LIMITS.parts, `at most ${LIMITS.parts} parts`),
  contextId: ClientId.optional(),
  taskId: TaskIdString.optional(),
  metadata: Metadata.optional(),
  extensions: NameList.optional(),
  referenceTaskIds: NameList.optional(),
});

export const V03Task = z.object({
  kind: z.literal("task").default("task"),
  id: z.string().min(1),
  contextId: z.string(),
  status: z.object({
    state: TaskState,
    message: V03Message.optional(),
    timestamp: z.iso.datetime().optional(),
  }),
  history: z.array(V03Message).optional(),
  artifacts: z
    .array(
      z.object({
        artifactId: z.string().min(1),
        name: z.string().optional(),
        description: z.string().optional(),
        parts: z.array(V03Part),
        metadata: JsonObject.optional(),
        extensions: z.array(z.string()).optional(),
      }),
    )
    .optional(),
  metadata: JsonObject.optional(),
});

// ---- our models -> v0.3 ------------------------------------------------------------

export function partToV03(part: Part): JsonObject {
  const md = part.metadata;
  if (!isKnownPart(part)) return customPartTo(part);
  switch (part.type) {
    case "text":
      return compact({
        kind: "text",
        text: part.content,
        metadata: withMarks(md, { [MARK.mediaType]: part.mediaType }),
      });
    case "file": {
      const f = part.content;
      return compact({
        kind: "file",
        file: compact({ uri: f.url, bytes: f.bytes, mimeType: f.mediaType, name: f.filename }),
        metadata: md,
      });
    }
    case "data":
      return dataPartTo(part.content, md, { [MARK.mediaType]: part.mediaType });
    default:
      return customPartTo(part);
  }
}

function customPartTo(part: Part): JsonObject {
  return dataPartTo(part.content as JsonValue, part.metadata, { [MARK.part]: part.type });
}

// v0.3 data parts hold objects only; anything else is wrapped under `value`.
function dataPartTo(
  content: JsonValue,
  metadata: JsonObject | undefined,
  marks: Record<string, JsonValue | undefined>,
): JsonObject {
  const isObject = content !== null && typeof content === "object" && !Array.isArray(content);
  return compact({
    kind: "data",
    data: isObject ? (content as JsonObject) : { value: content },
    metadata: withMarks(metadata, { ...marks, "edgelink/wrapped": isObject ? undefined : true }),
  });
}

export function messageToV03(m: Message): JsonObject {
  const extraRole = m.role === "assistant" || m.role === "system" ? m.role : undefined;
  return compact({
    kind: "message",
    messageId: m.messageId,
    role: m.role === "user" || m.role === "system" ? "user" : "agent",
    parts: m.parts.map(partToV03),
    contextId: m.contextId,
    taskId: m.taskId,
    metadata: withMarks(m.metadata, { [MARK.role]: extraRole, [MARK.timestamp]: m.timestamp }),
    extensions: m.extensions,
    referenceTaskIds: m.referenceTaskIds,
  });
}

export function artifactToV03(a: Artifact): JsonObject {
  return artifactToWire(a, partToV03);
}

export function statusToV03(s: TaskStatus): JsonObject {
  return compact({
    state: s.state,
    message: s.message ? messageToV03(s.message) : undefined,
    timestamp: s.timestamp,
  });
}

export function taskToV03(
  t: Task,
  options: { historyLength?: number; includeArtifacts?: boolean } = {},
): JsonObject {
  const { historyLength, includeArtifacts = true } = options;
  const history = trimHistory(t.history, historyLength);
  return compact({
    kind: "task",
    id: t.id,
    contextId: t.contextId,
    status: statusToV03(t.status),
    history: history?.map(messageToV03),
    artifacts: includeArtifacts ? t.artifacts.map(artifactToV03) : undefined,
    metadata: withMarks(t.metadata, taskMarks(t)),
  });
}

export function eventToV03(e: TaskEvent): JsonObject {
  switch (e.kind) {
    case "task":
      return taskToV03(e.task);
    case "message":
      return messageToV03(e.message);
    case "status-update":
      return compact({
        kind: "status-update",
        taskId: e.taskId,
        contextId: e.contextId,
        status: statusToV03(e.status),
        final: e.final,
        metadata: e.metadata,
      });
    case "artifact-update":
      return compact({
        kind: "artifact-update",
        taskId: e.taskId,
        contextId: e.contextId,
        artifact: artifactToV03(e.artifact),
        append: e.append,
        lastChunk: e.lastChunk,
        metadata: e.metadata,
      });
  }
}

// ---- v0.3 -> our models ------------------------------------------------------------

export function partFromV03(p: V03Part): Part {
  const { metadata, marks } = splitMarks(p.metadata);
  const mediaType =
    typeof marks[MARK.mediaType] === "string" ? (marks[MARK.mediaType] as string) : undefined;
  switch (p.kind) {
    case "text":
      return compact({ type: "text" as const, content: p.text, mediaType, metadata });
    case "file":
      return compact({
        type: "file" as const,
        content: compact({
          url: p.file.uri,
          bytes: p.file.bytes,
          mediaType: p.file.mimeType,
          filename: p.file.name,
        }),
        metadata,
      });
    case "data": {
      const content = marks["edgelink/wrapped"] === true ? (p.data.value ?? null) : p.data;
      const type = marks[MARK.part];
      if (typeof type === "string") return Part.parse(compact({ type, content, metadata }));
      return compact({ type: "data" as const, content, mediaType, metadata });
    }
  }
}

export function messageFromV03(m: z.output<typeof V03Message>): Message {
  return messageFromWire(m, partFromV03);
}

export function taskFromV03(t: z.output<typeof V03Task>): Task {
  const { metadata, marks } = splitMarks(t.metadata);
  const createdAt = marks[MARK.createdAt];
  return {
    id: t.id,
    contextId: t.contextId,
    status: {
      state: t.status.state,
      message: t.status.message ? messageFromV03(t.status.message) : null,
      timestamp: t.status.timestamp ?? nowIso(),
    },
    history: (t.history ?? []).map(messageFromV03),
    artifacts: (t.artifacts ?? []).map((a) => artifactFromWire(a, partFromV03)),
    metadata: metadata ?? {},
    stateHistory: stateHistoryOf(marks[MARK.stateHistory]),
    createdAt: timestampOr(createdAt, nowIso),
    flowState: {},
  };
}
