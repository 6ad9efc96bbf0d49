import { describe, expect, it } from "vitest";
import { parseArguments, ToolCallAssembler } from "../../../src/providers/base/assemble";
import type { StreamEvent } from "../../../src/providers/base/types";

describe("tool calls assembled from fragments", () => {
  it("streams a call's arguments and ends it with them whole and parsed", () => {
    const calls = new ToolCallAssembler();
    const out: StreamEvent[] = [];
    calls.start(0, "call_1", "weather", out);
    calls.delta(0, '{"city":', out);
    calls.delta(0, '"Oslo"}', out);
    calls.end(out);
    expect(out.map((e) => e.type)).toEqual([
      "tool_call_start",
      "tool_call_delta",
      "tool_call_delta",
      "tool_call_end",
    ]);
    expect(out[3]).toMatchObject({
      call: {
        id: "call_1",
        name: "weather",
        arguments: '{"city":"Oslo"}',
        input: { city: "Oslo" },
      },
    });
  });

  it("counts the calls started, ended or not, and ignores a repeated start", () => {
    const calls = new ToolCallAssembler();
    const out: StreamEvent[] = [];
    expect(calls.startedCount).toBe(0);
    calls.start(0, "a", "one", out);
    calls.start(0, "a", "one", out);
    calls.end(out, 0);
    calls.start(1, null, "two", out);
    expect(calls.startedCount).toBe(2);
    expect(calls.openCount).toBe(1);
    expect(out.filter((e) => e.type === "tool_call_start")).toHaveLength(2);
  });

  it("reads empty arguments as no arguments and cut-off ones as unusable", () => {
    expect(parseArguments("  ")).toEqual({});
    expect(parseArguments('{"a":')).toBeNull();
    expect(parseArguments("[1]")).toBeNull();
  });
});
