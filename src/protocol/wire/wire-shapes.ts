import * as z from "zod";
import { Artifact } from "../artifact";
import { compact, type JsonObject, type JsonValue, nowIso } from "../json";
import {
  artifactFieldsOf,
  artifactMark,
  MARK,
  splitMarks,
  timestampOr,
  withMarks,
} from "../markers";
import type { Message, Role } from "../message";
import type { Part } from "../part";
import { StateChange } from "../task";

/**
 * The shapes v1.0 and v0.3 share: an artifact and a received message are the same fields
 * in both versions, only their parts are written differently. Each converter here takes
 * its version's part mapper, so the field mapping is written once.
 */

/** An artifact as both versions carry it, with its parts of type `P`. */
export interface WireArtifact<P> {
  artifactId: string;
  name?: string | null;
  description?: string | null;
  parts: readonly P[];
  metadata?: JsonObject;
  extensions?: string[];
}

/** A received message as both versions carry it (the role already mapped to ours). */
export interface WireMessage<P> {
  messageId: string;
  role: string;
  parts: readonly P[];
  contextId?: string;
  taskId?: string;
  metadata?: JsonObject;
  extensions?: string[];
  referenceTaskIds?: string[];
}

/** An artifact on the wire, its parts written by `partTo`. */
export function artifactToWire(a: Artifact, partTo: (part: Part) => JsonObject): JsonObject {
  return compact({
    artifactId: a.artifactId,
    name: a.name ?? undefined,
    description: a.description ?? undefined,
    parts: a.parts.map(partTo),
    metadata: withMarks(a.metadata, { [MARK.artifact]: artifactMark(a) }),
    extensions: a.extensions,
  });
}

/** A wire artifact as ours, its parts read by `partFrom`, its own fields from our mark. */
export function artifactFromWire<P>(a: WireArtifact<P>, partFrom: (part: P) => Part): Artifact {
  const { metadata, marks } = splitMarks(a.metadata);
  return Artifact.parse({
    artifactId: a.artifactId,
    name: a.name ?? null,
    description: a.description ?? null,
    parts: a.parts.map(partFrom),
    metadata: metadata ?? {},
    extensions: a.extensions,
    ...artifactFieldsOf(marks),
  });
}

/** A wire message as ours: the role and timestamp our marks kept win over the wire's. */
export function messageFromWire<P>(m: WireMessage<P>, partFrom: (part: P) => Part): Message {
  const { metadata, marks } = splitMarks(m.metadata);
  const role = marks[MARK.role];
  const timestamp = marks[MARK.timestamp];
  return compact({
    messageId: m.messageId,
    role: (role === "assistant" || role === "system" ? role : m.role) as Role,
    parts: m.parts.map(partFrom),
    contextId: m.contextId || undefined,
    taskId: m.taskId || undefined,
    metadata,
    extensions: m.extensions,
    referenceTaskIds: m.referenceTaskIds,
    timestamp: timestampOr(timestamp, nowIso),
  });
}

/** A task's state history from our mark; a peer may echo it back damaged, then none. */
export function stateHistoryOf(marker: JsonValue | undefined): StateChange[] {
  const parsed = z.array(StateChange).safeParse(marker ?? []);
  return parsed.success ? parsed.data : [];
}
