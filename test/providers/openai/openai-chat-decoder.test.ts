import { describe, expect, it } from "vitest";
import type { StreamEvent } from "../../../src/providers/base/types";
import { openai } from "../../../src/providers/openai/openai-chat";
import { normalizeStop } from "../../../src/providers/openai/openai-chat-decoder";
import { CHUNKINGS, failure, run, stableIds, summarize } from "../chat-helpers";
import { FakeProvider } from "../fake-provider";

/**
 * Stream shapes that no recorded fixture holds but servers do send (NOTES.md): whole tool
 * calls without index, no [DONE], errors inside the stream, refusals, several choices.
 */

const ENV = { OPENAI_API_KEY: "sk-test" };
const HI = { messages: [{ role: "user", content: "Hi" }] };

type Frame = Record<string, unknown> | string;

/** An SSE body: objects as `data: <json>`, strings verbatim (comments, `[DONE]`, events). */
function sse(...frames: Frame[]): string {
  return frames
    .map((frame) =>
      typeof frame === "string" && !frame.startsWith("data:") && !frame.startsWith("event:")
        ? `data: ${frame}\n\n`
        : typeof frame === "string"
          ? `${frame}\n\n`
          : `data: ${JSON.stringify(frame)}\n\n`,
    )
    .join("");
}

const chunk = (delta: Record<string, unknown>, finish: string | null = null, index = 0) => ({
  id: "chatcmpl-1",
  model: "m-1",
  choices: [{ index, delta, finish_reason: finish }],
});

/** Runs a body under every chunking; the events must not depend on it. */
async function decode(body: string): Promise<StreamEvent[]> {
  let first: StreamEvent[] | null = null;
  for (const chunking of CHUNKINGS) {
    const fake = new FakeProvider(chunking).reply({ status: 200, body });
    const events = await run(openai({ model: "gpt-4o" }), HI, { fetch: fake.fetch, env: ENV });
    if (first === null) first = events;
    else expect(stableIds(events)).toEqual(stableIds(first));
  }
  return first ?? [];
}

async function decodeFailure(body: string) {
  const fake = new FakeProvider({ maxChunk: 3 }).reply({ status: 200, body });
  return failure(openai({ model: "gpt-4o" }), HI, { fetch: fake.fetch, env: ENV });
}

describe("end of stream", () => {
  it("no [DONE] after a finish_reason ends normally (some compatible servers omit it)", async () => {
    const s = summarize(
      await decode(
        sse(chunk({ content: "Hi" }), chunk({}, "stop"), {
          id: "chatcmpl-1",
          choices: [],
          usage: { prompt_tokens: 3, completion_tokens: 1 },
        }),
      ),
    );
    expect(s.text).toBe("Hi");
    expect(s.end).toMatchObject({
      stopReason: "stop",
      usage: { promptTokens: 3, completionTokens: 1, totalTokens: 4 },
    });
  });

  it("no [DONE] and no finish_reason: the stream was cut, a retryable `stream` error after the text so far", async () => {
    const { error, events } = await decodeFailure(sse(chunk({ content: "Hel" })));
    expect(error).toMatchObject({ kind: "stream", retryable: true, requestId: "chatcmpl-1" });
    expect(events.map((e) => e.type)).toEqual(["message_start", "text_delta"]);
  });

  it("a 200 with an empty body is a `stream` error, not an empty answer", async () => {
    const { error, events } = await decodeFailure("");
    expect(error.kind).toBe("stream");
    expect(events).toEqual([]);
  });

  it("a connection dropped mid-stream is a retryable network error", async () => {
    const body = sse(chunk({ content: "Hello there" }), chunk({}, "stop"), "[DONE]");
    const fake = new FakeProvider({ maxChunk: 4 }).reply({ status: 200, body, cutAfterBytes: 30 });
    const { error } = await failure(openai({ model: "gpt-4o" }), HI, {
      fetch: fake.fetch,
      env: ENV,
    });
    expect(error).toMatchObject({ kind: "network", retryable: true });
  });

  it("[DONE] without any finish_reason is a stop; anything after [DONE] is ignored", async () => {
    const s = summarize(
      await decode(sse(chunk({ content: "Hi" }), "[DONE]", chunk({ content: "late" }))),
    );
    expect(s.text).toBe("Hi");
    expect(s.end).toMatchObject({ stopReason: "stop", providerStopReason: null, usage: null });
  });
});

