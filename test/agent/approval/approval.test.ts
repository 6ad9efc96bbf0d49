import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import type { Agent } from "../../../src/agent/definition";
import { tool } from "../../../src/agent/tool";
import { openai } from "../../../src/providers/openai/openai-chat";
import { contextObjectName } from "../../../src/storage/ids";
import worker, { harness } from "../../harness/llm/worker";
import { FakeProvider, type FakeReply, fixtureText } from "../../providers/fake-provider";
import { rpc, sleep } from "../../support/helpers";

type Json = Record<string, unknown>;

let fake: FakeProvider;
const agent = worker.agent as Agent<unknown>;
const defaults = { ...agent };
let counter = 0;

/** get_capital asks for approval for the UK; get_product_name always; get_country never. */
const approvalTools = () => ({
  ...defaults.tools,
  get_capital: tool({
    description: "The capital of a country",
    input: z.object({ country: z.string() }),
    approval: ({ country }: { country: string }) =>
      country === "UK" && "Capitals of the UK need approval",
    run: ({ country }: { country: string }) => {
      harness.toolRuns.push(country);
      return country === "UK" ? "London" : "Paris";
    },
  }),
  get_product_name: tool({
    description: "The product's name",
    input: z.object({}),
    approval: true,
    run: () => {
      harness.toolRuns.push("get_product_name");
      return "Edgelink";
    },
  }),
});

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
  agent.tools = approvalTools();
});
afterEach(() => {
  Object.assign(agent, defaults);
});

const message = (parts: Json[], extra: Json = {}): Json => ({
  messageId: `approval-${Date.now()}-${++counter}`,
  role: "ROLE_USER",
  parts,
  ...extra,
});

async function send(parts: Json[], extra: Json = {}, headers?: Record<string, string>) {
  const { body } = await rpc("SendMessage", { message: message(parts, extra) }, { headers });
  return body;
}

const taskOf = (body: Json) => (body.result as { task: Json }).task;
const stateOf = (task: Json) => (task.status as Json).state;
type Call = { callId: string; tool: string; arguments: Json; reason: string; type: string };
/** The approval request's data part of an input-required task. */
const requestOf = (task: Json) =>
  (((task.status as Json).message as Json).parts as Json[]).find((p) => p.data)?.data as {
    kind: string;
    calls: [Call, ...Call[]];
    waiting: string[];
  };
const decision = (callId: string, decision: string, extra: Json = {}): Json => ({
  data: { kind: "edgelink.approval.decision", callId, decision, ...extra },
});

/** Asks for the UK's capital: the model calls get_capital, which waits for approval. */
/** The approval deadline of the tests that pass it. */
const DEADLINE_MS = 250;

async function askCapital(headers?: Record<string, string>) {
  fake.reply({ fixture: "openai-chat/tool-call-split-args.sse" });
  const task = taskOf(await send([{ text: "What is the capital of the UK?" }], {}, headers));
  expect(stateOf(task)).toBe("TASK_STATE_INPUT_REQUIRED");
  return { task, request: requestOf(task) };
}

/**
 * `askCapital` for the deadline's tests. A loaded machine can pass the short deadline, and
 * the alarm that rings at it, before the blocking answer is rendered, so that answer is the
 * waiting task or already the deadline's outcome (`after`): the task's end is what these
 * tests prove. `next` scripts the model's reply after the call, before the deadline can pass.
 */
async function askCapitalWithDeadline(after: string, ...next: FakeReply[]): Promise<Json> {
  fake.reply({ fixture: "openai-chat/tool-call-split-args.sse" }, ...next);
  const task = taskOf(await send([{ text: "What is the capital of the UK?" }]));
  expect(["TASK_STATE_INPUT_REQUIRED", after]).toContain(stateOf(task));
  return task;
}

/** The second model call's messages: what the model was told after the decision. */
const secondCall = () => harness.requests[1]?.messages ?? [];
const toolOutputs = () =>
  secondCall().flatMap((m) => (m.type === "function_call_output" ? [m] : []));
/** The model's first tool result after the decision. */
const firstOutput = () => {
  const [first] = toolOutputs();
  if (!first) throw new Error("no tool result was sent to the model");
  return first;
};

function stubOf(contextId: string) {
  const ns = env.EDGELINK_CONTEXT;
  return ns.get(ns.idFromName(contextObjectName("", contextId)));
}

