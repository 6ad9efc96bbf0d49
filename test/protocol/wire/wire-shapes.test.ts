import { describe, expect, it } from "vitest";
import type { JsonObject } from "../../../src/protocol/json";
import type { Part } from "../../../src/protocol/part";
import {
  artifactFromWire,
  artifactToWire,
  messageFromWire,
  stateHistoryOf,
} from "../../../src/protocol/wire/wire-shapes";
import { bareArtifact, fullArtifact, fullMessage, ROLES, wire } from "../fixtures";

// A part mapper of neither version: the shared shapes must carry whatever it writes.
const tagTo = (part: Part): JsonObject => ({ tagged: part as unknown as JsonObject });
const tagFrom = (p: unknown): Part => (p as { tagged: Part }).tagged;

describe("the field mapping both wire versions share", () => {
  it("D1 an artifact keeps every field and its parts through any part mapper", () => {
    for (const artifact of [fullArtifact(), bareArtifact()]) {
      const sent = wire(artifactToWire(artifact, tagTo)) as Parameters<typeof artifactFromWire>[0];
      expect(artifactFromWire(sent, tagFrom)).toEqual(artifact);
    }
  });

  it("D1 an artifact's parts go through the mapper it is given, in order", () => {
    const artifact = fullArtifact();
    const sent = artifactToWire(artifact, tagTo) as { parts: JsonObject[] };
    expect(sent.parts).toEqual(artifact.parts.map(tagTo));
  });

  it("a received message keeps the role and timestamp our marks carry", () => {
    for (const role of ROLES) {
      const m = fullMessage(role);
      const sent = {
        messageId: m.messageId,
        role: role === "user" || role === "system" ? "user" : "agent",
        parts: m.parts.map(tagTo),
        contextId: m.contextId,
        taskId: m.taskId,
        metadata: {
          ...m.metadata,
          "edgelink/role": role === "assistant" || role === "system" ? role : null,
          "edgelink/timestamp": m.timestamp,
        },
        extensions: m.extensions,
        referenceTaskIds: m.referenceTaskIds,
      };
      const back = messageFromWire(wire(sent) as typeof sent, tagFrom);
      expect(back.role).toBe(role);
      expect(back.timestamp).toBe(m.timestamp);
      expect(back.parts).toEqual(m.parts);
    }
  });

  it("B13 a damaged state history mark reads as none", () => {
    expect(stateHistoryOf({ not: "a list" })).toEqual([]);
    expect(stateHistoryOf(undefined)).toEqual([]);
  });
});
