import { describe, expect, it } from "vitest";
import { Artifacts } from "../../src/protocol/artifact";
import { type Message, Messages } from "../../src/protocol/message";
import { Parts } from "../../src/protocol/part";
import { Task, Tasks } from "../../src/protocol/task";
import {
  InvalidTransitionError,
  TASK_STATES,
  type TaskState,
  TERMINAL_STATES,
} from "../../src/protocol/task-state";
import { fullTask, LEGAL, wire } from "./fixtures";

const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const EARLIER = "2025-01-01T00:00:00.000Z";

/**
 * A task sitting in `state` with one earlier history entry, so "history untouched" is
 * checked against something non-empty.
 */
function taskIn(state: TaskState): Task {
  return Task.parse({
    id: `t-${state}`,
    status: { state, timestamp: EARLIER },
    history: [Messages.user("hi")],
    stateHistory: [{ previousState: "submitted", newState: state, timestamp: EARLIER }],
  });
}

const transitions = (task: Task) =>
  task.stateHistory.map((c) => `${c.previousState}->${c.newState}`);

const LEGAL_PAIRS = TASK_STATES.flatMap((from) => LEGAL[from].map((to) => [from, to] as const));
const ILLEGAL_PAIRS = TASK_STATES.flatMap((from) =>
  TASK_STATES.filter((to) => to !== from && !LEGAL[from].includes(to)).map(
    (to) => [from, to] as const,
  ),
);

describe("Task defaults (B1)", () => {
  it("B1 an empty task is submitted with empty collections and fresh ids", () => {
    const t = Task.parse({});
    expect(t.status.state).toBe("submitted");
    expect(t.status.message).toBeNull();
    expect(t.history).toEqual([]);
    expect(t.artifacts).toEqual([]);
    expect(t.metadata).toEqual({});
    expect(t.flowState).toEqual({});
    expect(t.stateHistory).toEqual([]);
    expect(t.id).toMatch(UUID);
    expect(t.contextId).toMatch(UUID);
    expect(t.contextId).not.toBe(t.id);
  });

  it("B1 createdAt and the status timestamp are ISO-8601 UTC with milliseconds", () => {
    const before = Date.now();
    const t = Task.parse({});
    expect(t.createdAt).toMatch(ISO_UTC);
    expect(new Date(t.createdAt).toISOString()).toBe(t.createdAt);
    expect(Date.parse(t.createdAt)).toBeGreaterThanOrEqual(before - 1);
    expect(t.status.timestamp).toMatch(ISO_UTC);
  });

  it("B1 ids are unique across tasks", () => {
    const tasks = Array.from({ length: 200 }, () => Task.parse({}));
    expect(new Set(tasks.map((t) => t.id)).size).toBe(200);
    expect(new Set(tasks.map((t) => t.contextId)).size).toBe(200);
  });

  it("B1 default collections are not shared between tasks", () => {
    const a = Task.parse({});
    const b = Task.parse({});
    a.metadata.x = 1;
    a.flowState.y = 2;
    a.history.push(Messages.user("only in a"));
    Tasks.begin(a);
    expect(b.metadata).toEqual({});
    expect(b.flowState).toEqual({});
    expect(b.history).toEqual([]);
    expect(b.stateHistory).toEqual([]);
    expect(b.status.state).toBe("submitted");
  });
});