describe("tool calls that need approval", () => {
  it("M1: the call is held, not run: the task waits input-required with a data part naming the call, its arguments and why, and a text part", async () => {
    const { task, request } = await askCapital();
    expect(harness.toolRuns).toEqual([]);
    expect(request).toMatchObject({
      kind: "edgelink.approval.request",
      calls: [
        {
          tool: "get_capital",
          arguments: { country: "UK" },
          reason: "Capitals of the UK need approval",
          type: "approval",
        },
      ],
    });
    const text = (((task.status as Json).message as Json).parts as Json[]).at(0)?.text as string;
    expect(text).toContain("Approval needed to run get_capital");
    // The held call is a row of the conversation, with the model's call in its history.
    const rows = await runInDurableObject(stubOf(task.contextId as string), (_, state) =>
      state.storage.sql.exec("SELECT call_id, tool, arguments, reason FROM approvals").toArray(),
    );
    expect(rows).toContainEqual({
      call_id: request.calls[0].callId,
      tool: "get_capital",
      arguments: '{"country":"UK"}',
      reason: "Capitals of the UK need approval",
    });
  });

  it("M2: approve: the tool runs once and the model gets its result right after its call; the decision message is not sent as a user turn", async () => {
    const { task, request } = await askCapital();
    fake.reply({ fixture: "openai-chat/after-tool-result-text.sse" });
    const done = taskOf(
      await send([decision(request.calls[0].callId, "approve")], { taskId: task.id }),
    );
    expect(stateOf(done)).toBe("TASK_STATE_COMPLETED");
    expect(harness.toolRuns).toEqual(["UK"]);
    const types = secondCall().map((m) => `${m.type}:${"role" in m ? m.role : ""}`);
    expect(types).toEqual(["message:user", "function_call:", "function_call_output:"]);
    expect(firstOutput()).toMatchObject({ output: "London", isError: false });
    // The decision is recorded: who, when, what.
    const steps = await runInDurableObject(stubOf(task.contextId as string), (_, state) =>
      state.storage.sql.exec("SELECT approvals FROM task_steps").toArray(),
    );
    const recorded = steps.flatMap((r) => JSON.parse(r.approvals as string) as Json[]);
    expect(recorded).toContainEqual(
      expect.objectContaining({ callId: request.calls[0].callId, decision: "approve", by: "" }),
    );
  });

  it("M3: reject with a reason: the tool never runs; the model is told it was rejected and why, and answers", async () => {
    const { task, request } = await askCapital();
    fake.reply({ fixture: "openai-chat/after-tool-result-text.sse" });
    const done = taskOf(
      await send([decision(request.calls[0].callId, "reject", { reason: "not today" })], {
        taskId: task.id,
      }),
    );
    expect(stateOf(done)).toBe("TASK_STATE_COMPLETED");
    expect(harness.toolRuns).toEqual([]);
    expect(firstOutput()).toMatchObject({ isError: true });
    expect(firstOutput().output).toMatch(/Rejected by the user: not today/);
  });

  it("M4: approve with edited arguments: the tool runs with them", async () => {
    const { task, request } = await askCapital();
    fake.reply({ fixture: "openai-chat/after-tool-result-text.sse" });
    await send(
      [decision(request.calls[0].callId, "approve", { arguments: { country: "France" } })],
      {
        taskId: task.id,
      },
    );
    expect(harness.toolRuns).toEqual(["France"]);
    expect(firstOutput()).toMatchObject({ output: "Paris" });
  });

  it("M4: edited arguments failing the tool's schema are refused with -32602 naming the field; the task keeps waiting and a valid decision still works", async () => {
    const { task, request } = await askCapital();
    const callId = request.calls[0].callId;
    const bad = await send([decision(callId, "approve", { arguments: { country: 5 } })], {
      taskId: task.id,
    });
    expect(bad.error).toMatchObject({ code: -32602 });
    expect((bad.error as Json).message).toContain("message.parts[0].data.arguments.country");
    const now = (await rpc("GetTask", { id: task.id })).body.result as Json;
    expect(stateOf(now)).toBe("TASK_STATE_INPUT_REQUIRED");
    expect(harness.toolRuns).toEqual([]);
    fake.reply({ fixture: "openai-chat/after-tool-result-text.sse" });
    const done = taskOf(await send([decision(callId, "approve")], { taskId: task.id }));
    expect(stateOf(done)).toBe("TASK_STATE_COMPLETED");
    expect(harness.toolRuns).toEqual(["UK"]);
  });

  it("M5: malformed decisions are refused with -32602 naming the field, writing nothing: unknown callId, missing decision, unknown field, no decision at all", async () => {
    const { task, request } = await askCapital();
    const callId = request.calls[0].callId;
    const cases: [Json[], string][] = [
      [[decision("nope", "approve")], "message.parts[0].data.callId"],
      [
        [{ data: { kind: "edgelink.approval.decision", callId } }],
        "message.parts[0].data.decision",
      ],
      [[decision(callId, "approve", { extra: 1 })], "message.parts[0].data.extra"],
      [[decision(callId, "maybe")], "message.parts[0].data.decision"],
      [[{ data: { other: true } }], "message.parts"],
      [[decision(callId, "approve"), decision(callId, "reject")], "message.parts[1].data.callId"],
    ];
    for (const [parts, field] of cases) {
      const body = await send(parts, { taskId: task.id });
      expect(body.error, field).toMatchObject({ code: -32602 });
      expect((body.error as Json).message as string).toContain(field);
    }
    const now = (await rpc("GetTask", { id: task.id, historyLength: 100 })).body.result as Json;
    expect(stateOf(now)).toBe("TASK_STATE_INPUT_REQUIRED");
    // Nothing of the refused messages was kept.
    expect((now.history as Json[]).filter((m) => m.role === "ROLE_USER")).toHaveLength(1);
    expect(harness.toolRuns).toEqual([]);
    expect(harness.requests).toHaveLength(1);
  });

  it("M5: an answer that leaves a pending call undecided is refused naming the call; deciding both then works", async () => {
    agent.tools = {
      ...approvalTools(),
      get_country: tool({
        description: "The country",
        input: z.object({}),
        approval: true,
        run: () => {
          harness.toolRuns.push("get_country");
          return "Mexico";
        },
      }),
    };
    fake.reply({ fixture: "openai-chat/parallel-tool-calls.sse" });
    const task = taskOf(await send([{ text: "What is the product and the country?" }]));
    const [first, second] = requestOf(task).calls;
    expect(second).toBeDefined();
    const partial = await send([decision(first.callId, "approve")], { taskId: task.id });
    expect(partial.error).toMatchObject({ code: -32602 });
    expect((partial.error as Json).message).toContain(
      `no decision for pending call(s) ${second?.callId}`,
    );
    expect(harness.toolRuns).toEqual([]);
    fake.reply({ fixture: "openai-chat/after-tool-result-text.sse" });
    const done = taskOf(
      await send([decision(first.callId, "approve"), decision(second?.callId ?? "", "reject")], {
        taskId: task.id,
      }),
    );
    expect(stateOf(done)).toBe("TASK_STATE_COMPLETED");
    expect(harness.toolRuns).toHaveLength(1);
  });

  it("M6: a text-only answer rejects the call with the text as the reason", async () => {
    const { task } = await askCapital();
    fake.reply({ fixture: "openai-chat/after-tool-result-text.sse" });
    const done = taskOf(await send([{ text: "No, use the atlas" }], { taskId: task.id }));
    expect(stateOf(done)).toBe("TASK_STATE_COMPLETED");
    expect(harness.toolRuns).toEqual([]);
    expect(firstOutput().output).toMatch(/Rejected by the user: No, use the atlas/);
  });

  it("M7: a mixed round: the call that needs no approval waits with the one that does, then both run exactly once", async () => {
    fake.reply({ fixture: "openai-chat/parallel-tool-calls.sse" });
    const task = taskOf(await send([{ text: "What is the product and the country?" }]));
    expect(stateOf(task)).toBe("TASK_STATE_INPUT_REQUIRED");
    const request = requestOf(task);
    expect(request.calls.map((c) => c.tool)).toEqual(["get_product_name"]);
    expect(request.waiting).toHaveLength(1);
    expect(harness.toolRuns).toEqual([]);
    fake.reply({ fixture: "openai-chat/after-tool-result-text.sse" });
    const done = taskOf(
      await send([decision(request.calls[0].callId, "approve")], { taskId: task.id }),
    );
    expect(stateOf(done)).toBe("TASK_STATE_COMPLETED");
    expect([...harness.toolRuns].sort()).toEqual(["get_country", "get_product_name"]);
    expect(
      toolOutputs()
        .map((o) => o.name)
        .sort(),
    ).toEqual(["get_country", "get_product_name"]);
  });

  it("M8: the same decision sent twice is applied once; two different decisions at once: one applies, the other is refused; the tool runs once", async () => {
    const { task, request } = await askCapital();
    const callId = request.calls[0].callId;
    fake.reply({ fixture: "openai-chat/after-tool-result-text.sse" });
    const same = message([decision(callId, "approve")], { taskId: task.id });
    const other = message([decision(callId, "reject")], { taskId: task.id });
    // The same decision twice at once: whichever arrives first applies it and waits for the
    // end; its twin is a retry, answered with the task as it is then (working or done).
    const twins = await Promise.all([
      rpc("SendMessage", { message: same }),
      rpc("SendMessage", { message: same }),
    ]);
    for (const answer of twins) expect(answer.body.error).toBeUndefined();
    expect(twins.map((t) => stateOf(taskOf(t.body)))).toContain("TASK_STATE_COMPLETED");
    expect(harness.toolRuns).toEqual(["UK"]);
    const c = await rpc("SendMessage", { message: other });
    expect((c.body.error as Json).message).toMatch(/completed and accepts no more/);
    // Two different decisions at once on another held call: one applies, the other is refused.
    const second = await askCapital();
    const secondId = second.request.calls[0].callId;
    fake.reply({ fixture: "openai-chat/after-tool-result-text.sse" });
    const raced = await Promise.all(
      (["approve", "reject"] as const).map((verdict) =>
        rpc("SendMessage", {
          message: message([decision(secondId, verdict)], { taskId: second.task.id }),
        }),
      ),
    );
    const refused = raced.filter((r) => r.body.error !== undefined);
    expect(refused).toHaveLength(1);
    expect(((refused[0] as { body: Json }).body.error as Json).message).toMatch(
      /still working|completed and accepts no more/,
    );
    // The approve ran the tool once, or the reject won and it never ran.
    expect(["UK,UK", "UK"]).toContain(harness.toolRuns.join(","));
    const runs = harness.toolRuns.length;
    // Sent again after it was applied: the task as it is, nothing run again.
    const again = await rpc("SendMessage", { message: same });
    expect(stateOf(taskOf(again.body))).toBe("TASK_STATE_COMPLETED");
    expect(harness.toolRuns).toHaveLength(runs);
  });

  it("M8: a different decision after the task completed gets a clear error", async () => {
    const { task, request } = await askCapital();
    fake.reply({ fixture: "openai-chat/after-tool-result-text.sse" });
    await send([decision(request.calls[0].callId, "approve")], { taskId: task.id });
    const late = await send([decision(request.calls[0].callId, "reject")], { taskId: task.id });
    expect((late.error as Json).message).toMatch(/completed and accepts no more messages/);
    expect(harness.toolRuns).toEqual(["UK"]);
  });

  it("M9: another principal cannot see or decide the held call: task not found", async () => {
    agent.auth = {
      authenticate: (request: Request) => {
        const subject = request.headers.get("x-user");
        return subject ? { subject } : null;
      },
    };
    const { task, request } = await askCapital({ "x-user": "alice" });
    const body = await send(
      [decision(request.calls[0].callId, "approve")],
      { taskId: task.id },
      {
        "x-user": "mallory",
      },
    );
    expect(body.error).toMatchObject({ code: -32001 });
    expect(harness.toolRuns).toEqual([]);
    fake.reply({ fixture: "openai-chat/after-tool-result-text.sse" });
    const done = await send(
      [decision(request.calls[0].callId, "approve")],
      { taskId: task.id },
      {
        "x-user": "alice",
      },
    );
    expect(stateOf(taskOf(done))).toBe("TASK_STATE_COMPLETED");
    expect(harness.toolRuns).toEqual(["UK"]);
  });
});

