import { describe, expect, it } from "vitest";
import { decodeBody, type Frame, type StreamDecoder } from "../../src/providers/sse";
import type { StreamEvent } from "../../src/providers/types";
import { FakeProvider, fixtureBytes, fixturePaths } from "./fake-provider";

/** A decoder that turns every frame into a text delta of its data, to see the framing. */
function framesOf(frames: Frame[]): StreamDecoder {
  return {
    frame: (frame: Frame, out: StreamEvent[]) => {
      frames.push(frame);
      out.push({ type: "text_delta", text: frame.data });
    },
    end: () => {},
  };
}

async function frames(path: string, seed: number, maxChunk: number): Promise<Frame[]> {
  const fake = new FakeProvider({ seed, maxChunk }).reply({ fixture: path });
  const response = await fake.fetch("https://fake.test/");
  const seen: Frame[] = [];
  for await (const _ of decodeBody(response.body as ReadableStream<Uint8Array>, framesOf(seen), {
    provider: "test",
    stallMs: 0,
  })) {
    // drain
  }
  return seen;
}

describe("SSE framing of recorded streams", () => {
  it("reads every recorded fixture from test/fixtures/providers", () => {
    expect(fixturePaths().length).toBeGreaterThan(100);
    expect(fixtureBytes("gemini/text.sse").length).toBeGreaterThan(100);
  });

  it("a misspelt fixture fails at once, naming it", () => {
    expect(() => fixtureBytes("gemini/nope.sse")).toThrow(/no fixture "gemini\/nope.sse"/);
    expect(() => new FakeProvider().reply({ fixture: "gemini/nope.sse" })).toThrow(
      /no fixture "gemini\/nope.sse" in test\/fixtures\/providers/,
    );
  });

  it("gives the same frames whatever the network chunking (CRLF, no final blank line, UTF-8 split)", async () => {
    for (const path of [
      "gemini/text.sse",
      "anthropic/tool-use-split-args.sse",
      "anthropic/text-after-tool-results.sse",
      "openai-compatible/openrouter-comments-and-inline-error.sse",
    ]) {
      const whole = await frames(path, 1, 1 << 20);
      expect(whole.length).toBeGreaterThan(0);
      for (const seed of [2, 3, 4]) expect(await frames(path, seed, 7)).toEqual(whole);
      for (const frame of whole) expect(frame.data).not.toMatch(/\r|\uFFFD/);
    }
  });
});
