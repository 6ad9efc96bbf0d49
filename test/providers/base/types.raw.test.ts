import { createParser } from "eventsource-parser";
import { describe, expect, it } from "vitest";
import { anthropic } from "../../../src/providers/anthropic/anthropic";
import { generate } from "../../../src/providers/base/collect";
import type { Model, ModelRequestInput, StreamEvent } from "../../../src/providers/base/types";
import { gemini } from "../../../src/providers/gemini/gemini";
import { openai } from "../../../src/providers/openai/openai-chat";
import { openaiCompatible } from "../../../src/providers/openai/openai-compatible";
import { openaiResponses } from "../../../src/providers/openai/openai-responses";
import { workersAI } from "../../../src/providers/workers-ai/workers-ai";
import { run } from "../chat-helpers";
import { FakeProvider, fixtureText } from "../fake-provider";

/**
 * G10 G13: `raw: true` in the call options keeps the provider's own payloads, for
 * debugging: each normalized event carries the provider event it was decoded from, and
 * `generate` returns those events in order. Off by default.
 */

const HI: ModelRequestInput = { messages: [{ role: "user", content: "Hi" }] };

/** Every frame of a recorded SSE body, its JSON parsed (or its text, like `[DONE]`). */
function framesOf(fixture: string): unknown[] {
  const frames: unknown[] = [];
  const parser = createParser({
    onEvent: (message) => {
      try {
        frames.push(JSON.parse(message.data));
      } catch {
        frames.push(message.data);
      }
    },
  });
  parser.feed(fixtureText(fixture));
  parser.feed("\n\n");
  return frames;
}

const CASES: { name: string; model: Model; fixture: string }[] = [
  {
    name: "openai chat",
    model: openai({ model: "gpt-4o", apiKey: "k" }),
    fixture: "openai-chat/text-with-usage.sse",
  },
  {
    name: "openai-compatible (vLLM)",
    model: openaiCompatible({ name: "vllm", baseUrl: "https://vllm.test/v1", model: "m" }),
    fixture: "openai-compatible/vllm-text-usage.sse",
  },
  {
    name: "openai responses",
    model: openaiResponses({ model: "gpt-4o", apiKey: "k" }),
    fixture: "openai-responses/text.sse",
  },
  {
    name: "anthropic",
    model: anthropic({ model: "claude-haiku-4-5", apiKey: "k" }),
    fixture: "anthropic/text-short.sse",
  },
  {
    name: "gemini",
    model: gemini({ model: "gemini-2.0-flash", apiKey: "k" }),
    fixture: "gemini/text.sse",
  },
];

describe("raw provider payloads (opt-in)", () => {
  for (const { name, model, fixture } of CASES) {
    it(`G10 G13: ${name}: each event carries its provider event; generate returns them`, async () => {
      const frames = framesOf(fixture);
      const fake = new FakeProvider({ seed: 7, maxChunk: 9 }).reply({ fixture }, { fixture });
      const events = await run(model, HI, { fetch: fake.fetch, raw: true });
      expect(events.length).toBeGreaterThan(0);
      for (const event of events) {
        // Each raw is one recorded frame, as the provider sent it.
        expect(frames).toContainEqual(event.raw);
        if (event.type === "text_delta") {
          expect(JSON.stringify(event.raw)).toContain(JSON.stringify(event.text).slice(1, -1));
        }
      }

      const response = await generate(model, HI, { fetch: fake.fetch, raw: true });
      const raw = response.raw ?? [];
      expect(raw.length).toBeGreaterThan(1);
      // In order, each once: a subsequence of the recorded frames, ending with the last
      // frame that decoded to something (the one that ended the message).
      let at = -1;
      for (const payload of raw) {
        const next = frames.findIndex(
          (f, i) => i > at && JSON.stringify(f) === JSON.stringify(payload),
        );
        expect(next).toBeGreaterThan(at);
        at = next;
      }
      expect(raw.at(-1)).toEqual(events.at(-1)?.raw);
    });
  }

  it("is off by default: no event and no response carries raw", async () => {
    for (const { model, fixture } of CASES) {
      const fake = new FakeProvider().reply({ fixture }, { fixture });
      const events = await run(model, HI, { fetch: fake.fetch });
      expect(events.some((e) => "raw" in e)).toBe(false);
      const response = await generate(model, HI, { fetch: fake.fetch });
      expect("raw" in response).toBe(false);
    }
  });

  it("G13: workers-ai: streamed chunks and a whole (non-streamed) answer both come back raw", async () => {
    const chunks = [
      { response: "Bon" },
      { response: "jour", usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 } },
    ];
    const body = `${chunks.map((c) => `data: ${JSON.stringify(c)}\n\n`).join("")}data: [DONE]\n\n`;
    const streaming = {
      run: async () => new Response(body).body,
    };
    const events = await run(workersAI({ model: "@cf/x/y" }), HI, {
      env: { AI: streaming },
      raw: true,
    });
    const deltas = events.filter(
      (e): e is StreamEvent & { type: "text_delta" } => e.type === "text_delta",
    );
    expect(deltas.map((e) => [e.text, e.raw])).toEqual([
      ["Bon", chunks[0]],
      ["jour", chunks[1]],
    ]);

    const whole = { response: "Bonjour", usage: { prompt_tokens: 3, completion_tokens: 2 } };
    const response = await generate(workersAI({ model: "@cf/x/y" }), HI, {
      env: { AI: { run: async () => whole } },
      raw: true,
    });
    expect(response.text).toBe("Bonjour");
    expect(response.raw).toEqual([whole]);
  });
});