describe("updateState (B3, B5, B6)", () => {
  it.each(LEGAL_PAIRS)("B3 %s → %s is allowed and recorded once", (from, to) => {
    const task = taskIn(from);
    const returned = Tasks.updateState(task, to);
    expect(returned).toBe(task);
    expect(task.status.state).toBe(to);
    expect(task.status.message).toBeNull();
    expect(task.stateHistory).toHaveLength(2);
    const entry = task.stateHistory[1];
    expect(entry).toEqual({ previousState: from, newState: to, timestamp: expect.any(String) });
    expect(entry?.timestamp).toMatch(ISO_UTC);
    expect(task.status.timestamp).toBe(entry?.timestamp);
  });

  it.each(ILLEGAL_PAIRS)("B6 %s → %s throws and leaves state and history untouched", (from, to) => {
    const task = taskIn(from);
    const before = structuredClone(task);
    expect(() => Tasks.updateState(task, to)).toThrow(InvalidTransitionError);
    expect(task).toEqual(before);
    expect(task.status.state).toBe(from);
    expect(task.stateHistory).toHaveLength(1);
  });

  it("B3 working → canceled is allowed (decision 2)", () => {
    const task = taskIn("working");
    Tasks.updateState(task, "canceled");
    expect(task.status.state).toBe("canceled");
    expect(transitions(task)).toEqual(["submitted->working", "working->canceled"]);
  });

  it("B3 the seed's named illegal moves throw with the states on the error", () => {
    for (const to of ["completed", "input-required"] as const) {
      const task = Task.parse({});
      try {
        Tasks.updateState(task, to);
        expect.unreachable(`submitted -> ${to} must throw`);
      } catch (e) {
        expect(e).toBeInstanceOf(InvalidTransitionError);
        expect((e as InvalidTransitionError).from).toBe("submitted");
        expect((e as InvalidTransitionError).to).toBe(to);
      }
      expect(task.stateHistory).toEqual([]);
    }
  });

  it.each(TASK_STATES)("B5 %s → same state is a no-op with no history entry", (state) => {
    const task = taskIn(state);
    const before = structuredClone(task);
    expect(() => Tasks.updateState(task, state)).not.toThrow();
    expect(task).toEqual(before);
    expect(task.status.timestamp).toBe(EARLIER);
  });

  it("B2 a near-miss state name is refused before anything changes", () => {
    const task = taskIn("working");
    const before = structuredClone(task);
    expect(() => Tasks.updateState(task, "input_required" as TaskState)).toThrow();
    expect(() => Tasks.updateState(task, "cancelled" as TaskState)).toThrow();
    expect(task).toEqual(before);
  });

  it("B6 each change appends {previousState, newState, timestamp} in order", () => {
    const task = Task.parse({});
    for (const s of ["working", "input-required", "working", "auth-required", "working"] as const)
      Tasks.updateState(task, s);
    Tasks.updateState(task, "completed");
    expect(transitions(task)).toEqual([
      "submitted->working",
      "working->input-required",
      "input-required->working",
      "working->auth-required",
      "auth-required->working",
      "working->completed",
    ]);
    const times = task.stateHistory.map((c) => Date.parse(c.timestamp));
    expect(times).toEqual([...times].sort((a, b) => a - b));
  });

  it("B8 the server can never move a task into unknown", () => {
    for (const from of TASK_STATES.filter((s) => s !== "unknown")) {
      expect(() => Tasks.updateState(taskIn(from), "unknown")).toThrow(InvalidTransitionError);
    }
  });
});

describe("terminal states (B4)", () => {
  const ops: Record<string, (t: Task) => unknown> = {
    begin: (t) => Tasks.begin(t),
    requireInput: (t) => Tasks.requireInput(t, Messages.agent("more?")),
    "updateState(working)": (t) => Tasks.updateState(t, "working"),
  };
  const cases = [...TERMINAL_STATES].flatMap((s) =>
    Object.keys(ops).map((name) => [s, name] as const),
  );

  it.each(cases)("B4 a %s task refuses %s and is left as it was", (state, name) => {
    const task = taskIn(state);
    const before = structuredClone(task);
    expect(() => ops[name]?.(task)).toThrow(InvalidTransitionError);
    expect(task).toEqual(before);
  });

  it.each([
    ["completed", "fail"],
    ["completed", "cancel"],
    ["failed", "complete"],
    ["failed", "cancel"],
    ["canceled", "complete"],
    ["canceled", "fail"],
    ["rejected", "complete"],
    ["rejected", "fail"],
    ["rejected", "cancel"],
  ] as const)("B4 a %s task refuses %s and is left as it was", (state, op) => {
    const task = taskIn(state);
    const before = structuredClone(task);
    const run = {
      complete: () => Tasks.complete(task, "late answer"),
      fail: () => Tasks.fail(task, "late error"),
      cancel: () => Tasks.cancel(task, "late reason"),
    }[op];
    expect(run).toThrow(InvalidTransitionError);
    expect(task).toEqual(before);
  });

  // Regression: complete/fail/cancel on a task already in their own terminal state used to
  // be planned as a same-state no-op (B5), so their side effects still ran (B4 wins).
  it("B4 complete() on a completed task must not append another agent message", () => {
    const task = Tasks.complete(Tasks.create(Messages.user("q")), "first answer");
    const before = structuredClone(task);
    try {
      Tasks.complete(task, "second answer");
    } catch {
      // throwing is an acceptable fix; changing the task is not
    }
    expect(task).toEqual(before);
  });

  it("B4 fail() on a failed task must not overwrite metadata.error", () => {
    const task = Tasks.fail(Tasks.create(Messages.user("q")), "original cause");
    try {
      Tasks.fail(task, "something else");
    } catch {
      // throwing is an acceptable fix
    }
    expect(task.metadata.error).toBe("original cause");
  });

  it("B4 cancel() on a canceled task must not overwrite metadata.cancelReason", () => {
    const task = Tasks.cancel(Tasks.create(Messages.user("q")), "user asked");
    try {
      Tasks.cancel(task, "timeout");
    } catch {
      // throwing is an acceptable fix
    }
    expect(task.metadata.cancelReason).toBe("user asked");
  });
});