describe("the approval deadline", () => {
  it("M10: past its deadline the object's alarm rejects the call as timed out and the turn goes on", async () => {
    // A deadline a loaded machine cannot pass before the test has answered the first call
    // and scripted the model's next reply (30 ms could, failing the turn).
    agent.approvals = { ...defaults.approvals, timeoutMs: DEADLINE_MS };
    // The model's answer after the timed-out call is scripted before the deadline can pass.
    const task = await askCapitalWithDeadline("TASK_STATE_COMPLETED", {
      fixture: "openai-chat/after-tool-result-text.sse",
    });
    // The alarm rings by itself at the deadline; run it too, in case it has not yet.
    await sleep(DEADLINE_MS + 20);
    await runDurableObjectAlarm(stubOf(task.contextId as string));
    const done = await waitFor(task.id as string, "TASK_STATE_COMPLETED");
    expect(stateOf(done)).toBe("TASK_STATE_COMPLETED");
    expect(harness.toolRuns).toEqual([]);
    expect(firstOutput().output).toMatch(/no decision was made before the approval deadline/);
  });

  it("M10: with onTimeout fail, the task fails at the deadline", async () => {
    agent.approvals = { ...defaults.approvals, timeoutMs: DEADLINE_MS, onTimeout: "fail" };
    const task = await askCapitalWithDeadline("TASK_STATE_FAILED");
    await sleep(DEADLINE_MS + 20);
    await runDurableObjectAlarm(stubOf(task.contextId as string));
    const done = await waitFor(task.id as string, "TASK_STATE_FAILED");
    expect((done.metadata as Json).error).toMatch(/approval deadline/);
    expect(harness.requests).toHaveLength(1);
  });

  it("M10: before the deadline the alarm changes nothing", async () => {
    const { task } = await askCapital();
    await runDurableObjectAlarm(stubOf(task.contextId as string));
    const now = (await rpc("GetTask", { id: task.id })).body.result as Json;
    expect(stateOf(now)).toBe("TASK_STATE_INPUT_REQUIRED");
  });
});