describe("errors inside a 200 stream", () => {
  it("a chunk with a top-level error is thrown as `stream` with its code; server errors are retryable", async () => {
    const { error, events } = await decodeFailure(
      sse(chunk({ content: "Hi" }), {
        error: { message: "The server had an error", type: "server_error", code: null },
      }),
    );
    expect(error).toMatchObject({ kind: "stream", code: "server_error", retryable: true });
    expect(error.message).toContain("The server had an error");
    expect(events.map((e) => e.type)).toEqual(["message_start", "text_delta"]);
  });

  it("`event: error` throws even when its data is not JSON", async () => {
    const { error } = await decodeFailure(
      sse(chunk({ content: "Hi" }), "event: error\ndata: upstream exploded"),
    );
    expect(error).toMatchObject({ kind: "stream", retryable: false });
    expect(error.message).toContain("upstream exploded");
  });

  it("a rate limit in the stream is retryable; a plain string error is its message", async () => {
    const limited = await decodeFailure(
      sse({ error: { message: "slow down", type: "requests", code: "rate_limit_exceeded" } }),
    );
    expect(limited.error).toMatchObject({ code: "rate_limit_exceeded", retryable: true });
    const text = await decodeFailure(sse({ error: "model crashed" }));
    expect(text.error.message).toContain("model crashed");
    expect(text.error.retryable).toBe(false);
  });
});

describe("G9: tool-call shapes", () => {
  it("whole calls without index, one per chunk, finish_reason stop (Ollama) → two calls, stop reason tool_calls", async () => {
    const s = summarize(
      await decode(
        sse(
          chunk({
            tool_calls: [
              { id: "call_a", type: "function", function: { name: "a", arguments: '{"x":1}' } },
            ],
          }),
          chunk({
            tool_calls: [
              { id: "call_b", type: "function", function: { name: "b", arguments: "{}" } },
            ],
          }),
          chunk({}, "stop"),
          "[DONE]",
        ),
      ),
    );
    expect(s.calls).toEqual([
      { id: "call_a", name: "a", arguments: '{"x":1}', input: { x: 1 } },
      { id: "call_b", name: "b", arguments: "{}", input: {} },
    ]);
    expect(s.end).toMatchObject({ stopReason: "tool_calls", providerStopReason: "stop" });
  });

  it("whole calls with neither index nor id, one per chunk, are separate calls (a name starts a call)", async () => {
    const s = summarize(
      await decode(
        sse(
          chunk({ tool_calls: [{ function: { name: "a", arguments: '{"x":1}' } }] }),
          chunk({ tool_calls: [{ function: { name: "b", arguments: '{"y":2}' } }] }),
          chunk({}, "tool_calls"),
          "[DONE]",
        ),
      ),
    );
    expect(s.calls.map((c) => [c.name, c.input])).toEqual([
      ["a", { x: 1 }],
      ["b", { y: 2 }],
    ]);
    expect(s.calls[0]?.id).not.toBe(s.calls[1]?.id);
  });

  it("several calls in one delta without index are told apart by position", async () => {
    const s = summarize(
      await decode(
        sse(
          chunk({
            tool_calls: [
              { id: "call_a", function: { name: "a", arguments: "" } },
              { id: "call_b", function: { name: "b", arguments: "" } },
            ],
          }),
          chunk({
            tool_calls: [{ function: { arguments: '{"p":' } }, { function: { arguments: "{}" } }],
          }),
          chunk({ tool_calls: [{ function: { arguments: "1}" } }] }),
          chunk({}, "tool_calls"),
          "[DONE]",
        ),
      ),
    );
    expect(s.calls.map((c) => [c.id, c.name, c.arguments])).toEqual([
      ["call_a", "a", '{"p":1}'],
      ["call_b", "b", "{}"],
    ]);
  });

  it("the same index with a new id is a new call; event indexes count from 0", async () => {
    const events = await decode(
      sse(
        chunk({
          tool_calls: [{ index: 3, id: "call_a", function: { name: "a", arguments: "{}" } }],
        }),
        chunk({
          tool_calls: [{ index: 3, id: "call_b", function: { name: "b", arguments: "{}" } }],
        }),
        chunk({}, "tool_calls"),
        "[DONE]",
      ),
    );
    expect(
      events.flatMap((e) => (e.type === "tool_call_start" ? [[e.index, e.id, e.name]] : [])),
    ).toEqual([
      [0, "call_a", "a"],
      [1, "call_b", "b"],
    ]);
  });

  it("a call without an id gets one; a fragment naming no call adds nothing", async () => {
    const s = summarize(
      await decode(
        sse(
          chunk({ tool_calls: [{ index: 0, function: { name: "a", arguments: "{}" } }] }),
          chunk({ tool_calls: [{ index: 5, function: { arguments: "junk" } }] }),
          chunk({}, "tool_calls"),
          "[DONE]",
        ),
      ),
    );
    expect(s.calls).toHaveLength(1);
    expect(s.calls[0]?.id).toMatch(/^call_/);
    expect(s.calls[0]?.arguments).toBe("{}");
  });

  it("arguments cut off by the token limit are kept verbatim with input null", async () => {
    const s = summarize(
      await decode(
        sse(
          chunk({
            tool_calls: [{ index: 0, id: "c", function: { name: "a", arguments: '{"q":"ab' } }],
          }),
          chunk({}, "length"),
          "[DONE]",
        ),
      ),
    );
    expect(s.calls).toEqual([{ id: "c", name: "a", arguments: '{"q":"ab', input: null }]);
    expect(s.end.stopReason).toBe("length");
  });
});

