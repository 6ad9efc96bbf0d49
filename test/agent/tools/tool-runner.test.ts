import { describe, expect, it } from "vitest";
import { z } from "zod";
import { type Tools, tool } from "../../../src/agent/tool";
import { runToolCalls, type ToolRunOptions } from "../../../src/agent/tools/tool-runner";
import type { ToolCall } from "../../../src/providers/base/types";

const call = (name: string, input: Record<string, unknown> | null, id = `c_${name}`): ToolCall => ({
  id,
  name,
  arguments: input === null ? '{"a":' : JSON.stringify(input),
  input: input as ToolCall["input"],
});

const order: string[] = [];
const tools = {
  add: tool({
    description: "Adds",
    input: z.object({ a: z.number(), b: z.number() }),
    run: ({ a, b }) => a + b,
  }),
  slow: tool({
    description: "Waits",
    input: z.object({ ms: z.number() }),
    run: async ({ ms }, { signal }) => {
      order.push(`start ${ms}`);
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(resolve, ms);
        signal.addEventListener("abort", () => {
          clearTimeout(timer);
          reject(signal.reason);
        });
      });
      order.push(`end ${ms}`);
      return { waited: ms };
    },
  }),
  boom: tool({
    description: "Throws",
    input: z.object({}),
    run: () => {
      throw new Error("kaput");
    },
  }),
};

const options = (over: Partial<ToolRunOptions> = {}): ToolRunOptions => ({
  signal: new AbortController().signal,
  timeoutMs: 1000,
  maxCallsPerTurn: 16,
  parallel: true,
  ...over,
});

describe("running a model turn's tool calls", () => {
  it("H14: unknown tools, invalid or cut-off arguments and exceptions become error results; the rest run", async () => {
    const results = await runToolCalls(
      [
        call("add", { a: 2, b: 40 }),
        call("nope", {}),
        call("add", { a: "x" }, "c_bad"),
        call("add", null, "c_cut"),
        call("boom", {}),
      ],
      tools,
      options(),
    );
    expect(results).toMatchObject([
      { toolCallId: "c_add", name: "add", content: "42", isError: false, value: 42, threw: false },
      {
        toolCallId: "c_nope",
        name: "nope",
        content: "Unknown tool: nope",
        isError: true,
        threw: false,
      },
      expect.objectContaining({
        toolCallId: "c_bad",
        isError: true,
        content: expect.stringMatching(/^Invalid arguments: a:/),
      }),
      expect.objectContaining({
        toolCallId: "c_cut",
        isError: true,
        content: expect.stringMatching(/not a JSON object/),
      }),
      { toolCallId: "c_boom", name: "boom", content: "kaput", isError: true, threw: true },
    ]);
  });

  it("H12: a tool past its time limit gets a timeout error result and its signal is aborted", async () => {
    const [result] = await runToolCalls(
      [call("slow", { ms: 5000 })],
      tools,
      options({ timeoutMs: 30 }),
    );
    expect(result).toMatchObject({
      toolCallId: "c_slow",
      name: "slow",
      content: "Tool slow timed out after 30 ms",
      isError: true,
      threw: true,
    });
    expect(result?.durationMs).toBeGreaterThanOrEqual(25);
  });

  it("H12: a tool's own timeoutMs overrides the agent's", async () => {
    const quick = { slow: tool({ ...tools.slow, timeoutMs: 20 }) } as Tools;
    const [result] = await runToolCalls(
      [call("slow", { ms: 5000 })],
      quick,
      options({ timeoutMs: 10_000 }),
    );
    expect(result?.content).toBe("Tool slow timed out after 20 ms");
  });

  it("H14: stopOnError off, an exception is an error result and later calls still run", async () => {
    const results = await runToolCalls(
      [call("boom", {}), call("add", { a: 1, b: 1 })],
      tools,
      options({ parallel: false }),
    );
    expect(results.map((r) => [r.isError, r.content])).toEqual([
      [true, "kaput"],
      [false, "2"],
    ]);
  });

  it("H14: stopOnError on, the calls after a throwing tool do not run; an unknown tool does not stop", async () => {
    const ran: string[] = [];
    const results = await runToolCalls(
      [call("nope", {}), call("boom", {}), call("add", { a: 1, b: 1 })],
      tools,
      options({
        stopOnError: true,
        onCall: (c) => ran.push(`call ${c.name}`),
        onResult: (r) => ran.push(`result ${r.name}`),
      }),
    );
    expect(results.map((r) => [r.name, r.isError, r.threw, r.content])).toEqual([
      ["nope", true, false, "Unknown tool: nope"],
      ["boom", true, true, "kaput"],
      ["add", true, false, "Not run: tool boom failed before it"],
    ]);
    // Every call is announced before its result, in order.
    expect(ran).toEqual([
      "call nope",
      "result nope",
      "call boom",
      "result boom",
      "call add",
      "result add",
    ]);
  });

  it("H11: calls beyond the per-turn limit get error results, one per call, and do not run", async () => {
    const calls = [1, 2, 3].map((n) => call("add", { a: n, b: 0 }, `c${n}`));
    const results = await runToolCalls(calls, tools, options({ maxCallsPerTurn: 2 }));
    expect(results.map((r) => [r.toolCallId, r.isError, r.content])).toEqual([
      ["c1", false, "1"],
      ["c2", false, "2"],
      ["c3", true, "Not run: at most 2 tool calls per turn"],
    ]);
  });

  it("H13: parallel calls run concurrently with results in call order; sequential runs one by one", async () => {
    order.length = 0;
    const calls = [call("slow", { ms: 40 }, "a"), call("slow", { ms: 5 }, "b")];
    const parallel = await runToolCalls(calls, tools, options());
    expect(parallel.map((r) => r.toolCallId)).toEqual(["a", "b"]);
    expect(order).toEqual(["start 40", "start 5", "end 5", "end 40"]);
    order.length = 0;
    await runToolCalls(calls, tools, options({ parallel: false }));
    expect(order).toEqual(["start 40", "end 40", "start 5", "end 5"]);
  });

  it("B9: canceling the task rethrows instead of making an error result", async () => {
    const controller = new AbortController();
    const running = runToolCalls(
      [call("slow", { ms: 5000 })],
      tools,
      options({ signal: controller.signal }),
    );
    controller.abort(new Error("canceled"));
    await expect(running).rejects.toThrow("canceled");
  });
});
