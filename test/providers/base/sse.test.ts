import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import {
  decodeBody,
  type Frame,
  parseLoose,
  type StreamDecoder,
} from "../../../src/providers/base/sse";
import type { StreamEvent } from "../../../src/providers/base/types";
import { FakeProvider, fixtureBytes, fixturePaths } from "../fake-provider";

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

describe("the stall watchdog (H7), one timer per body", () => {
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  /** A body sending `count` small SSE events, `gapMs` apart. */
  function trickle(count: number, gapMs: number): ReadableStream<Uint8Array> {
    const bytes = new TextEncoder().encode("data: x\n\n");
    let sent = 0;
    return new ReadableStream<Uint8Array>({
      async pull(controller) {
        if (sent > 0) await sleep(gapMs);
        if (sent++ === count) controller.close();
        else controller.enqueue(bytes);
      },
    });
  }
  const decode = async (body: ReadableStream<Uint8Array>, stallMs: number, consumerMs = 0) => {
    const seen: Frame[] = [];
    for await (const _ of decodeBody(body, framesOf(seen), { provider: "test", stallMs })) {
      if (consumerMs) await sleep(consumerMs);
    }
    return seen.length;
  };
  // The clock is Vitest's: each timer fires in order of its time, however loaded the
  // machine (with the real one, a 25 ms gap once took longer than the 60 ms watchdog).
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });
  /** Decodes `body` while the fake clock runs every timer the reads and the watchdog set. */
  const read = async (body: ReadableStream<Uint8Array>, stallMs: number, consumerMs = 0) => {
    const decoded = decode(body, stallMs, consumerMs);
    decoded.catch(() => {});
    await vi.runAllTimersAsync();
    return decoded;
  };

  it("H7: reads that each come within stallMs never stall, however long the whole stream takes", async () => {
    expect(await read(trickle(8, 25), 60)).toBe(8);
  });

  it("H7: the consumer's time between reads is not a stall", async () => {
    expect(await read(trickle(3, 0), 40, 90)).toBe(3);
  });

  it("H7: a read waiting longer than stallMs fails as a timeout", async () => {
    await expect(read(trickle(3, 150), 40)).rejects.toMatchObject({
      name: "ProviderError",
      kind: "timeout",
    });
  });
});

describe("a frame read loosely", () => {
  it("is its JSON when it is JSON, else the text itself", () => {
    expect(parseLoose('{"error":{"message":"busy"}}')).toEqual({ error: { message: "busy" } });
    expect(parseLoose("[DONE]")).toBe("[DONE]");
    expect(parseLoose("upstream overloaded")).toBe("upstream overloaded");
  });
});
