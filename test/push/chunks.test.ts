import { describe, expect, it } from "vitest";
import { Artifacts } from "../../src/protocol/artifact";
import type { TaskEvent } from "../../src/protocol/events";
import { Parts } from "../../src/protocol/part";
import {
  type ArtifactUpdateEvent,
  continues,
  mergeChunks,
  waitsForChunks,
} from "../../src/push/chunks";

function update(
  text: string,
  over: Partial<ArtifactUpdateEvent> = {},
  artifactId = "a1",
): ArtifactUpdateEvent {
  return {
    kind: "artifact-update",
    taskId: "t1",
    contextId: "c1",
    artifact: Artifacts.create({ artifactId, name: "answer", parts: [Parts.text(text)] }),
    append: true,
    lastChunk: false,
    ...over,
  };
}

const status: TaskEvent = {
  kind: "status-update",
  taskId: "t1",
  contextId: "c1",
  status: { state: "working", message: null, timestamp: new Date(0).toISOString() },
  final: false,
};

describe("artifact chunks coalesced for a webhook (issue 27)", () => {
  it("only appends to the same artifact of the same task continue a delivery, until its last chunk", () => {
    const head = update("a", { append: false });
    expect(continues(head, head, update("b"))).toBe(true);
    expect(continues(head, head, status)).toBe(false);
    expect(continues(head, head, update("b", { append: false }))).toBe(false);
    expect(continues(head, head, update("b", {}, "a2"))).toBe(false);
    expect(continues(head, head, update("b", { taskId: "t2" }))).toBe(false);
    expect(continues(head, head, update("b", { metadata: { k: 1 } }))).toBe(false);
    expect(continues(head, update("b", { lastChunk: true }), update("c"))).toBe(false);
  });

  it("a merged update keeps the first chunk's artifact and append flag, every part in order, and the last chunk's flag", () => {
    const head = update("a", { append: false });
    const merged = mergeChunks(head, [update("b"), update("c", { lastChunk: true })]);
    expect(merged.artifact.parts).toEqual([Parts.text("a"), Parts.text("b"), Parts.text("c")]);
    expect(merged).toMatchObject({ append: false, lastChunk: true });
    expect(merged.artifact.name).toBe("answer");
    expect(head.artifact.parts).toHaveLength(1); // the head is not changed
    expect(mergeChunks(head, [])).toBe(head);
  });

  it("only a chunk not marked last waits for the chunks after it", () => {
    expect(waitsForChunks(update("a"))).toBe(true);
    expect(waitsForChunks(update("a", { lastChunk: true }))).toBe(false);
    expect(waitsForChunks(status)).toBe(false);
  });
});
