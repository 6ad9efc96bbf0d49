import { describe, expect, it } from "vitest";
import { compact, JsonObject, JsonValue, newId, nowIso } from "../../src/protocol/json";
import { MARK, splitMarks, withMarks } from "../../src/protocol/markers";

describe("json helpers", () => {
  it("compact drops undefined keys only, in order, into a copy (the object itself when none)", () => {
    const obj = { b: null, a: undefined, c: 0, d: "", e: false, f: undefined };
    const out = compact(obj);
    expect(Object.keys(out)).toEqual(["b", "c", "d", "e"]);
    expect(out).toEqual({ b: null, c: 0, d: "", e: false });
    // The given object is left as it was (issue 10: deleting keys slowed every render).
    expect(Object.keys(obj)).toEqual(["b", "a", "c", "d", "e", "f"]);
    const clean = { x: 1, y: [undefined] };
    expect(compact(clean)).toBe(clean);
    // Inherited keys are not copied; an undefined first key keeps the rest.
    const child = Object.assign(Object.create({ inherited: 1 }), { first: undefined, own: 2 });
    expect(compact(child)).toEqual({ own: 2 });
    expect(Object.keys(compact(child))).toEqual(["own"]);
  });

  it("newId is a v4 UUID with an optional prefix, and unique", () => {
    expect(newId()).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
    expect(newId("call_")).toMatch(/^call_[0-9a-f-]{36}$/);
    expect(new Set(Array.from({ length: 100 }, () => newId())).size).toBe(100);
  });

  it("nowIso is ISO-8601 UTC with milliseconds (A2A §5.6.1)", () => {
    const ts = nowIso();
    expect(ts).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(Math.abs(Date.parse(ts) - Date.now())).toBeLessThan(5_000);
  });

  it("JsonValue accepts nested JSON and refuses what JSON cannot hold", () => {
    const v = { a: [1, "two", null, { b: true }] };
    expect(JsonValue.parse(v)).toEqual(v);
    for (const bad of [undefined, () => 1, Symbol("s"), new Map(), { a: undefined }]) {
      expect(JsonValue.safeParse(bad).success).toBe(false);
    }
    expect(JsonObject.safeParse([1]).success).toBe(false);
    expect(JsonObject.safeParse("s").success).toBe(false);
  });
});

describe("edgelink markers", () => {
  it("all marker keys live under the edgelink/ prefix", () => {
    for (const key of Object.values(MARK)) expect(key).toMatch(/^edgelink\/[a-zA-Z]+$/);
  });

  it("withMarks merges user metadata with the defined marks", () => {
    expect(withMarks({ a: 1 }, { [MARK.part]: "tool_call", [MARK.role]: undefined })).toEqual({
      a: 1,
      "edgelink/part": "tool_call",
    });
  });

  it("withMarks gives undefined when there is nothing to send", () => {
    expect(withMarks(undefined, {})).toBeUndefined();
    expect(withMarks({}, { [MARK.role]: undefined })).toBeUndefined();
  });

  it("withMarks does not change the user's metadata object", () => {
    const user = { a: 1 };
    withMarks(user, { [MARK.part]: "x" });
    expect(user).toEqual({ a: 1 });
  });

  it("splitMarks separates our keys from the user's", () => {
    expect(splitMarks({ a: 1, "edgelink/part": "error", "other/x": 2 })).toEqual({
      metadata: { a: 1, "other/x": 2 },
      marks: { "edgelink/part": "error" },
    });
  });

  it("splitMarks gives undefined user metadata when only marks (or nothing) came", () => {
    expect(splitMarks({ "edgelink/role": "system" })).toEqual({
      metadata: undefined,
      marks: { "edgelink/role": "system" },
    });
    expect(splitMarks(undefined)).toEqual({ metadata: undefined, marks: {} });
  });
});
