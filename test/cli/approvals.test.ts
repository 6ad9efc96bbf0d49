import { SELF } from "cloudflare:test";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { resolveApprovals } from "../../src/agent/access/approval-options";
import type { Agent } from "../../src/agent/definition";
import { tool } from "../../src/agent/tool";
import { approvals, approve, reject } from "../../src/cli/approvals";
import { parseArgs, UsageError } from "../../src/cli/args";
import type { Context } from "../../src/cli/common";
import { proc } from "../../src/cli/node";
import { styleFor } from "../../src/cli/output";
import { openai } from "../../src/providers/openai/openai-chat";
import worker, { harness } from "../harness/llm/worker";
import { FakeProvider } from "../providers/fake-provider";
import { BASE, rpc, sleep } from "../support/helpers";

type Json = Record<string, unknown>;

const agent = worker.agent as Agent<unknown>;
const defaults = { ...agent };
let fake: FakeProvider;
let counter = 0;

// The CLI's requests go to this test's agent; what it prints is captured.
let out: string[] = [];
const realFetch = globalThis.fetch;
const realWrite = proc.stdout.write;
const realErr = proc.stderr.write;
beforeEach(() => {
  out = [];
  globalThis.fetch = ((input: RequestInfo | URL, init?: RequestInit) =>
    SELF.fetch(input, init)) as typeof fetch;
  proc.stdout.write = (chunk: string) => out.push(chunk) > 0;
  proc.stderr.write = (chunk: string) => out.push(chunk) > 0;
  fake = new FakeProvider({ seed: 3, maxChunk: 23 });
  harness.fetch = fake.fetch;
  harness.requests = [];
  harness.toolRuns = [];
  harness.model = openai({
    model: "gpt-4o-mini",
    apiKey: "sk-test",
    baseUrl: "https://fake.test/v1",
  });
  agent.auth = {
    authenticate: (request: Request) => {
      const subject = request.headers.get("x-user");
      const role = request.headers.get("x-role");
      return subject ? { subject, ...(role ? { claims: { role } } : {}) } : null;
    },
  };
  agent.approvals = resolveApprovals({ approvers: { claims: { role: ["approver"] } } });
  agent.tools = {
    ...defaults.tools,
    get_capital: tool({
      description: "The capital of a country",
      input: z.object({ country: z.string() }),
      approval: true,
      run: ({ country }: { country: string }) => {
        harness.toolRuns.push(country);
        return "London";
      },
    }),
  };
});
afterEach(() => {
  globalThis.fetch = realFetch;
  proc.stdout.write = realWrite;
  proc.stderr.write = realErr;
  Object.assign(agent, defaults);
});

const COMMANDS = { approvals, approve, reject };

/** `edgelink COMMAND URL ...WORDS` as `user` (with `role`): its exit code, as main answers it. */
async function cli(
  user: string,
  role: string | null,
  command: keyof typeof COMMANDS,
  ...words: string[]
): Promise<number> {
  const headers = ["--header", `X-User: ${user}`, ...(role ? ["--header", `X-Role: ${role}`] : [])];
  const args = parseArgs([BASE, ...words, ...headers]);
  const style = styleFor(proc.stdout, true);
  const ctx: Context = { args, style, errStyle: style, json: words.includes("--json") };
  try {
    return await COMMANDS[command](ctx);
  } catch (error) {
    return error instanceof UsageError ? 2 : 1;
  }
}
const printed = () => JSON.parse(out.join("")) as unknown;

/** Alice asks; the task waits for a decision on its one call. */
async function aliceAsks() {
  fake.reply({ fixture: "openai-chat/tool-call-split-args.sse" });
  const { body } = await rpc(
    "SendMessage",
    {
      message: {
        messageId: `cli-approvals-${Date.now()}-${++counter}`,
        role: "ROLE_USER",
        parts: [{ text: "What is the capital of the UK?" }],
      },
    },
    { headers: { "x-user": "alice" } },
  );
  const task = (body.result as { task: Json }).task;
  const data = (((task.status as Json).message as Json).parts as Json[]).find((p) => p.data)
    ?.data as { calls: [{ callId: string }]; approverTaskId: string };
  return {
    taskId: task.id as string,
    callId: data.calls[0].callId,
    approverId: data.approverTaskId,
  };
}

