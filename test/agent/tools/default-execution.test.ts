import { describe, expect, it } from "vitest";
import { z } from "zod";
import { resolveAgent } from "../../../src/agent/definition";
import type { ArtifactUpdate, RunContext } from "../../../src/agent/run-context";
import { tool } from "../../../src/agent/tool";
import { runDefaultExecution } from "../../../src/agent/tools/default-execution";
import { Conversation } from "../../../src/history/conversation";
import { Artifacts } from "../../../src/protocol/artifact";
import { Messages } from "../../../src/protocol/message";
import { type Part, Parts } from "../../../src/protocol/part";
import { type Task, Tasks } from "../../../src/protocol/task";
import type { Model } from "../../../src/providers/base/types";

/** A RunContext over the pure task model, recording what the execution did. */
function contextFor(parts: Part[], signal = new AbortController().signal) {
  const message = Messages.create({ role: "user", parts });
  const task: Task = Tasks.begin(Tasks.create(message));
  const artifacts: ArtifactUpdate[] = [];
  const announced: { parts: Part[]; transient: boolean }[] = [];
  const ctx: RunContext = {
    taskId: task.id,
    contextId: task.contextId,
    message,
    history: task.history,
    task,
    conversation: new Conversation().readonly(),
    conversationWindow: () => Promise.reject(new Error("not used by the default execution")),
    signal,
    env: {},
    status: (parts, options) =>
      announced.push({ parts: parts as Part[], transient: options?.transient ?? false }),
    artifact: (update) => {
      artifacts.push(update);
      Tasks.addArtifact(task, Artifacts.create({ parts: update.parts }));
      return "a1";
    },
    record: () => [],
    requestInput: (q) => Tasks.requireInput(task, Messages.agent(String(q))),
    requestAuth: () => Tasks.updateState(task, "auth-required"),
    complete: () => Tasks.updateState(task, "completed"),
    fail: (m) => Tasks.fail(task, m),
    reject: () => Tasks.updateState(task, "rejected"),
    delegate: () => {
      throw new Error("not used by the default execution");
    },
    approval: () => {
      throw new Error("not used by the default execution");
    },
    ask: () => {
      throw new Error("not used by the default execution");
    },
  };
  return { ctx, task, artifacts, announced };
}

const tools = {
  add: tool({
    description: "adds",
    input: z.object({ a: z.number(), b: z.number() }),
    run: ({ a, b }) => a + b,
  }),
  boom: tool({
    description: "throws",
    input: z.object({}),
    run: () => {
      throw new Error("kaboom");
    },
  }),
};

