import { beforeEach, describe, expect, it } from "vitest";
import { generate, streamEvents } from "../../src/providers/base/collect";
import { ProviderError } from "../../src/providers/base/errors";
import type { StreamEvent } from "../../src/providers/base/types";
import { fakeModel } from "../../src/testing/index";
import { streamMessage } from "../harness/llm/stream";
import { harness } from "../harness/llm/worker";

type Json = Record<string, unknown>;

beforeEach(() => {
  harness.fetch = null;
  harness.requests = [];
  harness.toolRuns = [];
  harness.holdTools = false;
  harness.toolThrows = null;
  harness.toolOutput = null;
});

describe("fakeModel (edgelink/testing): a model for users' agent tests", () => {
  it("answers with its queued replies in order, streamed word by word, and records the requests", async () => {
    const model = fakeModel(["The capital is Paris.", "Second."]);
    const events: StreamEvent[] = [];
    for await (const event of streamEvents(model, {
      messages: [{ role: "user", content: "Capital of France?" }],
    })) {
      events.push(event);
    }
    expect(events.filter((e) => e.type === "text_delta").map((e) => e.text)).toEqual([
      "The ",
      "capital ",
      "is ",
      "Paris.",
    ]);
    expect(events.at(-1)).toMatchObject({ type: "message_end", stopReason: "stop" });
    const second = await generate(model, { messages: [{ role: "user", content: "Again" }] });
    expect(second.text).toBe("Second.");
    expect(model.requests.map((r) => r.messages.at(-1))).toMatchObject([
      { type: "message", content: ["Capital of France?"] },
      { type: "message", content: ["Again"] },
    ]);
  });

  it("makes tool calls, computes replies from the request, throws queued errors, and says when it has no reply left", async () => {
    const model = fakeModel([
      { text: "Looking it up. ", toolCalls: [{ name: "lookup", input: { q: "x" } }] },
      (request) => `You offered ${request.tools.length} tools`,
      new ProviderError({ provider: "fake", kind: "http", status: 503, message: "overloaded" }),
    ]);
    const tools = [{ name: "lookup", description: "Looks up", parameters: { type: "object" } }];
    const first = await generate(model, { messages: [{ role: "user", content: "Hi" }], tools });
    expect(first.text).toBe("Looking it up. ");
    expect(first.stopReason).toBe("tool_calls");
    expect(first.toolCalls).toEqual([
      { id: "call_1", name: "lookup", arguments: '{"q":"x"}', input: { q: "x" } },
    ]);
    const second = await generate(model, { messages: [{ role: "user", content: "Hi" }], tools });
    expect(second.text).toBe("You offered 1 tools");
    await expect(generate(model, { messages: [{ role: "user", content: "Hi" }] })).rejects.toThrow(
      "overloaded",
    );
    await expect(
      generate(model.reply(), { messages: [{ role: "user", content: "Hi" }] }),
    ).rejects.toThrow("fakeModel: no reply queued for call 4");
    expect(model.reply("late").requests).toHaveLength(4);
  });

  it("drives a real agent turn: the agent runs the tool the fake model called, then streams its answer", async () => {
    const model = fakeModel([
      { toolCalls: [{ name: "get_capital", input: { country: "France" } }] },
      "The capital of France is Paris.",
    ]);
    harness.model = model;
    const events = await streamMessage("What is the capital of France?");
    const statuses = events.flatMap((e) => (e.statusUpdate ? [e.statusUpdate as Json] : []));
    expect(statuses.at(-1)?.status).toMatchObject({ state: "TASK_STATE_COMPLETED" });
    expect(harness.toolRuns).toEqual(["France"]);
    const updates = events.flatMap((e) => (e.artifactUpdate ? [e.artifactUpdate as Json] : []));
    const artifacts = updates.map((u) => u.artifact as Json);
    const responseId = artifacts.find((a) => a.name === "response")?.artifactId;
    const answer = artifacts
      .filter((a) => a.artifactId === responseId)
      .flatMap((a) => (a.parts as { text?: string }[]).map((p) => p.text ?? ""))
      .join("");
    expect(answer).toBe("The capital of France is Paris.");
    // The second call carried the tool's output back to the model.
    expect(model.requests).toHaveLength(2);
    expect(model.requests[1]?.messages.at(-1)).toMatchObject({
      type: "function_call_output",
      output: "Paris",
    });
  });
});
