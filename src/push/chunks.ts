import type { TaskEvent } from "../protocol/events";

/**
 * Artifact chunks to a webhook, coalesced: the appends to one artifact queued behind its
 * chunk ride in that chunk's delivery, their parts in order. A receiver applying A2A's
 * append semantics (an append adds its parts to the artifact with that id) ends with the
 * same artifact either way. Pure functions: the outbox decides which rows may ride.
 */

/** An artifact update event. */
export type ArtifactUpdateEvent = Extract<TaskEvent, { kind: "artifact-update" }>;

/**
 * Longest an artifact chunk not marked `lastChunk` waits for the chunks after it (ms): the
 * receiver of a long stream still sees its progress about once a second. Any other event
 * (a status update, the last chunk) sends what waits at once.
 */
export const CHUNK_HOLD_MS = 1_000;

/** Most characters of JSON one coalesced delivery gathers from the chunks behind its first. */
export const COALESCED_CHUNK_CHARS = 1024 * 1024;

/** Whether an event's delivery waits for the chunks that may follow it. */
export function waitsForChunks(event: TaskEvent): boolean {
  return event.kind === "artifact-update" && !event.lastChunk;
}

/**
 * Whether `next` may ride in the delivery that ends with `last` (started by `head`): an
 * append to the same artifact of the same task, with the same event metadata, after a
 * chunk not marked last. Anything else (a status update above all) ends the delivery, so
 * nothing is ever reordered past it.
 * @example
 * continues(head, head, next); // true for the next append to head's artifact
 */
export function continues(
  head: ArtifactUpdateEvent,
  last: ArtifactUpdateEvent,
  next: TaskEvent,
): next is ArtifactUpdateEvent {
  return (
    !last.lastChunk &&
    next.kind === "artifact-update" &&
    next.append &&
    next.taskId === head.taskId &&
    next.artifact.artifactId === head.artifact.artifactId &&
    JSON.stringify(next.metadata) === JSON.stringify(head.metadata)
  );
}

/** Characters of JSON an update adds to a coalesced delivery: its parts. */
export function addedChars(event: ArtifactUpdateEvent): number {
  return event.artifact.parts.reduce((n, part) => n + JSON.stringify(part).length + 1, 0);
}

/**
 * One update standing for `head` and the appends after it: head's artifact (its id, name
 * and metadata; an append contributes only its parts, as the task's own store applies it)
 * with every part in order, head's `append`, and the last chunk's `lastChunk`.
 * @example
 * mergeChunks(first, [second, third]).artifact.parts; // first's, second's, third's parts
 */
export function mergeChunks(
  head: ArtifactUpdateEvent,
  rest: readonly ArtifactUpdateEvent[],
): ArtifactUpdateEvent {
  if (rest.length === 0) return head;
  return {
    ...head,
    artifact: {
      ...head.artifact,
      parts: [...head.artifact.parts, ...rest.flatMap((e) => e.artifact.parts)],
    },
    lastChunk: rest[rest.length - 1]?.lastChunk ?? head.lastChunk,
  };
}