describe("default execution (B10)", () => {
  it("runs tool calls of the latest message and completes with their outputs", async () => {
    const { ctx, task, artifacts } = contextFor([
      Parts.toolCall("add", { a: 1, b: 2 }, "c1"),
      Parts.toolCall("add", { a: 5, b: 5 }, "c2"),
    ]);
    await runDefaultExecution(ctx, { tools, infer: null });
    expect(task.status.state).toBe("completed");
    expect(artifacts[0]?.parts).toEqual([Parts.toolOutput("c1", 3), Parts.toolOutput("c2", 10)]);
  });

  it("an unknown tool gives a failed tool_output and fails the task (C5)", async () => {
    const { ctx, task, artifacts } = contextFor([Parts.toolCall("nope", {}, "c9")]);
    await runDefaultExecution(ctx, { tools, infer: null });
    expect(task.status.state).toBe("failed");
    expect(artifacts[0]?.parts[0]).toEqual(Parts.toolOutput("c9", null, "Unknown tool: nope"));
    expect(task.metadata.error).toBe("Tool nope failed: Unknown tool: nope");
  });

  it("a tool exception and invalid arguments become error outputs (C6)", async () => {
    const { ctx, task, artifacts } = contextFor([
      Parts.toolCall("boom", {}, "b1"),
      Parts.toolCall("add", { a: "x" }, "b2"),
    ]);
    await runDefaultExecution(ctx, { tools, infer: null });
    expect(task.status.state).toBe("failed");
    const outputs = artifacts[0]?.parts as { content: { error: string | null } }[];
    expect(outputs[0]?.content.error).toBe("kaboom");
    expect(outputs[1]?.content.error).toMatch(/^Invalid arguments: a:/);
  });

  it("an error part fails the task (C9)", async () => {
    const { ctx, task } = contextFor([Parts.error("E42", "upstream broke", true)]);
    await runDefaultExecution(ctx, { tools, infer: null });
    expect(task.status.state).toBe("failed");
    expect(task.metadata.error).toBe("E42: upstream broke");
  });

  it("a status part asking for input ends input-required (C10)", async () => {
    const { ctx, task } = contextFor([Parts.status("input-required", "Which city?")]);
    await runDefaultExecution(ctx, { tools, infer: null });
    expect(task.status.state).toBe("input-required");
    expect(task.history.at(-1)?.parts[0]).toEqual(Parts.text("Which city?"));
  });

  it("infer parts call the model; without one they fail clearly (C7, C8)", async () => {
    const withModel = contextFor([Parts.infer({ prompt: "2+2?" })]);
    await runDefaultExecution(withModel.ctx, {
      tools,
      infer: (part) => `answer to ${part.content.prompt}`,
    });
    expect(withModel.task.status.state).toBe("completed");
    expect(withModel.artifacts[0]?.parts).toEqual([Parts.inferOutput("answer to 2+2?")]);

    const without = contextFor([Parts.infer({ prompt: "2+2?" })]);
    await runDefaultExecution(without.ctx, { tools, infer: null });
    expect(without.task.status.state).toBe("failed");
    expect(without.artifacts[0]?.parts[0]).toMatchObject({
      type: "error",
      content: { code: "NO_MODEL" },
    });
  });

  it("plain text with nothing to execute completes without an artifact", async () => {
    const { ctx, task, artifacts } = contextFor([Parts.text("just chatting")]);
    await runDefaultExecution(ctx, { tools, infer: null });
    expect(task.status.state).toBe("completed");
    expect(artifacts).toEqual([]);
  });

  it("stops when the task is canceled (B9)", async () => {
    const controller = new AbortController();
    controller.abort(new Error("canceled"));
    const { ctx } = contextFor([Parts.toolCall("add", { a: 1, b: 1 })], controller.signal);
    await expect(runDefaultExecution(ctx, { tools, infer: null })).rejects.toThrow("canceled");
  });

  it("H15: each tool_call part is announced before it runs and its result after, as transient status parts", async () => {
    const { ctx, announced } = contextFor([
      Parts.toolCall("add", { a: 1, b: 2 }, "c1"),
      Parts.toolCall("boom", {}, "c2"),
    ]);
    await runDefaultExecution(ctx, { tools, infer: null });
    expect(announced.map((a) => [a.transient, a.parts[0]?.type])).toEqual([
      [true, "tool_call"],
      [true, "tool_output"],
      [true, "tool_call"],
      [true, "tool_output"],
    ]);
    expect(announced[1]?.parts[0]?.content).toEqual({
      callId: "c1",
      toolName: "add",
      result: 3,
      error: null,
    });
    expect(announced[3]?.parts[0]?.content).toMatchObject({ toolName: "boom", error: "kaboom" });
  });

  it("H12: a tool_call part past the agent's toolTimeoutMs gets a timeout error output", async () => {
    const slow = {
      wait: tool({
        description: "never answers",
        input: z.object({}),
        run: (_args, { signal }) =>
          new Promise((_, reject) => signal.addEventListener("abort", () => reject(signal.reason))),
      }),
    };
    const { ctx, task, artifacts } = contextFor([Parts.toolCall("wait", {}, "c1")]);
    await runDefaultExecution(ctx, { tools: slow, infer: null, toolTimeoutMs: 20 });
    expect(artifacts[0]?.parts).toEqual([
      Parts.toolOutput("c1", null, "Tool wait timed out after 20 ms"),
    ]);
    expect(task.status.state).toBe("failed");
  });

  it("H11: tool_call parts beyond maxToolCallsPerTurn do not run and get error outputs", async () => {
    const { ctx, artifacts } = contextFor([
      Parts.toolCall("add", { a: 1, b: 1 }, "c1"),
      Parts.toolCall("add", { a: 2, b: 2 }, "c2"),
      Parts.toolCall("add", { a: 3, b: 3 }, "c3"),
    ]);
    await runDefaultExecution(ctx, { tools, infer: null, maxToolCallsPerTurn: 2 });
    expect(artifacts[0]?.parts).toEqual([
      Parts.toolOutput("c1", 2),
      Parts.toolOutput("c2", 4),
      Parts.toolOutput("c3", null, "Not run: at most 2 tool calls per message"),
    ]);
  });
});