describe("convenience transitions (B7)", () => {
  it("B7 begin moves submitted and interrupted tasks to working", () => {
    for (const from of ["submitted", "input-required", "auth-required"] as const) {
      const task = taskIn(from);
      Tasks.begin(task);
      expect(task.status.state).toBe("working");
      expect(transitions(task).slice(1)).toEqual([`${from}->working`]);
    }
  });

  it("B7 begin on a working task is a no-op", () => {
    const task = taskIn("working");
    Tasks.begin(task);
    expect(task.stateHistory).toHaveLength(1);
  });

  it("B7 requireInput from submitted passes through working (two entries), then appends the message", () => {
    const first = Messages.user("book a flight");
    const ask = Messages.agent("where to?");
    const task = Tasks.create(first);
    expect(Tasks.requireInput(task, ask)).toBe(task);
    expect(task.status.state).toBe("input-required");
    expect(transitions(task)).toEqual(["submitted->working", "working->input-required"]);
    expect(task.history).toEqual([first, ask]);
    expect(Tasks.lastItem(task)).toBe(ask);
  });

  it("B7 requireInput from working is one entry; without a message history is unchanged", () => {
    const task = taskIn("working");
    Tasks.requireInput(task);
    expect(transitions(task).slice(1)).toEqual(["working->input-required"]);
    expect(task.history).toHaveLength(1);
  });

  it("B7 requireInput from auth-required also passes through working", () => {
    const task = taskIn("auth-required");
    Tasks.requireInput(task);
    expect(transitions(task).slice(1)).toEqual([
      "auth-required->working",
      "working->input-required",
    ]);
  });

  it("B7 requireInput on a task already waiting for input only appends the message", () => {
    const task = taskIn("input-required");
    const again = Messages.agent("still need a date");
    Tasks.requireInput(task, again);
    expect(task.stateHistory).toHaveLength(1);
    expect(task.history.at(-1)).toBe(again);
  });

  it("B7 requireInput that is refused does not append its message", () => {
    const task = taskIn("completed");
    expect(() => Tasks.requireInput(task, Messages.agent("late"))).toThrow(InvalidTransitionError);
    expect(task.history).toHaveLength(1);
  });

  it.each([
    ["submitted", ["submitted->working", "working->completed"]],
    ["input-required", ["input-required->working", "working->completed"]],
    ["auth-required", ["auth-required->working", "working->completed"]],
    ["working", ["working->completed"]],
  ] as const)(
    "B7 complete(text) from %s passes through working then appends an agent message",
    (from, steps) => {
      const task = taskIn(from);
      Tasks.complete(task, "the answer is 4");
      expect(task.status.state).toBe("completed");
      expect(transitions(task).slice(1)).toEqual(steps);
      expect(task.history).toHaveLength(2);
      const reply = task.history[1] as Message;
      expect(reply.role).toBe("agent");
      expect(reply.parts).toEqual([{ type: "text", content: "the answer is 4" }]);
      expect(Tasks.lastItem(task)).toBe(reply);
    },
  );

  it.each([
    ["submitted", ["submitted->failed"]],
    ["working", ["working->failed"]],
    ["input-required", ["input-required->failed"]],
    ["auth-required", ["auth-required->failed"]],
  ] as const)("B7 fail(msg) from %s records the error after the transition", (from, steps) => {
    const task = taskIn(from);
    Tasks.fail(task, "upstream timeout");
    expect(task.status.state).toBe("failed");
    expect(transitions(task).slice(1)).toEqual(steps);
    expect(task.metadata).toEqual({ error: "upstream timeout" });
  });

  it("B7 fail on a completed task throws and metadata.error stays absent", () => {
    const task = Tasks.complete(Tasks.create(Messages.user("q")), "a");
    expect(() => Tasks.fail(task, "too late")).toThrow(InvalidTransitionError);
    expect("error" in task.metadata).toBe(false);
    expect(task.status.state).toBe("completed");
  });

  it.each(["submitted", "working", "input-required", "auth-required"] as const)(
    "B7 cancel(reason) from %s stores the reason",
    (from) => {
      const task = taskIn(from);
      Tasks.cancel(task, "user changed their mind");
      expect(task.status.state).toBe("canceled");
      expect(transitions(task).slice(1)).toEqual([`${from}->canceled`]);
      expect(task.metadata.cancelReason).toBe("user changed their mind");
    },
  );

  it.each([
    ["no reason", undefined],
    ["null", null],
    ["an empty string", ""],
  ] as const)("B7 cancel with %s stores no cancelReason", (_label, reason) => {
    const task = taskIn("working");
    Tasks.cancel(task, reason);
    expect(task.status.state).toBe("canceled");
    expect("cancelReason" in task.metadata).toBe(false);
  });

  it("B7 cancel on a completed task throws and stores no reason", () => {
    const task = taskIn("completed");
    expect(() => Tasks.cancel(task, "why")).toThrow(InvalidTransitionError);
    expect("cancelReason" in task.metadata).toBe(false);
  });

  it("B7 a transition clears the previous status message", () => {
    const task = taskIn("working");
    task.status.message = Messages.agent("thinking...");
    Tasks.requireInput(task);
    expect(task.status.message).toBeNull();
  });
});

