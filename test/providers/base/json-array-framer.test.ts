import { describe, expect, it } from "vitest";
import { jsonArrayFramer } from "../../../src/providers/base/json-array-framer";
import type { Frame } from "../../../src/providers/base/sse";
import { fixtureText, seededRandom } from "../fake-provider";

/** Feeds text in the given pieces and returns the frames' data. */
function frames(pieces: readonly string[]): string[] {
  const seen: Frame[] = [];
  const framer = jsonArrayFramer((frame) => seen.push(frame));
  for (const piece of pieces) framer.feed(piece);
  framer.flush();
  for (const frame of seen) expect(frame.event).toBeUndefined();
  return seen.map((frame) => frame.data);
}

function randomPieces(text: string, seed: number, max: number): string[] {
  const random = seededRandom(seed);
  const pieces: string[] = [];
  for (let at = 0; at < text.length; ) {
    const size = 1 + Math.floor(random() * max);
    pieces.push(text.slice(at, at + size));
    at += size;
  }
  return pieces;
}

const TRICKY = `[{"a":"}]{[,\\"\\\\","b":[1,{"c":"x"}]}\n,\r\n{"d":"\\u007d é 🙂"}\n]`;

describe("JSON-array framing (Gemini streamGenerateContent without alt=sse)", () => {
  it("gives one frame per element of the recorded array bodies, whatever the pieces", () => {
    for (const path of [
      "gemini/stream-json-array-no-alt-sse.json",
      "gemini/stream-json-array-function-call-with-id.json",
    ]) {
      const text = fixtureText(path);
      const expected = (JSON.parse(text) as unknown[]).map((element) => element);
      const whole = frames([text]);
      expect(whole.map((data) => JSON.parse(data))).toEqual(expected);
      for (const seed of [1, 2, 3]) {
        for (const max of [1, 5, 40]) expect(frames(randomPieces(text, seed, max))).toEqual(whole);
      }
    }
  });

  it("keeps braces, brackets, commas and escaped quotes inside strings", () => {
    const expected = [`{"a":"}]{[,\\"\\\\","b":[1,{"c":"x"}]}`, `{"d":"\\u007d é 🙂"}`];
    expect(frames([TRICKY])).toEqual(expected);
    // Every split point, so an escape or a quote lands on a boundary at least once.
    for (let cut = 0; cut <= TRICKY.length; cut++) {
      expect(frames([TRICKY.slice(0, cut), TRICKY.slice(cut)])).toEqual(expected);
    }
    expect(JSON.parse(expected[0] as string)).toEqual({ a: '}]{[,"\\', b: [1, { c: "x" }] });
  });

  it("frames a body that is one object (a generateContent answer or an error)", () => {
    const error = '{\n  "error": {"code": 503, "status": "UNAVAILABLE"}\n}\n';
    expect(frames(randomPieces(error, 9, 3))).toEqual([error.trim()]);
  });

  it("hands on stray text instead of hiding it, and drops an object cut off at the end", () => {
    expect(frames(["<html>Bad Gateway</html>"])).toEqual(["<html>Bad Gateway</html>"]);
    expect(frames(['[{"a":1},', ' {"b": "unfinished'])).toEqual(['{"a":1}']);
  });
});