async function ownerState(taskId: string): Promise<string> {
  for (let i = 0; i < 100; i++) {
    const { body } = await rpc("GetTask", { id: taskId }, { headers: { "x-user": "alice" } });
    const state = ((body.result as Json).status as Json).state as string;
    if (state !== "TASK_STATE_WORKING") return state;
    await sleep(20);
  }
  return "TASK_STATE_WORKING";
}

describe("edgelink approvals, approve, reject", () => {
  it("M9: approvals lists the caller's waiting calls and one task's; an approver approves by the approver's id and the tool runs once", async () => {
    const { taskId, callId, approverId } = await aliceAsks();
    expect(await cli("alice", null, "approvals", "--json")).toBe(0);
    expect(printed()).toContainEqual(
      expect.objectContaining({
        taskId,
        callId,
        tool: "get_capital",
        arguments: { country: "UK" },
      }),
    );
    out = [];
    expect(await cli("bob", "approver", "approvals", "--task", approverId, "--json")).toBe(0);
    expect(printed()).toEqual([expect.objectContaining({ taskId: approverId, callId })]);
    out = [];
    expect(await cli("alice", null, "approvals", "--task", taskId)).toBe(0);
    expect(out.join("")).toContain(callId);
    // Someone without the role finds nothing, and cannot decide.
    expect(await cli("mallory", null, "approvals", "--task", approverId)).toBe(1);
    const words = ["--task", approverId, "--call", callId];
    expect(await cli("mallory", null, "approve", ...words)).toBe(1);
    expect(harness.toolRuns).toEqual([]);
    fake.reply({ fixture: "openai-chat/after-tool-result-text.sse" });
    out = [];
    expect(await cli("bob", "approver", "approve", ...words, "--reason", "Looks right")).toBe(0);
    expect(out.join("")).toContain(`approved ${callId}`);
    expect(await ownerState(taskId)).toBe("TASK_STATE_COMPLETED");
    expect(harness.toolRuns).toEqual(["UK"]);
  });

  it("M9: reject with a reason tells the model; edited arguments go with approve", async () => {
    const first = await aliceAsks();
    fake.reply({ fixture: "openai-chat/after-tool-result-text.sse" });
    const words = ["--task", first.taskId, "--call", first.callId, "--reason", "Not today"];
    expect(await cli("alice", null, "reject", ...words)).toBe(0);
    const told = harness.requests[1]?.messages.find((m) => m.type === "function_call_output");
    expect(told).toMatchObject({ output: expect.stringContaining("Not today"), isError: true });
    expect(harness.toolRuns).toEqual([]);
    const second = await aliceAsks();
    fake.reply({ fixture: "openai-chat/after-tool-result-text.sse" });
    const edit = [
      "--task",
      second.taskId,
      "--call",
      second.callId,
      "--args",
      '{"country":"France"}',
    ];
    expect(await cli("alice", null, "approve", ...edit)).toBe(0);
    expect(harness.toolRuns).toEqual(["France"]);
  });

  it("M9: usage mistakes are named before anything is sent; a bad edit is refused by the agent and the task keeps waiting", async () => {
    const { taskId, callId } = await aliceAsks();
    const before = harness.requests.length;
    expect(await cli("alice", null, "approve", "--call", callId)).toBe(2);
    expect(await cli("alice", null, "approve", "--task", taskId)).toBe(2);
    expect(
      await cli("alice", null, "approve", "--task", taskId, "--call", callId, "--args", "[1]"),
    ).toBe(2);
    expect(
      await cli("alice", null, "approve", "--task", taskId, "--call", callId, "--args", "{"),
    ).toBe(2);
    const two = ["--call", callId, "--call", "other", "--args", "{}"];
    expect(await cli("alice", null, "approve", "--task", taskId, ...two)).toBe(2);
    expect(
      await cli("alice", null, "reject", "--task", taskId, "--call", callId, "--args", "{}"),
    ).toBe(2);
    const bad = ["--task", taskId, "--call", callId, "--args", '{"country":7}'];
    expect(await cli("alice", null, "approve", ...bad)).toBe(1);
    expect(harness.requests.length).toBe(before);
    expect(harness.toolRuns).toEqual([]);
    expect(await ownerState(taskId)).toBe("TASK_STATE_INPUT_REQUIRED");
  });
});
