import { env, SELF } from "cloudflare:test";
import { beforeEach, describe, expect, it } from "vitest";
import { approve, decisionParts, pendingCalls, reject } from "../../../src/client/approvals";
import { connect } from "../../../src/client/connect";
import type { Task } from "../../../src/protocol/task";
import { openai } from "../../../src/providers/openai/openai-chat";
import { type Env, harness } from "../../harness/agents/worker";
import { FakeProvider } from "../../providers/fake-provider";
import { userMessage } from "../../support/helpers";

type Json = Record<string, unknown>;
const workerEnv = env as unknown as Env;
const RELAY = "http://relay.test";
const CALL_ID = "call_ZR5UUuTt3pf61kjwAJIYdVMj"; // the recorded stream's call

async function rpc(method: string, params: Json): Promise<Json> {
  const response = await SELF.fetch(`${RELAY}/`, {
    method: "POST",
    headers: { "Content-Type": "application/json", "A2A-Version": "1.0" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  return (await response.json()) as Json;
}

/** The parent's caller, with the typed client (what a person's app would use). */
const caller = () => connect(`${RELAY}/`, { fetch: (input, init) => SELF.fetch(input, init) });
/** The child agent, seen directly. */
const child = () =>
  connect("https://child.binding/", {
    fetch: (input, init) => workerEnv.CHILD.fetch(input as RequestInfo, init),
  });

const requestOf = (task: Task) =>
  task.status.message?.parts.find((p) => p.type === "data")?.content as Json | undefined;

let fake: FakeProvider;
beforeEach(() => {
  fake = new FakeProvider({ seed: 3, maxChunk: 13 });
  harness.fetch = fake.fetch;
  harness.requests = [];
  harness.refunds = [];
  harness.childAsks = "approval";
  harness.model = openai({
    model: "gpt-4o-mini",
    apiKey: "sk-test",
    baseUrl: "https://fake.test/v1",
  });
});

/** The parent's model calls the child, which asks for approval: the parent's task waits. */
async function askThroughParent(): Promise<Task> {
  fake.reply(
    { fixture: "openai-chat/tool-call-split-args.sse" },
    { fixture: "openai-chat/after-tool-result-text.sse" },
  );
  const agent = await caller();
  const result = await agent.send("Refund order A-17");
  if (result.kind !== "task") throw new Error("expected a task");
  return result.task;
}

/** What the parent's model was told the agent tool answered. */
const toolResult = () => {
  const second = fake.requests[1]?.body as { messages: Json[] } | undefined;
  return second?.messages.filter((m) => m.role === "tool") ?? [];
};

describe("a delegated agent's request relayed to the parent's caller", () => {
  it("the child's approval reaches the parent's caller, marked as relayed and naming the child; the approval goes back, the child's action runs once and the parent's turn goes on with its result", async () => {
    const task = await askThroughParent();
    expect(task.status.state).toBe("input-required");
    const request = requestOf(task);
    const childTaskId = (request?.relayed as Json | undefined)?.taskId as string;
    expect(request).toMatchObject({
      kind: "edgelink.approval.request",
      calls: [
        {
          callId: "refund",
          tool: "refund",
          arguments: { order: "A-17", amount: 150 },
          reason: "Refunds over 100 need approval",
          type: "approval",
        },
      ],
      relayed: { agent: "get_capital" },
    });
    expect(typeof childTaskId).toBe("string");
    expect(harness.refunds).toEqual([]);
    expect(fake.requests).toHaveLength(1);
    // The child itself waits for the same decision.
    const waiting = await (await child()).getTask(childTaskId);
    expect(waiting.status.state).toBe("input-required");

    // The caller answers the parent, with the client helpers, editing the amount.
    const agent = await caller();
    const [call] = pendingCalls(task);
    expect(call?.callId).toBe("refund");
    const answer = {
      messageId: `relay-answer-${Date.now()}`,
      parts: decisionParts([approve("refund", { order: "A-17", amount: 90 })]),
    };
    const done = await agent.send(answer, { taskId: task.id });
    if (done.kind !== "task") throw new Error("expected a task");
    expect(done.task.status.state).toBe("completed");
    expect(harness.refunds).toEqual(['{"order":"A-17","amount":90}']);
    expect(toolResult()).toEqual([
      { role: "tool", tool_call_id: CALL_ID, content: "Refunded 90 on order A-17" },
    ]);
    expect((await (await child()).getTask(childTaskId)).status.state).toBe("completed");

    // The same answer again is a retry: nothing runs twice.
    await agent.send(answer, { taskId: task.id }).catch(() => {});
    expect(harness.refunds).toHaveLength(1);
    expect(fake.requests).toHaveLength(2);
  });

  it("a rejection is relayed with its reason: the child does not act, and the parent's model gets the child's answer", async () => {
    const task = await askThroughParent();
    const agent = await caller();
    const done = await agent.send(decisionParts([reject("refund", "Too much")]), {
      taskId: task.id,
    });
    if (done.kind !== "task") throw new Error("expected a task");
    expect(done.task.status.state).toBe("completed");
    expect(harness.refunds).toEqual([]);
    expect(toolResult()).toEqual([
      { role: "tool", tool_call_id: CALL_ID, content: "Not refunded (Too much)" },
    ]);
  });

  it("a child's question in words is relayed as a question; the caller's text answer reaches the child as text", async () => {
    harness.childAsks = "question";
    const task = await askThroughParent();
    expect(task.status.state).toBe("input-required");
    expect(requestOf(task)).toMatchObject({
      calls: [{ callId: CALL_ID, tool: "get_capital", reason: "Which order?", type: "question" }],
      relayed: { agent: "get_capital" },
    });
    const agent = await caller();
    const done = await agent.send("A-17", { taskId: task.id });
    if (done.kind !== "task") throw new Error("expected a task");
    expect(done.task.status.state).toBe("completed");
    expect(toolResult()).toEqual([
      { role: "tool", tool_call_id: CALL_ID, content: "Order A-17 noted" },
    ]);
  });

  it("a malformed decision to the parent is refused naming the field; nothing reaches the child, and a valid one still works", async () => {
    const task = await askThroughParent();
    const body = await rpc("SendMessage", {
      message: userMessage("", {
        taskId: task.id,
        parts: [
          { data: { kind: "edgelink.approval.decision", callId: "nope", decision: "approve" } },
        ],
      }),
    });
    expect((body.error as Json).code).toBe(-32602);
    expect(JSON.stringify(body.error)).toContain("message.parts[0].data.callId");
    const childTaskId = (requestOf(task)?.relayed as Json | undefined)?.taskId as string;
    expect((await (await child()).getTask(childTaskId)).status.state).toBe("input-required");
    const agent = await caller();
    const done = await agent.send(decisionParts([approve("refund")]), { taskId: task.id });
    if (done.kind !== "task") throw new Error("expected a task");
    expect(done.task.status.state).toBe("completed");
    expect(harness.refunds).toEqual(['{"order":"A-17","amount":150}']);
  });
});