describe("questions", () => {
  /** The recorded tool-call stream, calling ask_user with a question instead. */
  const askStream = () =>
    fixtureText("openai-chat/tool-call-split-args.sse")
      .replaceAll("get_capital", "ask_user")
      .replace('"arguments":"country"', '"arguments":"question"')
      .replace('"arguments":"UK"', '"arguments":"Which country?"');

  it("M11: with askUser on, the model's question waits input-required and the user's text answer is the call's result", async () => {
    agent.approvals = { ...defaults.approvals, askUser: true };
    fake.reply({
      status: 200,
      body: askStream(),
      headers: { "content-type": "text/event-stream" },
    });
    const task = taskOf(await send([{ text: "What is the capital?" }]));
    expect(stateOf(task)).toBe("TASK_STATE_INPUT_REQUIRED");
    expect(requestOf(task).calls[0]).toMatchObject({
      tool: "ask_user",
      type: "question",
      reason: "Which country?",
    });
    expect(harness.requests[0]?.tools?.map((t) => t.name)).toContain("ask_user");
    fake.reply({ fixture: "openai-chat/after-tool-result-text.sse" });
    const done = taskOf(await send([{ text: "France" }], { taskId: task.id }));
    expect(stateOf(done)).toBe("TASK_STATE_COMPLETED");
    expect(firstOutput()).toMatchObject({ name: "ask_user", output: "France", isError: false });
  });

  it("M11: ask_user is off by default: not offered to the model", async () => {
    fake.reply({ fixture: "openai-chat/text-with-usage.sse" });
    await send([{ text: "Hello" }]);
    expect(harness.requests[0]?.tools?.map((t) => t.name) ?? []).not.toContain("ask_user");
  });
});