/** A model that must never be called: these tests are about what runs without it. */
const unusedModel: Model = {
  provider: "test",
  model: "unused",
  capabilities: {} as Model["capabilities"],
  streamBatches: () => {
    throw new Error("the model was called");
  },
};

describe("client control parts on a model-backed agent (C5, C7)", () => {
  const card = { name: "M", description: "model-backed" };

  it("C5, C7: an agent with a model refuses both by default; one without accepts both (B10)", () => {
    const withModel = resolveAgent({ card, model: unusedModel, tools });
    expect([withModel.acceptInfer, withModel.acceptToolCalls]).toEqual([false, false]);
    const plain = resolveAgent({ card, tools });
    expect([plain.acceptInfer, plain.acceptToolCalls]).toEqual([true, true]);
    const optedIn = resolveAgent({
      card,
      model: unusedModel,
      tools,
      acceptInfer: true,
      acceptToolCalls: true,
    });
    expect([optedIn.acceptInfer, optedIn.acceptToolCalls]).toEqual([true, true]);
  });

  it("C5: a tool_call part a model-backed agent does not accept runs nothing and fails the task", async () => {
    let ran = 0;
    const counted = {
      add: tool({
        description: "adds",
        input: z.object({ a: z.number(), b: z.number() }),
        run: ({ a, b }) => {
          ran++;
          return a + b;
        },
      }),
    };
    const agent = resolveAgent({ card, model: unusedModel, tools: counted });
    const { ctx, task, artifacts } = contextFor([
      Parts.toolCall("add", { a: 1, b: 2 }, "c1"),
      Parts.infer({ prompt: "2+2?" }),
    ]);
    await runDefaultExecution(ctx, agent);
    expect(ran).toBe(0);
    expect(task.status.state).toBe("failed");
    expect(task.metadata.error).toBe("tool_call parts are not accepted (acceptToolCalls)");
    expect(artifacts[0]?.parts).toEqual([
      Parts.error("NOT_ACCEPTED", "tool_call parts are not accepted (acceptToolCalls)"),
      Parts.error("NOT_ACCEPTED", "infer parts are not accepted (acceptInfer)"),
    ]);
  });

  it("C5, H16: with acceptToolCalls, blockedTools and allowedTools still decide what a tool_call part may run", async () => {
    const blocked = resolveAgent({
      card,
      model: unusedModel,
      tools,
      acceptToolCalls: true,
      blockedTools: ["boom"],
    });
    const a = contextFor([
      Parts.toolCall("add", { a: 2, b: 3 }, "c1"),
      Parts.toolCall("boom", {}, "c2"),
    ]);
    await runDefaultExecution(a.ctx, blocked);
    expect(a.artifacts[0]?.parts).toEqual([
      Parts.toolOutput("c1", 5),
      Parts.toolOutput("c2", null, "Unknown tool: boom"),
    ]);

    const allowed = resolveAgent({
      card,
      model: unusedModel,
      tools,
      acceptToolCalls: true,
      allowedTools: ["boom"],
    });
    const b = contextFor([Parts.toolCall("add", { a: 2, b: 3 }, "c1")]);
    await runDefaultExecution(b.ctx, allowed);
    expect(b.artifacts[0]?.parts).toEqual([Parts.toolOutput("c1", null, "Unknown tool: add")]);
  });
});
