import { env, runInDurableObject } from "cloudflare:test";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { resolveApprovals } from "../../src/agent/access/approval-options";
import type { Agent } from "../../src/agent/definition";
import { tool } from "../../src/agent/tool";
import { openai } from "../../src/providers/openai/openai-chat";
import { contextObjectName } from "../../src/storage/ids";
import worker, { harness } from "../harness/llm/worker";
import { FakeProvider } from "../providers/fake-provider";
import { rpc, sleep } from "../support/helpers";
import { recordSpans } from "../telemetry/support";

type Json = Record<string, unknown>;

let fake: FakeProvider;
const agent = worker.agent as Agent<unknown>;
const defaults = { ...agent };
let counter = 0;
const { exporter } = recordSpans();

/** Callers by header: `x-user` names the subject, `x-role` a verified role claim. */
const auth = {
  authenticate: (request: Request) => {
    const subject = request.headers.get("x-user");
    const role = request.headers.get("x-role");
    return subject ? { subject, ...(role ? { claims: { role } } : {}) } : null;
  },
};
const ALICE = { "x-user": "alice" };
const BOB = { "x-user": "bob", "x-role": "refund-approver" };
const MALLORY = { "x-user": "mallory", "x-role": "support" };
const ownerOfCustom = (subject: string) => JSON.stringify(["custom", "", subject]);