describe("handlers", () => {
  it("M12: ctx.approval asks once, then answers the decision (with edited arguments) when the task resumes", async () => {
    const seen: unknown[] = [];
    agent.handler = (ctx) => {
      const d = ctx.approval({
        id: "refund-1",
        action: "refund",
        arguments: { amount: 150 },
        reason: "Refunds over 100 need approval",
      });
      seen.push(d ?? null);
      if (!d) return;
      return d.decision === "approve" ? `Refunded ${d.arguments.amount}` : "Not refunded";
    };
    const task = taskOf(await send([{ text: "Refund order 7" }]));
    expect(stateOf(task)).toBe("TASK_STATE_INPUT_REQUIRED");
    expect(requestOf(task).calls[0]).toMatchObject({ callId: "refund-1", tool: "refund" });
    const done = taskOf(
      await send([decision("refund-1", "approve", { arguments: { amount: 120 } })], {
        taskId: task.id,
      }),
    );
    expect(stateOf(done)).toBe("TASK_STATE_COMPLETED");
    expect(JSON.stringify(done.artifacts)).toContain("Refunded 120");
    expect(seen).toEqual([null, expect.objectContaining({ decision: "approve", by: "" })]);
  });

  it("M12: ctx.ask with choices: an answer outside them is refused; a choice is the answer", async () => {
    agent.handler = (ctx) => {
      const a = ctx.ask({ id: "size", question: "Which size?", choices: ["S", "M"] });
      if (!a) return;
      return a.answered ? `Size ${a.answer}` : "No size";
    };
    const task = taskOf(await send([{ text: "Order a shirt" }]));
    const bad = await send([decision("size", "answer", { answer: "XL" })], { taskId: task.id });
    expect((bad.error as Json).message).toContain("message.parts[0].data.answer");
    const done = taskOf(await send([{ text: "M" }], { taskId: task.id }));
    expect(JSON.stringify(done.artifacts)).toContain("Size M");
  });
});

async function waitFor(taskId: string, state: string): Promise<Json> {
  for (let i = 0; i < 100; i++) {
    const task = (await rpc("GetTask", { id: taskId })).body.result as Json;
    if (stateOf(task) === state) return task;
    await sleep(20);
  }
  throw new Error(`task ${taskId} never reached ${state}`);
}
