import { describe, expect, it } from "vitest";
import { parsePath, StreamedArgs } from "../../../src/providers/gemini/gemini-partial-args";

/** Applies pieces one call at a time, as separate chunks would, and returns the deltas. */
function stream(chunks: unknown[][]): { deltas: string[]; args: StreamedArgs } {
  const args = new StreamedArgs();
  const deltas = chunks.map((chunk) => args.apply(chunk));
  deltas.push(args.finish());
  return { deltas, args };
}

describe("G13: Gemini streamed function-call arguments (partialArgs)", () => {
  it("rebuilds the recorded read_screen call: a string in two pieces, then the end", () => {
    const { deltas, args } = stream([
      [{ jsonPath: "$.id", stringValue: "A", willContinue: true }],
      [{ jsonPath: "$.id", stringValue: "" }],
    ]);
    expect(deltas.join("")).toBe('{"id":"A"}');
    expect(deltas.filter(Boolean).length).toBeGreaterThan(1);
    expect(args.value).toEqual({ id: "A" });
    expect(args.arguments).toBe('{"id":"A"}');
  });

  it("writes nested objects, arrays, numbers, booleans, null and escapes in order", () => {
    const { deltas, args } = stream([
      [{ jsonPath: "$.name", stringValue: "Al", willContinue: true }],
      [{ jsonPath: "$.name", stringValue: 'ice "A" \\ 🙂\n' }],
      [
        { jsonPath: "$.age", numberValue: 30 },
        { jsonPath: "$.address.street", stringValue: "123 Main St" },
      ],
      [{ jsonPath: "$.address.geo.lat", numberValue: 37.7 }],
      [{ jsonPath: "$.address.city", stringValue: "San ", willContinue: true }],
      [{ jsonPath: "$.address.city", stringValue: "Francisco" }],
      [{ jsonPath: "$.tags[0]", stringValue: "a" }],
      [{ jsonPath: "$.tags[1]", stringValue: "b", willContinue: true }],
      [{ jsonPath: "$.tags[1]", stringValue: "c" }],
      [{ jsonPath: "$.items[0].ok", boolValue: true }],
      [{ jsonPath: "$.items[1].ok", boolValue: false }],
      [{ jsonPath: "$['odd key']", nullValue: null }],
    ]);
    const expected = {
      name: 'Alice "A" \\ 🙂\n',
      age: 30,
      address: { street: "123 Main St", geo: { lat: 37.7 }, city: "San Francisco" },
      tags: ["a", "bc"],
      items: [{ ok: true }, { ok: false }],
      "odd key": null,
    };
    expect(args.value).toEqual(expected);
    const text = deltas.join("");
    expect(JSON.parse(text)).toEqual(expected);
    expect(args.arguments).toBe(text);
  });

  it("a call with no pieces has the arguments {}", () => {
    const { deltas, args } = stream([]);
    expect(deltas.join("")).toBe("{}");
    expect(args.arguments).toBe("{}");
  });

  it("pieces out of order still give the right arguments (the object wins over the text)", () => {
    const { deltas, args } = stream([
      [{ jsonPath: "$.a.x", numberValue: 1 }],
      [{ jsonPath: "$.b", numberValue: 2 }],
      [{ jsonPath: "$.a.y", numberValue: 3 }],
    ]);
    expect(args.value).toEqual({ a: { x: 1, y: 3 }, b: 2 });
    expect(JSON.parse(args.arguments)).toEqual({ a: { x: 1, y: 3 }, b: 2 });
    // The streamed preview went wrong (a repeated key), which is why the object is used.
    expect(deltas.join("")).not.toBe(args.arguments);
  });

  it("ignores pieces it cannot place rather than corrupting the arguments", () => {
    const { args } = stream([
      [{ jsonPath: "$..bad", stringValue: "x" }, { stringValue: "no path" }, "junk"],
      [{ jsonPath: "$.ok", stringValue: "y" }],
    ]);
    expect(args.arguments).toBe('{"ok":"y"}');
  });

  it("reads JSON paths", () => {
    expect(parsePath("$.a.b[2]['c d'][\"e\"]")).toEqual(["a", "b", 2, "c d", "e"]);
    expect(parsePath("a.b")).toEqual(["a", "b"]);
    expect(parsePath("$")).toEqual([]);
    expect(parsePath("$.a[x]")).toBeNull();
  });
});
