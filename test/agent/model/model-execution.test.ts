import { describe, expect, it } from "vitest";
import {
  answerOrphanCalls,
  INTERRUPTED_CALL_OUTPUT,
} from "../../../src/agent/model/model-execution";
import { Item } from "../../../src/history/items";

const items = (list: object[]) => list.map((i) => Item.parse(i));

describe("a history whose tool calls lack results (a task canceled mid-tool)", () => {
  it("gets an error result per unanswered call, right after its turn; answered calls are untouched", () => {
    const history = items([
      { type: "message", role: "user", content: "Weather in Paris and Rome?" },
      { type: "function_call", name: "weather", callId: "a", arguments: '{"city":"Paris"}' },
      { type: "function_call", name: "weather", callId: "b", arguments: '{"city":"Rome"}' },
      { type: "function_call_output", name: "weather", callId: "a", output: "sunny" },
      { type: "message", role: "user", content: "Never mind. Hi!" },
    ]);
    const sent = answerOrphanCalls(history);
    expect(sent.map((i) => [i.type, "callId" in i ? i.callId : null])).toEqual([
      ["message", null],
      ["function_call", "a"],
      ["function_call", "b"],
      ["function_call_output", "a"],
      ["function_call_output", "b"],
      ["message", null],
    ]);
    expect(sent[4]).toMatchObject({
      isError: true,
      output: INTERRUPTED_CALL_OUTPUT,
      name: "weather",
    });
    // The stored history is not changed.
    expect(history).toHaveLength(5);
  });

  it("answers calls left at the very end, and leaves a complete history as it is", () => {
    const complete = items([
      { type: "message", role: "user", content: "2+2?" },
      { type: "function_call", name: "add", callId: "c", arguments: "{}" },
      { type: "function_call_output", name: "add", callId: "c", output: "4" },
    ]);
    expect(answerOrphanCalls(complete)).toEqual(complete);
    const cut = complete.slice(0, 2);
    expect(answerOrphanCalls(cut).at(-1)).toMatchObject({
      type: "function_call_output",
      callId: "c",
      isError: true,
    });
  });
});

describe("an agent's model settings", () => {
  it("are checked when the agent is defined, naming the bad field", async () => {
    const { resolveAgent } = await import("../../../src/agent/definition");
    const card = { name: "A", description: "B" };
    expect(() => resolveAgent({ card, modelSettings: { temperature: 7 } })).toThrow(
      /modelSettings\.temperature/,
    );
    expect(() => resolveAgent({ card, modelSettings: { maxTokens: 0 } })).toThrow(
      /modelSettings\.maxTokens/,
    );
    expect(resolveAgent({ card, modelSettings: { temperature: 0 } }).modelSettings).toEqual({
      temperature: 0,
    });
  });
});