describe("text, thinking, refusals", () => {
  it("reasoning_content and reasoning are thinking; a delta carrying both counts once", async () => {
    const s = summarize(
      await decode(
        sse(
          chunk({ reasoning_content: "Let me " }),
          chunk({ reasoning: "think." }),
          chunk({ reasoning_content: " Done.", reasoning: " Done." }),
          chunk({ content: "42" }, "stop"),
          "[DONE]",
        ),
      ),
    );
    expect(s.reasoning).toBe("Let me think. Done.");
    expect(s.text).toBe("42");
  });

  it("a refusal is shown as text and stops as content_filter", async () => {
    const s = summarize(
      await decode(
        sse(
          chunk({ role: "assistant", content: null, refusal: "I can't help with that." }),
          chunk({}, "stop"),
          "[DONE]",
        ),
      ),
    );
    expect(s.text).toBe("I can't help with that.");
    expect(s.end).toMatchObject({ stopReason: "content_filter", providerStopReason: "stop" });
  });

  it("only the first choice is read", async () => {
    const s = summarize(
      await decode(
        sse(
          chunk({ content: "A" }, null, 0),
          chunk({ content: "B" }, null, 1),
          chunk({}, "stop"),
          "[DONE]",
        ),
      ),
    );
    expect(s.text).toBe("A");
  });

  it("multi-byte characters survive any split (G13)", async () => {
    const s = summarize(
      await decode(
        sse(chunk({ content: "Grüße 👋🏽 " }), chunk({ content: "日本語" }, "stop"), "[DONE]"),
      ),
    );
    expect(s.text).toBe("Grüße 👋🏽 日本語");
  });
});

describe("G11: stop reasons", () => {
  it("maps the providers' words", () => {
    expect(normalizeStop("stop", false)).toBe("stop");
    expect(normalizeStop("stop", true)).toBe("tool_calls");
    expect(normalizeStop("length", false)).toBe("length");
    expect(normalizeStop("tool_calls", true)).toBe("tool_calls");
    expect(normalizeStop("function_call", true)).toBe("tool_calls");
    expect(normalizeStop("content_filter", false)).toBe("content_filter");
    expect(normalizeStop("error", false)).toBe("error");
    expect(normalizeStop("eos", false)).toBe("stop");
    expect(normalizeStop("something_new", false)).toBe("other");
    expect(normalizeStop(null, false)).toBe("stop");
  });
});