beforeEach(() => {
  fake = new FakeProvider({ seed: 11, maxChunk: 17 });
  harness.fetch = fake.fetch;
  harness.requests = [];
  harness.toolRuns = [];
  harness.model = openai({
    model: "gpt-4o-mini",
    apiKey: "sk-test",
    baseUrl: "https://fake.test/v1",
  });
  agent.auth = auth;
  agent.approvals = resolveApprovals({ approvers: { claims: { role: ["refund-approver"] } } });
  agent.tools = {
    ...defaults.tools,
    get_capital: tool({
      description: "The capital of a country",
      input: z.object({ country: z.string() }),
      approval: ({ country }: { country: string }) => country === "UK" && "UK needs approval",
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

const message = (parts: Json[], extra: Json = {}): Json => ({
  messageId: `approver-${Date.now()}-${++counter}`,
  role: "ROLE_USER",
  parts,
  ...extra,
});
const call = (method: string, params: Json, headers: Record<string, string>) =>
  rpc(method, params, { headers }).then((r) => r.body);
const taskOf = (body: Json) => (body.result as { task: Json }).task;
const stateOf = (task: Json) => (task.status as Json).state;
const requestOf = (task: Json) =>
  (((task.status as Json).message as Json).parts as Json[]).find((p) => p.data)?.data as {
    calls: [{ callId: string }];
    approverTaskId?: string;
  };
const decision = (callId: string, verdict: string, extra: Json = {}): Json => ({
  data: { kind: "edgelink.approval.decision", callId, decision: verdict, ...extra },
});

/** Alice asks for the UK's capital: get_capital waits for a decision. */
async function aliceAsks() {
  fake.reply({ fixture: "openai-chat/tool-call-split-args.sse" });
  const body = await call(
    "SendMessage",
    { message: message([{ text: "What is the capital of the UK?" }]) },
    ALICE,
  );
  const task = taskOf(body);
  expect(stateOf(task)).toBe("TASK_STATE_INPUT_REQUIRED");
  const request = requestOf(task);
  return { task, request, approverId: request.approverTaskId as string };
}

/** The owner's view of the task, once it left `working`. */
async function settled(taskId: string): Promise<Json> {
  for (let i = 0; i < 100; i++) {
    const task = (await call("GetTask", { id: taskId }, ALICE)).result as Json;
    if (stateOf(task) !== "TASK_STATE_WORKING") return task;
    await sleep(20);
  }
  throw new Error("the task never settled");
}

const stepsOf = (contextId: string) => {
  const ns = env.EDGELINK_CONTEXT;
  const stub = ns.get(ns.idFromName(contextObjectName("", contextId, ownerOfCustom("alice"))));
  return runInDurableObject(stub, (_, state) =>
    state.storage.sql
      .exec("SELECT approvals FROM task_steps")
      .toArray()
      .flatMap((r) => JSON.parse(r.approvals as string) as Json[]),
  );
};

describe("a separate approver", () => {
  it("M9: the request names the approver's id; an approver decides as itself, recorded in the steps and on the run's span", async () => {
    const { task, request, approverId } = await aliceAsks();
    expect(approverId).toMatch(/^a\./);
    fake.reply({ fixture: "openai-chat/after-tool-result-text.sse" });
    const traceId = crypto.randomUUID().replaceAll("-", "");
    const answer = await rpc(
      "SendMessage",
      { message: message([decision(request.calls[0].callId, "approve")], { taskId: approverId }) },
      { headers: { ...BOB, traceparent: `00-${traceId}-${"1".repeat(16)}-01` } },
    );
    // The approver learns the task's state under its own id, nothing of its outcome.
    const seen = taskOf(answer.body);
    expect(seen.id).toBe(approverId);
    expect(seen.history ?? []).toEqual([]);
    expect(seen.artifacts ?? []).toEqual([]);
    expect((seen.status as Json).message).toBeUndefined();
    const done = await settled(task.id as string);
    expect(stateOf(done)).toBe("TASK_STATE_COMPLETED");
    expect(harness.toolRuns).toEqual(["UK"]);
    const recorded = await stepsOf(task.contextId as string);
    expect(recorded).toContainEqual(
      expect.objectContaining({
        callId: request.calls[0].callId,
        decision: "approve",
        by: ownerOfCustom("bob"),
      }),
    );
    const events = exporter
      .getFinishedSpans()
      .filter((s) => s.spanContext().traceId === traceId)
      .flatMap((s) => s.events.filter((e) => e.name === "edgelink.approval.decision"));
    expect(events.map((e) => e.attributes?.["edgelink.approval.by"])).toEqual([
      ownerOfCustom("bob"),
    ]);
  });

  it("M9: anyone the rule does not name gets task not found for the approver's id and the owner's, and nothing runs", async () => {
    const { task, request, approverId } = await aliceAsks();
    const approve = [decision(request.calls[0].callId, "approve")];
    for (const taskId of [approverId, task.id as string]) {
      const sent = await call("SendMessage", { message: message(approve, { taskId }) }, MALLORY);
      expect(sent.error).toMatchObject({ code: -32001 });
      const read = await call("GetTask", { id: taskId }, MALLORY);
      expect(read.error).toMatchObject({ code: -32001 });
    }
    // A forged or altered approver's id is not found either, for an approver too.
    const altered = `${approverId.slice(0, -2)}${approverId.endsWith("A") ? "B" : "A"}A`;
    const forged = await call("GetTask", { id: altered }, BOB);
    expect(forged.error).toMatchObject({ code: -32001 });
    expect(harness.toolRuns).toEqual([]);
    expect(stateOf(await settled(task.id as string))).toBe("TASK_STATE_INPUT_REQUIRED");
  });

  it("M9: an approver may only see the pending request and decide: no history, no cancel, no stream, no webhook, no other message; then not found", async () => {
    const { task, request, approverId } = await aliceAsks();
    const view = (await call("GetTask", { id: approverId }, BOB)).result as Json;
    expect(view.id).toBe(approverId);
    expect(view.history ?? []).toEqual([]);
    expect(requestOf(view).calls[0].callId).toBe(request.calls[0].callId);
    // The owner's own id does not open for the approver.
    expect((await call("GetTask", { id: task.id }, BOB)).error).toMatchObject({ code: -32001 });
    expect((await call("CancelTask", { id: approverId }, BOB)).error).toMatchObject({
      code: -32001,
    });
    const streamed = await call(
      "SendStreamingMessage",
      { message: message([decision(request.calls[0].callId, "approve")], { taskId: approverId }) },
      BOB,
    );
    expect(streamed.error).toMatchObject({ code: -32004 });
    const hooked = await call(
      "SendMessage",
      {
        message: message([decision(request.calls[0].callId, "approve")], { taskId: approverId }),
        configuration: { taskPushNotificationConfig: { url: "https://hooks.example.com/x" } },
      },
      BOB,
    );
    expect(hooked.error).toMatchObject({ code: -32602 });
    // A message that decides nothing is refused naming the field; the task keeps waiting.
    const other = await call(
      "SendMessage",
      { message: message([{ data: { note: "hi" } }], { taskId: approverId }) },
      BOB,
    );
    expect(other.error).toMatchObject({ code: -32602 });
    expect(JSON.stringify(other.error)).toContain("message.parts");
    expect(harness.toolRuns).toEqual([]);
    // A rejection, sent twice: applied once, the retry gets the same answer.
    fake.reply({ fixture: "openai-chat/after-tool-result-text.sse" });
    const reject = message([decision(request.calls[0].callId, "reject", { reason: "No" })], {
      taskId: approverId,
    });
    const first = await call("SendMessage", { message: reject }, BOB);
    expect(taskOf(first).id).toBe(approverId);
    const again = await call("SendMessage", { message: reject }, BOB);
    expect(taskOf(again).id).toBe(approverId);
    expect(stateOf(await settled(task.id as string))).toBe("TASK_STATE_COMPLETED");
    expect(harness.toolRuns).toEqual([]);
    expect(harness.requests).toHaveLength(2);
    // A retry after the task ended: its state, and still nothing of its answer or history.
    const late = taskOf(await call("SendMessage", { message: reject }, BOB));
    expect(late).toMatchObject({ id: approverId, status: { state: "TASK_STATE_COMPLETED" } });
    expect(late.artifacts ?? []).toEqual([]);
    expect(late.history ?? []).toEqual([]);
    expect((late.status as Json).message).toBeUndefined();
    // Nothing waits for an approver now: the id no longer finds the task.
    expect((await call("GetTask", { id: approverId }, BOB)).error).toMatchObject({
      code: -32001,
    });
  });

  it("M9: the owner still decides; without an approvers rule no request names an approver's id and such ids are not found", async () => {
    agent.approvals = resolveApprovals({});
    const { task, request } = await aliceAsks();
    expect(request.approverTaskId).toBeUndefined();
    expect((task.metadata as Json | undefined)?.["edgelink.approverTaskId"]).toBeUndefined();
    agent.approvals = resolveApprovals({ approvers: { claims: { role: ["refund-approver"] } } });
    const withRule = await aliceAsks();
    agent.approvals = resolveApprovals({});
    const lost = await call("GetTask", { id: withRule.approverId }, BOB);
    expect(lost.error).toMatchObject({ code: -32001 });
    fake.reply({ fixture: "openai-chat/after-tool-result-text.sse" });
    const done = await call(
      "SendMessage",
      { message: message([decision(request.calls[0].callId, "approve")], { taskId: task.id }) },
      ALICE,
    );
    expect(stateOf(taskOf(done))).toBe("TASK_STATE_COMPLETED");
    expect(harness.toolRuns).toEqual(["UK"]);
  });
});
