import { describe, expect, it } from "vitest";
import { Artifact, Artifacts } from "../../src/protocol/artifact";
import { Parts } from "../../src/protocol/part";
import { fullArtifact, wire } from "./fixtures";

const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const EVERY_KEY = [
  "actionId",
  "artifactId",
  "description",
  "kind",
  "mediaType",
  "metadata",
  "name",
  "parts",
  "timestamp",
  "uri",
];

describe("Artifact (D1)", () => {
  it("D1 an empty artifact has an id, no parts, {} metadata, kind result and null descriptors", () => {
    const a = Artifacts.create();
    expect(a.artifactId).toMatch(UUID);
    expect(a.parts).toEqual([]);
    expect(a.metadata).toEqual({});
    expect(a.timestamp).toMatch(ISO_UTC);
    expect(a.kind).toBe("result");
    expect(a.name).toBeNull();
    expect(a.description).toBeNull();
    expect(a.uri).toBeNull();
    expect(a.mediaType).toBeNull();
    expect(a.actionId).toBeNull();
  });

  it("D1 ids are unique and defaults are not shared", () => {
    const a = Artifacts.create();
    const b = Artifacts.create();
    expect(a.artifactId).not.toBe(b.artifactId);
    a.parts.push(Parts.text("x"));
    a.metadata.k = 1;
    expect(b.parts).toEqual([]);
    expect(b.metadata).toEqual({});
  });

  it("D1 kind is free-form but not empty", () => {
    expect(Artifacts.create({ kind: "chart/v2" }).kind).toBe("chart/v2");
    expect(Artifact.safeParse({ kind: "" }).success).toBe(false);
  });
});

describe("helpers (D2)", () => {
  it("D2 addPart, addText and forAction chain on the same artifact", () => {
    const a = Artifacts.create({ name: "answer" });
    const out = Artifacts.forAction(
      Artifacts.addText(Artifacts.addPart(a, Parts.data({ n: 1 })), "42"),
      "act-1",
    );
    expect(out).toBe(a);
    expect(a.parts).toStrictEqual([
      { type: "data", content: { n: 1 } },
      { type: "text", content: "42" },
    ]);
    expect(a.actionId).toBe("act-1");
  });
});

describe("deserialization (D3)", () => {
  it("D3 every key is emitted, null descriptors included", () => {
    const json = wire(Artifacts.create()) as Record<string, unknown>;
    expect(Object.keys(json).sort()).toEqual(EVERY_KEY);
    for (const k of ["name", "description", "uri", "mediaType", "actionId"]) {
      expect(json[k]).toBeNull();
    }
  });

  it("D3 missing id, timestamp and kind are generated on read", () => {
    const a = Artifact.parse({ parts: [{ type: "json", content: [1] }] });
    expect(a.artifactId).toMatch(UUID);
    expect(a.timestamp).toMatch(ISO_UTC);
    expect(a.kind).toBe("result");
    expect(a.parts).toStrictEqual([{ type: "data", content: [1] }]);
    expect(Object.keys(a).sort()).toEqual(EVERY_KEY);
  });

  it("D3 a full artifact survives JSON and Artifact.parse", () => {
    const a = fullArtifact();
    expect(Artifact.parse(wire(a))).toEqual(a);
  });

  it("D3 bad fields are reported by name", () => {
    const result = Artifact.safeParse({ name: 3, metadata: [], timestamp: "yesterday" });
    expect(result.success).toBe(false);
    expect(result.error?.issues.map((i) => i.path.join(".")).sort()).toEqual([
      "metadata",
      "name",
      "timestamp",
    ]);
  });
});
