import { describe, expect, it } from "vitest";
import { chatFrames } from "../../src/protocol/chat-stream";
import { SSE_KEEP_ALIVE, sseFrame } from "../../src/protocol/sse";

// The bytes every stream wrote before there was one writer; a change here is a change on
// the wire for A2A streams, the chat view and declared stream endpoints.
describe("the SSE frame writer", () => {
  it("writes id, then event, then one data line, each only when given", () => {
    expect(sseFrame({ a: 1 })).toBe('data: {"a":1}\n\n');
    expect(sseFrame({ a: 1 }, 7)).toBe('id: 7\ndata: {"a":1}\n\n');
    expect(sseFrame({ a: 1 }, 0)).toBe('id: 0\ndata: {"a":1}\n\n');
    expect(sseFrame({ error: {} }, undefined, "error")).toBe(
      'event: error\ndata: {"error":{}}\n\n',
    );
    expect(sseFrame({ a: 1 }, 3, "chunk")).toBe('id: 3\nevent: chunk\ndata: {"a":1}\n\n');
    // A line break inside a value stays escaped: one data line carries the whole value.
    expect(sseFrame("two\nlines")).toBe('data: "two\\nlines"\n\n');
    expect(SSE_KEEP_ALIVE).toBe(": keep-alive\n\n");
  });

  it("a log event's chat frames carry its id on the last frame only (N7)", () => {
    const frames = chatFrames(
      [
        { event: "chunk", data: { content: "hi" } },
        { event: "done", data: { state: "completed" } },
      ],
      12,
    );
    expect(frames).toBe(
      'event: chunk\ndata: {"content":"hi"}\n\nid: 12\nevent: done\ndata: {"state":"completed"}\n\n',
    );
    expect(chatFrames([], 12)).toBe("");
  });
});
