import { SELF } from "cloudflare:test";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import type { Agent } from "../../../src/agent/definition";
import { tool } from "../../../src/agent/tool";
import { openai } from "../../../src/providers/openai/openai-chat";
import worker, { harness } from "../../harness/llm/worker";
import { FakeProvider } from "../../providers/fake-provider";
import { parseChat } from "../../support/chat-sse";
import { BASE, rpc } from "../../support/helpers";

type Json = Record<string, unknown>;

let fake: FakeProvider;
const agent = worker.agent as Agent<unknown>;
const defaults = { ...agent };

beforeEach(() => {
  fake = new FakeProvider({ seed: 7, maxChunk: 13 });
  harness.fetch = fake.fetch;
  harness.requests = [];
  harness.toolRuns = [];
  harness.model = openai({
    model: "gpt-4o-mini",
    apiKey: "sk-test",
    baseUrl: "https://fake.test/v1",
  });
  agent.tools = {
    ...defaults.tools,
    get_capital: tool({
      description: "The capital of a country",
      input: z.object({ country: z.string() }),
      approval: () => "Capitals need approval",
      run: ({ country }: { country: string }) => {
        harness.toolRuns.push(country);
        return country === "UK" ? "London" : "Paris";
      },
    }),
  };
});
afterEach(() => {
  Object.assign(agent, defaults);
});

async function chat(body: unknown) {
  const response = await SELF.fetch(`${BASE}/chat`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  return {
    response,
    frames: response.ok ? parseChat(text) : [],
    error: response.ok ? null : (JSON.parse(text) as Json),
  };
}

/** Asks for the UK's capital over chat: get_capital waits for approval. */
async function askCapital() {
  fake.reply({ fixture: "openai-chat/tool-call-split-args.sse" });
  const { frames } = await chat({ message: "What is the capital of the UK?" });
  const approval = frames.find((f) => f.event === "approval");
  if (!approval) throw new Error(`no approval event in ${JSON.stringify(frames)}`);
  const calls = approval.data.calls as { callId: string }[];
  return {
    frames,
    approval,
    callId: calls[0]?.callId as string,
    taskId: approval.data.taskId as string,
  };
}

const violations = (error: Json | null) =>
  ((error?.error as Json)?.details as Json[] | undefined)?.flatMap((d) =>
    ((d.fieldViolations as Json[] | undefined) ?? []).map((v) => v.field),
  ) ?? [];

describe("approvals on the chat endpoint", () => {
  it("N2 N5: the stream shows the request as an approval event (the call, its arguments, reason and deadline) before done input-required", async () => {
    const { frames, approval, taskId } = await askCapital();
    expect(frames.map((f) => f.event).slice(-3)).toEqual(["chunk", "approval", "done"]);
    expect(approval.data).toMatchObject({
      taskId,
      calls: [
        {
          tool: "get_capital",
          arguments: { country: "UK" },
          reason: "Capitals need approval",
          type: "approval",
        },
      ],
      waiting: [],
    });
    expect(typeof (approval.data.calls as Json[])[0]?.deadline).toBe("string");
    expect(frames.at(-1)?.data).toMatchObject({ taskId, state: "input-required" });
    expect(harness.toolRuns).toEqual([]);
  });

  it("N5: a decision body approves the call: it becomes the A2A decision message, the tool runs once and the stream goes on to done", async () => {
    const { callId, taskId } = await askCapital();
    fake.reply({ fixture: "openai-chat/after-tool-result-text.sse" });
    const { response, frames } = await chat({
      taskId,
      decisions: [{ callId, decision: "approve" }],
      messageId: "chat-decision-1",
    });
    expect(response.status).toBe(200);
    const events = frames.map((f) => f.event);
    expect(events).toContain("tool_result");
    expect(frames.at(-1)).toMatchObject({ event: "done", data: { taskId, state: "completed" } });
    expect(harness.toolRuns).toEqual(["UK"]);
    // The decision is an ordinary message of the task's history, over A2A too.
    const task = (await rpc("GetTask", { id: taskId, historyLength: 10 })).body.result as Json;
    const ids = (task.history as Json[]).map((m) => m.messageId);
    expect(ids).toContain("chat-decision-1");
    // Sent again: a retry, nothing runs twice.
    await chat({
      taskId,
      decisions: [{ callId, decision: "approve" }],
      messageId: "chat-decision-1",
    });
    expect(harness.toolRuns).toEqual(["UK"]);
  });

  it("a rejection with a reason: the tool never runs and the model is told why", async () => {
    const { callId, taskId } = await askCapital();
    fake.reply({ fixture: "openai-chat/after-tool-result-text.sse" });
    const { frames } = await chat({
      taskId,
      decisions: [{ callId, decision: "reject", reason: "not today" }],
    });
    expect(frames.at(-1)).toMatchObject({ event: "done", data: { state: "completed" } });
    expect(harness.toolRuns).toEqual([]);
    const told = harness.requests[1]?.messages.find((m) => m.type === "function_call_output");
    expect(told).toMatchObject({ isError: true });
    expect(JSON.stringify(told)).toContain("not today");
  });

  it("bad decision bodies are 400s naming the body's field, and the task keeps waiting", async () => {
    const { callId, taskId } = await askCapital();
    const cases: [Json, string][] = [
      [{ taskId, decisions: [] }, "decisions"],
      [{ taskId, decisions: [{ callId, decision: "maybe" }] }, "decisions[0].decision"],
      [{ taskId, decisions: [{ callId, decision: "approve", extra: 1 }] }, "decisions[0].extra"],
      [{ decisions: [{ callId, decision: "approve" }] }, "taskId"],
      [{ taskId, decisions: [{ callId, decision: "approve" }], message: "hi" }, "message"],
      // Checked by the task: an unknown call, edited arguments that fail the tool's schema.
      [{ taskId, decisions: [{ callId: "nope", decision: "approve" }] }, "decisions[0].callId"],
      [
        { taskId, decisions: [{ callId, decision: "approve", arguments: { country: 7 } }] },
        "decisions[0].arguments.country",
      ],
    ];
    for (const [body, field] of cases) {
      const { response, error } = await chat(body);
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(violations(error), JSON.stringify(error)).toContain(field);
    }
    const task = (await rpc("GetTask", { id: taskId })).body.result as Json;
    expect((task.status as Json).state).toBe("TASK_STATE_INPUT_REQUIRED");
    expect(harness.toolRuns).toEqual([]);
  });
});