describe("factories (B11)", () => {
  it("B11 create(msg) holds exactly that message and is submitted", () => {
    const msg = Messages.user("hello");
    const task = Tasks.create(msg);
    expect(task.history).toHaveLength(1);
    expect(task.history[0]).toBe(msg);
    expect(task.status.state).toBe("submitted");
    expect(task.stateHistory).toEqual([]);
    expect(task.artifacts).toEqual([]);
  });

  it("B11 create honours a given id and contextId and generates the rest", () => {
    const task = Tasks.create(Messages.user("x"), { id: "task-9", contextId: "ctx-9" });
    expect(task.id).toBe("task-9");
    expect(task.contextId).toBe("ctx-9");
    const other = Tasks.create(Messages.user("x"), { contextId: "ctx-9" });
    expect(other.id).toMatch(UUID);
    expect(other.contextId).toBe("ctx-9");
  });

  it("B11 createInfer makes one user message with one infer part", () => {
    const task = Tasks.createInfer({
      prompt: "Summarise",
      user: "alice",
      outputSchema: { type: "object", properties: { summary: { type: "string" } } },
      metadata: { temperature: 0 },
    });
    expect(task.status.state).toBe("submitted");
    expect(task.history).toHaveLength(1);
    const msg = task.history[0] as Message;
    expect(msg.role).toBe("user");
    expect(msg.parts).toEqual([
      {
        type: "infer",
        content: {
          prompt: "Summarise",
          user: "alice",
          outputSchema: { type: "object", properties: { summary: { type: "string" } } },
          metadata: { temperature: 0 },
        },
      },
    ]);
  });

  it("B11 createInfer with nothing gives an infer part with no keys (C7)", () => {
    const msg = Tasks.createInfer().history[0] as Message;
    expect(msg.parts).toEqual([{ type: "infer", content: {} }]);
    expect(Object.keys((msg.parts[0] as { content: object }).content)).toEqual([]);
  });
});

describe("lastItem (B12) and artifacts in a task (D4)", () => {
  it("B12 an empty task has no last item", () => {
    expect(Tasks.lastItem(Task.parse({}))).toBeNull();
  });

  it("B12 returns whichever of message or artifact was added last", () => {
    const task = Tasks.create(Messages.user("q"));
    const art = Artifacts.create({ name: "a" });
    Tasks.addArtifact(task, art);
    expect(Tasks.lastItem(task)).toBe(art);
    const msg = Messages.agent("r");
    Tasks.addMessage(task, msg);
    expect(Tasks.lastItem(task)).toBe(msg);
    const art2 = Artifacts.create({ name: "b" });
    Tasks.addArtifact(task, art2);
    // With messages present, a history-first scan would wrongly answer `msg` here.
    expect(Tasks.lastItem(task)).toBe(art2);
  });

  it("B12 a task rebuilt from JSON falls back to its last message", () => {
    const task = Task.parse(wire(Tasks.create(Messages.user("q"))));
    expect(Tasks.lastItem(task)).toEqual(task.history[0]);
  });

  // Regression: a task rebuilt from storage has no cached last item; the fallback used to
  // prefer history over artifacts regardless of age (B10 runs the latest item's parts).
  it("B12 a rebuilt task still reports an artifact that is newer than the last message", () => {
    const task = Task.parse({
      history: [
        Messages.create({ parts: [Parts.text("q")], timestamp: "2025-01-01T00:00:00.000Z" }),
      ],
      artifacts: [Artifacts.create({ artifactId: "new", timestamp: "2025-01-01T00:00:05.000Z" })],
    });
    expect(Tasks.lastItem(task)).toMatchObject({ artifactId: "new" });
  });

  it("B12 a rebuilt task reports its last message when that is the newer item", () => {
    const task = Task.parse({
      history: [Messages.create({ messageId: "new", timestamp: "2025-01-01T00:00:05.000Z" })],
      artifacts: [Artifacts.create({ timestamp: "2025-01-01T00:00:00.000Z" })],
    });
    expect(Tasks.lastItem(task)).toMatchObject({ messageId: "new" });
  });

  it("D4 adding an artifact never changes the state or its history", () => {
    for (const state of ["submitted", "working", "input-required"] as const) {
      const task = taskIn(state);
      const before = structuredClone(task);
      Tasks.addArtifact(task, Artifacts.create());
      expect(task.status).toEqual(before.status);
      expect(task.stateHistory).toEqual(before.stateHistory);
      expect(task.artifacts).toHaveLength(1);
    }
  });
});

