import { env, runInDurableObject, SELF } from "cloudflare:test";
import { beforeEach, describe, expect, it } from "vitest";
import { connect } from "../../../src/client/connect";
import { defineAgent } from "../../../src/index";
import { openai } from "../../../src/providers/openai/openai-chat";
import { withStrategy } from "../../../src/providers/strategy";
import { contextObjectName } from "../../../src/storage/ids";
import { type Env, harness } from "../../harness/agents/worker";
import { FakeProvider } from "../../providers/fake-provider";
import { sleep, userMessage } from "../../support/helpers";

type Json = Record<string, unknown>;
const workerEnv = env as unknown as Env;
const ORCH = "http://orch.test";
const CALL_ID = "call_ZR5UUuTt3pf61kjwAJIYdVMj"; // the recorded stream's call

async function rpc(method: string, params: Json): Promise<Json> {
  const response = await SELF.fetch(`${ORCH}/`, {
    method: "POST",
    headers: { "Content-Type": "application/json", "A2A-Version": "1.0" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  return (await response.json()) as Json;
}

const textOf = (task: Json) =>
  ((task.artifacts ?? []) as { parts: { text?: string }[] }[])
    .flatMap((a) => a.parts.map((p) => p.text ?? ""))
    .join("");

function orchStub(contextId: string) {
  const ns = workerEnv.ORCH_CONTEXT;
  return ns.get(ns.idFromName(contextObjectName("", contextId)));
}

type ChildRow = { key: string; child_task_id: string | null; child_context_id: string | null };
const childRows = (contextId: string) =>
  runInDurableObject(orchStub(contextId), (_i, state) =>
    state.storage.sql.exec<ChildRow>("SELECT * FROM children").toArray(),
  );

async function demoTasksIn(contextId: string): Promise<string[]> {
  const client = await connect("https://demo.binding/", {
    fetch: (input, init) => workerEnv.DEMO.fetch(input as RequestInfo, init),
  });
  const ids: string[] = [];
  for await (const page of client.listTasks({ contextId }))
    ids.push(...page.tasks.map((t) => t.id));
  return ids;
}

let fake: FakeProvider;
beforeEach(() => {
  fake = new FakeProvider({ seed: 3, maxChunk: 13 });
  harness.fetch = fake.fetch;
  harness.requests = [];
  harness.model = openai({
    model: "gpt-4o-mini",
    apiKey: "sk-test",
    baseUrl: "https://fake.test/v1",
  });
});

describe("other agents as tools of a model-backed agent (agents)", () => {
  it("checks agents at definition: one target each, no clash with its own tools", () => {
    const define = (agents: Record<string, unknown>) => () =>
      defineAgent({ card: { name: "x", description: "x" }, agents: agents as never });
    expect(define({ w: {} })).toThrow("agents.w: give exactly one of url, binding or card");
    expect(define({ w: { url: "nope" } })).toThrow("agents.w: url is not a valid URL: nope");
    expect(define({ "bad name": { binding: "X" } })).toThrow(/agents\.bad name: a tool name/);
  });

  it("the model's call delegates to the other agent; its answer is the tool result the model gets", async () => {
    fake.reply(
      { fixture: "openai-chat/tool-call-split-args.sse" },
      { fixture: "openai-chat/after-tool-result-text.sse" },
    );
    const body = await rpc("SendMessage", { message: userMessage("Capital of the UK?") });
    const task = (body.result as { task: Json }).task;
    expect((task.status as Json).state).toBe("TASK_STATE_COMPLETED");
    expect(textOf(task)).toBe("The capital of the UK is London.");

    // The tool as the model saw it: a message in, the agent's answer out.
    const first = fake.requests[0]?.body as { tools: { function: Json }[] };
    expect(first.tools.map((t) => t.function)).toEqual([
      {
        name: "get_capital",
        description: "Knows capitals (the demo agent)",
        parameters: {
          type: "object",
          properties: { message: { type: "string", description: "What to ask the agent" } },
          required: ["message"],
        },
      },
    ]);
    // The recorded call's arguments ({"country":"UK"}) went to the demo agent as the message.
    const second = fake.requests[1]?.body as { messages: Json[] };
    expect(second.messages.at(-1)).toEqual({
      role: "tool",
      tool_call_id: CALL_ID,
      content: 'You said: {"country":"UK"}',
    });
    const [row] = await childRows(task.contextId as string);
    expect(row?.key).toBe(`tool:${CALL_ID}`);
    expect(await demoTasksIn(row?.child_context_id as string)).toEqual([row?.child_task_id]);
  });

  it("a restart of the agent's object while the other agent works resumes the call: one child, one answer, no repeated model call", async () => {
    fake.reply(
      { fixture: "openai-chat/tool-call-split-args.sse" },
      { fixture: "openai-chat/after-tool-result-text.sse" },
    );
    const body = await rpc("SendMessage", {
      message: userMessage("Capital of the UK?"),
      configuration: { returnImmediately: true },
    });
    const started = (body.result as { task: Json }).task;
    const contextId = started.contextId as string;
    let rows: ChildRow[] = [];
    for (let i = 0; i < 200 && !rows[0]?.child_task_id; i++) {
      await sleep(5);
      rows = await childRows(contextId).catch(() => []);
    }
    expect(rows[0]?.child_task_id).toBeTruthy();
    await runInDurableObject(orchStub(contextId), (_i, state) => {
      state.abort("simulated restart");
    }).catch(() => {});

    let task: Json = {};
    for (let i = 0; i < 200; i++) {
      task = (await rpc("GetTask", { id: started.id })).result as Json;
      if ((task.status as Json).state !== "TASK_STATE_WORKING") break;
      await sleep(30);
    }
    expect((task.status as Json).state).toBe("TASK_STATE_COMPLETED");
    expect(textOf(task)).toBe("The capital of the UK is London.");
    expect(fake.requests).toHaveLength(2);
    const second = fake.requests[1]?.body as { messages: Json[] };
    expect(second.messages.filter((m) => m.role === "tool")).toEqual([
      { role: "tool", tool_call_id: CALL_ID, content: 'You said: {"country":"UK"}' },
    ]);
    const after = await childRows(contextId);
    expect(after).toHaveLength(1);
    expect(await demoTasksIn(after[0]?.child_context_id as string)).toEqual([
      after[0]?.child_task_id,
    ]);
  });

  it("J5: a reflecting model in a tool loop: the tool round passes through, the answer round is drafted, then reviewed, and the review is the artifact", async () => {
    harness.model = withStrategy(harness.model as never, { mode: "reflection" });
    fake.reply(
      { fixture: "openai-chat/tool-call-split-args.sse" },
      { fixture: "openai-chat/after-tool-result-text.sse" },
      { fixture: "openai-chat/text-with-usage.sse" },
    );
    const body = await rpc("SendMessage", { message: userMessage("Capital of the UK?") });
    const task = (body.result as { task: Json }).task;
    expect((task.status as Json).state).toBe("TASK_STATE_COMPLETED");
    // The review's text (a recorded answer to another question) is what the agent answers.
    expect(textOf(task)).toBe("The capital of Mexico is Mexico City.");
    expect(fake.requests).toHaveLength(3);
    const review = (fake.requests[2]?.body.messages ?? []) as Json[];
    expect(review.at(-2)).toEqual({
      role: "assistant",
      content: "The capital of the UK is London.",
    });
    expect(String(review.at(-1)?.content)).toMatch(/^Review your answer above/);
    // The draft is not in the conversation: the next turn sees the reviewed answer only.
    const history = JSON.stringify(task.history);
    expect(history).not.toContain("Review your answer above");
  });
});