describe("serialization (B13, B14)", () => {
  it("B13 the state is serialised as its plain string", () => {
    const json = wire(Tasks.begin(Tasks.create(Messages.user("q")))) as {
      status: { state: unknown };
      stateHistory: { newState: unknown }[];
    };
    expect(json.status.state).toBe("working");
    expect(json.stateHistory[0]?.newState).toBe("working");
  });

  it("B13 a task survives JSON and Task.parse unchanged", () => {
    const task = fullTask();
    expect(Task.parse(wire(task))).toEqual(task);
  });

  it("B13 a missing status means submitted", () => {
    const task = Task.parse({ id: "t1", history: [] });
    expect(task.status.state).toBe("submitted");
    expect(task.status.message).toBeNull();
    expect(task.status.timestamp).toMatch(ISO_UTC);
  });

  it.each(["running", "input_required", "cancelled", "TASK_STATE_WORKING"])(
    "B13 an unknown state string %j is an error naming status.state",
    (state) => {
      const result = Task.safeParse({ status: { state } });
      expect(result.success).toBe(false);
      expect(result.error?.issues.map((i) => i.path)).toEqual([["status", "state"]]);
    },
  );

  it("B13 a status object without a state means submitted", () => {
    const task = Task.parse({ status: { timestamp: EARLIER } });
    expect(task.status).toEqual({ state: "submitted", message: null, timestamp: EARLIER });
  });

  it("B13 nested messages, parts and artifacts are rebuilt with their defaults", () => {
    const task = Task.parse({
      status: { state: "working", message: { role: "agent", parts: [] } },
      history: [
        {
          role: "agent",
          parts: [
            { type: "json", content: { a: 1 } },
            { type: "tool_call", content: { toolName: "lookup" } },
          ],
        },
      ],
      artifacts: [{ parts: [{ type: "text", content: "x" }] }],
      stateHistory: [{ previousState: "submitted", newState: "working", timestamp: EARLIER }],
    });
    const msg = task.history[0] as Message;
    expect(msg.messageId).toMatch(UUID);
    expect(msg.timestamp).toMatch(ISO_UTC);
    expect(msg.parts[0]).toEqual({ type: "data", content: { a: 1 } });
    expect(msg.parts[1]).toEqual({
      type: "tool_call",
      content: { toolName: "lookup", args: {}, callId: expect.stringMatching(/^call_/) },
    });
    expect(task.status.message?.role).toBe("agent");
    expect(task.artifacts[0]).toMatchObject({ kind: "result", name: null, metadata: {} });
    expect(task.stateHistory).toEqual([
      { previousState: "submitted", newState: "working", timestamp: EARLIER },
    ]);
  });

  it("B13 a bad nested field is reported at its full path", () => {
    const result = Task.safeParse({
      history: [Messages.user("ok"), { role: "tool", parts: [] }],
      stateHistory: [{ previousState: "submitted", newState: "cancelled", timestamp: EARLIER }],
    });
    expect(result.success).toBe(false);
    const paths = result.error?.issues.map((i) => i.path.join("."));
    expect(paths).toContain("history.1.role");
    expect(paths).toContain("stateHistory.0.newState");
  });

  it("B14 flowState defaults to a fresh empty object and keeps whatever is put in it", () => {
    const task = Task.parse({});
    const handle = { notJson: () => 1 };
    task.flowState.step = handle;
    expect(task.flowState.step).toBe(handle);
    expect(Task.parse({}).flowState).toEqual({});
  });
});
