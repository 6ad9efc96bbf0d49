import { describe, expect, it } from "vitest";
import type { Artifact } from "../../../src/protocol/artifact";
import type { JsonObject } from "../../../src/protocol/json";
import { MARK } from "../../../src/protocol/markers";
import { type Message, Messages } from "../../../src/protocol/message";
import { type Part, Parts } from "../../../src/protocol/part";
import { Task, Tasks } from "../../../src/protocol/task";
import { TASK_STATES, type TaskState } from "../../../src/protocol/task-state";
import {
  artifactFromV1,
  artifactToV1,
  eventToV1,
  messageFromV1,
  messageToV1,
  partFromV1,
  partToV1,
  stateToV1,
  statusToV1,
  taskFromV1,
  taskToV1,
  V1Artifact,
  V1Message,
  V1Part,
  V1Task,
  V1TaskState,
} from "../../../src/protocol/wire/wire-v1";
import {
  bareArtifact,
  everyPart,
  fullArtifact,
  fullMessage,
  fullTask,
  ROLES,
  wire,
} from "../fixtures";

// Every trip goes through JSON text and the v1 zod schema, as a request body would.
const viaV1 = {
  part: (p: Part) => partFromV1(V1Part.parse(wire(partToV1(p)))),
  message: (m: Message) => messageFromV1(V1Message.parse(wire(messageToV1(m)))),
  artifact: (a: Artifact) => artifactFromV1(V1Artifact.parse(wire(artifactToV1(a)))),
  task: (t: Task) => taskFromV1(V1Task.parse(wire(taskToV1(t)))),
};

const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const TS = "2025-06-01T12:00:00.123Z";

function taskWithHistory(n: number): Task {
  const task = Tasks.create(Messages.user("m0"), { id: "t", contextId: "c" });
  for (let i = 1; i < n; i++) Tasks.addMessage(task, Messages.agent(`m${i}`));
  Tasks.addArtifact(task, bareArtifact());
  return task;
}

describe("v1 round trips: model → v1 JSON → model", () => {
  it.each(Object.entries(everyPart()))("C3 a %s part comes back equal", (_, part) => {
    expect(viaV1.part(part)).toStrictEqual(part);
  });

  it.each(ROLES)("C1 a %s message with every field and every part comes back equal", (role) => {
    const m = fullMessage(role);
    expect(viaV1.message(m)).toStrictEqual(m);
  });

  it.each(ROLES)("C2 a plain %s message from the factory comes back equal", (role) => {
    const m = Messages[role]("hello");
    expect(viaV1.message(m)).toStrictEqual(m);
  });

  it("D1 an artifact with every descriptor set comes back equal", () => {
    const a = fullArtifact();
    expect(viaV1.artifact(a)).toEqual(a);
  });

  it("D1 an artifact with null descriptors comes back equal, nulls included", () => {
    const a = bareArtifact();
    const back = viaV1.artifact(a);
    expect(back).toEqual(a);
    expect(back.name).toBeNull();
    expect(back.uri).toBeNull();
  });

  it("B13 a full task (state history, status message, metadata) comes back equal", () => {
    const t = fullTask();
    expect(t.stateHistory.length).toBeGreaterThan(3);
    const back = viaV1.task(t);
    expect(back).toEqual(t);
    expect(Task.parse(wire(back))).toEqual(t);
  });

  it.each(TASK_STATES)("B13 a task in state %s comes back in that state", (state) => {
    const t = Task.parse({ status: { state }, history: [Messages.user("q")] });
    expect(viaV1.task(t)).toEqual(t);
  });

  it("B14 flowState does not travel", () => {
    const t = fullTask();
    t.flowState.plan = ["a", "b"];
    expect(JSON.stringify(taskToV1(t))).not.toContain("plan");
    expect(viaV1.task(t).flowState).toEqual({});
  });
});

describe("v1 wire shapes", () => {
  it("uses the ProtoJSON TaskState names", () => {
    const expected: Record<TaskState, string> = {
      submitted: "TASK_STATE_SUBMITTED",
      working: "TASK_STATE_WORKING",
      "input-required": "TASK_STATE_INPUT_REQUIRED",
      "auth-required": "TASK_STATE_AUTH_REQUIRED",
      completed: "TASK_STATE_COMPLETED",
      canceled: "TASK_STATE_CANCELED",
      failed: "TASK_STATE_FAILED",
      rejected: "TASK_STATE_REJECTED",
      unknown: "TASK_STATE_UNSPECIFIED",
    };
    for (const s of TASK_STATES) {
      expect(stateToV1(s)).toBe(expected[s]);
      expect(V1TaskState.parse(expected[s])).toBe(s);
    }
  });

  it("C4 text and data parts are A2A's own, with mediaType and metadata alongside", () => {
    expect(partToV1(Parts.text("hi"))).toStrictEqual({ text: "hi" });
    expect(
      partToV1({ type: "text", content: "# h", mediaType: "text/markdown", metadata: { a: 1 } }),
    ).toStrictEqual({ text: "# h", mediaType: "text/markdown", metadata: { a: 1 } });
    expect(partToV1(Parts.data([1, 2]))).toStrictEqual({ data: [1, 2] });
    expect(partToV1(Parts.data(null))).toStrictEqual({ data: null });
  });

  it("C12 files travel as url or raw with filename and mediaType", () => {
    expect(
      partToV1(
        Parts.file({ url: "https://x/a.pdf", mediaType: "application/pdf", filename: "a.pdf" }),
      ),
    ).toStrictEqual({ url: "https://x/a.pdf", filename: "a.pdf", mediaType: "application/pdf" });
    expect(partToV1(Parts.file({ bytes: "aGVsbG8=" }))).toStrictEqual({ raw: "aGVsbG8=" });
  });

  it.each([
    ["tool_call", Parts.toolCall("add", { a: 1 }, "c1")],
    ["tool_output", Parts.toolOutput("c1", 3)],
    ["infer", Parts.infer({ prompt: "p" })],
    ["infer_output", Parts.inferOutput("s")],
    ["error", Parts.error("E", "m")],
    ["status", Parts.status("working")],
    ["route", Parts.route("k")],
    ["decision", Parts.decision("k")],
    ["x-unknown", { type: "x-unknown", content: [1] } as Part],
  ])("C3 a %s part rides in a data part marked with its type", (type, part) => {
    expect(partToV1(part)).toStrictEqual({
      data: part.content,
      mediaType: "application/json",
      metadata: { [MARK.part]: type },
    });
  });

  it("C3 user metadata on our own part types sits next to the marker", () => {
    const part: Part = { ...Parts.error("E", "m"), metadata: { trace: "t" } };
    expect(partToV1(part).metadata).toStrictEqual({ trace: "t", "edgelink/part": "error" });
  });

  it.each([
    ["user", "ROLE_USER", undefined],
    ["agent", "ROLE_AGENT", undefined],
    ["assistant", "ROLE_AGENT", "assistant"],
    ["system", "ROLE_USER", "system"],
  ] as const)("C1 a %s message is %s on the wire", (role, wireRole, mark) => {
    const m = Messages.create({ messageId: "m1", role, parts: [Parts.text("x")], timestamp: TS });
    const metadata: JsonObject = { "edgelink/timestamp": TS };
    if (mark) metadata["edgelink/role"] = mark;
    expect(messageToV1(m)).toStrictEqual({
      messageId: "m1",
      role: wireRole,
      parts: [{ text: "x" }],
      metadata,
    });
  });

  it("C1 optional message fields use their A2A names", () => {
    const json = messageToV1(fullMessage("user"));
    expect(json).toMatchObject({
      messageId: "msg-user",
      contextId: "ctx-1",
      taskId: "task-1",
      extensions: ["https://example.com/ext/v1"],
      referenceTaskIds: ["task-0"],
      metadata: { source: "test", "edgelink/timestamp": "2025-06-01T12:00:00.123Z" },
    });
    expect("timestamp" in json).toBe(false);
    expect("role" in (json.metadata as JsonObject)).toBe(false);
  });

  it("D1 artifact name and description are A2A fields; our descriptors ride in one marker", () => {
    expect(artifactToV1(fullArtifact())).toStrictEqual({
      artifactId: "art-1",
      name: "report",
      description: "the final report",
      parts: [
        { text: "42" },
        { data: { n: 42 } },
        {
          data: { toolName: "t", args: {}, callId: "c1" },
          mediaType: "application/json",
          metadata: { "edgelink/part": "tool_call" },
        },
      ],
      metadata: {
        lang: "en",
        "edgelink/artifact": {
          kind: "summary",
          timestamp: "2025-06-01T12:00:01.000Z",
          uri: "https://example.com/report",
          mediaType: "text/markdown",
          actionId: "act-7",
        },
      },
      extensions: ["https://example.com/ext/v1"],
    });
  });

  it("D3 null descriptors are left out of the wire, not sent as null", () => {
    expect(artifactToV1(bareArtifact())).toStrictEqual({
      artifactId: "art-2",
      parts: [],
      metadata: {
        "edgelink/artifact": { kind: "result", timestamp: "2025-06-01T12:00:02.000Z" },
      },
    });
  });

  it("B13 a task carries its state history and createdAt as markers", () => {
    const t = fullTask();
    const json = taskToV1(t);
    expect(Object.keys(json).sort()).toEqual([
      "artifacts",
      "contextId",
      "history",
      "id",
      "metadata",
      "status",
    ]);
    expect(json.status).toStrictEqual(statusToV1(t.status));
    expect((json.status as JsonObject).state).toBe("TASK_STATE_COMPLETED");
    expect(json.metadata).toStrictEqual({
      owner: "alice",
      tags: ["a", "b"],
      score: 0.5,
      "edgelink/stateHistory": wire(t.stateHistory),
      "edgelink/createdAt": t.createdAt,
    });
  });

  it("a status without a message has just state and timestamp", () => {
    expect(statusToV1({ state: "working", message: null, timestamp: TS })).toStrictEqual({
      state: "TASK_STATE_WORKING",
      timestamp: TS,
    });
  });
});

describe("taskToV1 options (§3.2.4, ListTasks)", () => {
  const ids = (json: JsonObject) =>
    (json.history as JsonObject[]).map((m) => (m.parts as JsonObject[])[0]?.text);

  it("historyLength undefined sends the whole history", () => {
    expect(ids(taskToV1(taskWithHistory(4)))).toEqual(["m0", "m1", "m2", "m3"]);
  });

  it("historyLength 0 leaves the history key out entirely", () => {
    const json = taskToV1(taskWithHistory(4), { historyLength: 0 });
    expect("history" in json).toBe(false);
  });

  it("historyLength n sends the last n messages, oldest first", () => {
    expect(ids(taskToV1(taskWithHistory(4), { historyLength: 2 }))).toEqual(["m2", "m3"]);
    expect(ids(taskToV1(taskWithHistory(4), { historyLength: 1 }))).toEqual(["m3"]);
    expect(ids(taskToV1(taskWithHistory(4), { historyLength: 10 }))).toEqual([
      "m0",
      "m1",
      "m2",
      "m3",
    ]);
  });

  it("includeArtifacts false omits the artifacts key; true keeps it even when empty", () => {
    const t = taskWithHistory(1);
    expect("artifacts" in taskToV1(t, { includeArtifacts: false })).toBe(false);
    expect(taskToV1(t, { includeArtifacts: true }).artifacts).toHaveLength(1);
    expect(taskToV1(Task.parse({})).artifacts).toEqual([]);
  });

  it("a task sent with historyLength 0 reads back with an empty history", () => {
    const back = taskFromV1(V1Task.parse(wire(taskToV1(taskWithHistory(4), { historyLength: 0 }))));
    expect(back.history).toEqual([]);
    expect(back.artifacts).toHaveLength(1);
  });
});

describe("eventToV1 (StreamResponse)", () => {
  const task = fullTask();
  const status = { state: "completed" as const, message: Messages.agent("done"), timestamp: TS };

  it("a task event is {task}", () => {
    expect(eventToV1({ kind: "task", task })).toStrictEqual({ task: taskToV1(task) });
  });

  it("a message event is {message}", () => {
    const m = fullMessage("agent");
    expect(eventToV1({ kind: "message", message: m })).toStrictEqual({ message: messageToV1(m) });
  });

  it("a status update is {statusUpdate} with no final flag (v1 dropped it)", () => {
    const ev = eventToV1({
      kind: "status-update",
      taskId: "t1",
      contextId: "c1",
      status,
      final: true,
      metadata: { step: 3 },
    });
    expect(ev).toStrictEqual({
      statusUpdate: {
        taskId: "t1",
        contextId: "c1",
        status: statusToV1(status),
        metadata: { step: 3 },
      },
    });
    expect(((ev.statusUpdate as JsonObject).status as JsonObject).state).toBe(
      "TASK_STATE_COMPLETED",
    );
  });

  it("an artifact update is {artifactUpdate}; false append/lastChunk are left out", () => {
    const a = fullArtifact();
    const base = { kind: "artifact-update" as const, taskId: "t1", contextId: "c1", artifact: a };
    expect(eventToV1({ ...base, append: false, lastChunk: false })).toStrictEqual({
      artifactUpdate: { taskId: "t1", contextId: "c1", artifact: artifactToV1(a) },
    });
    expect(eventToV1({ ...base, append: true, lastChunk: true, metadata: { n: 1 } })).toStrictEqual(
      {
        artifactUpdate: {
          taskId: "t1",
          contextId: "c1",
          artifact: artifactToV1(a),
          append: true,
          lastChunk: true,
          metadata: { n: 1 },
        },
      },
    );
  });

  it("every event is plain JSON", () => {
    for (const ev of [
      eventToV1({ kind: "task", task }),
      eventToV1({ kind: "status-update", taskId: "t", contextId: "c", status, final: false }),
    ]) {
      expect(wire(ev)).toStrictEqual(ev);
    }
  });
});

describe("foreign A2A v1 JSON (no edgelink markers)", () => {
  it("reads the spec's minimal message", () => {
    const m = messageFromV1(
      V1Message.parse({ messageId: "m1", role: "ROLE_USER", parts: [{ text: "Hello" }] }),
    );
    expect(m).toStrictEqual({
      messageId: "m1",
      role: "user",
      parts: [{ type: "text", content: "Hello" }],
      timestamp: expect.stringMatching(ISO_UTC),
    });
  });

  it("reads data, url and raw parts and keeps foreign metadata as user metadata", () => {
    const m = messageFromV1(
      V1Message.parse({
        messageId: "m2",
        role: "ROLE_AGENT",
        parts: [
          { data: { temp: 21 }, metadata: { source: "sensor" } },
          { url: "https://x/i.png", mediaType: "image/png", filename: "i.png" },
          { raw: "iVBORw0KGgo=", mediaType: "image/png" },
        ],
        metadata: { "vendor/trace": "abc" },
      }),
    );
    expect(m.role).toBe("agent");
    expect(m.parts).toStrictEqual([
      { type: "data", content: { temp: 21 }, metadata: { source: "sensor" } },
      {
        type: "file",
        content: { url: "https://x/i.png", mediaType: "image/png", filename: "i.png" },
      },
      { type: "file", content: { bytes: "iVBORw0KGgo=", mediaType: "image/png" } },
    ]);
    expect(m.metadata).toStrictEqual({ "vendor/trace": "abc" });
  });

  it("reads the spec's completed-task example", () => {
    const t = taskFromV1(
      V1Task.parse({
        id: "task-uuid",
        contextId: "context-uuid",
        status: { state: "TASK_STATE_COMPLETED" },
        artifacts: [
          {
            artifactId: "artifact-uuid",
            name: "Weather Report",
            parts: [{ text: "Today will be sunny with a high of 75°F" }],
          },
        ],
      }),
    );
    expect(t).toMatchObject({
      id: "task-uuid",
      contextId: "context-uuid",
      status: { state: "completed", message: null },
      history: [],
      metadata: {},
      stateHistory: [],
      flowState: {},
    });
    expect(t.status.timestamp).toMatch(ISO_UTC);
    expect(t.createdAt).toMatch(ISO_UTC);
    expect(t.artifacts).toEqual([
      {
        artifactId: "artifact-uuid",
        name: "Weather Report",
        description: null,
        parts: [{ type: "text", content: "Today will be sunny with a high of 75°F" }],
        metadata: {},
        kind: "result",
        timestamp: expect.stringMatching(ISO_UTC),
        uri: null,
        mediaType: null,
        actionId: null,
      },
    ]);
    expect(Task.parse(wire(t))).toEqual(t);
  });

  it.each([
    [0, "unknown"],
    [1, "submitted"],
    [2, "working"],
    [3, "completed"],
    [4, "failed"],
    [5, "canceled"],
    [6, "input-required"],
    [7, "rejected"],
    [8, "auth-required"],
  ] as const)("accepts the enum number %i as state %s", (n, state) => {
    expect(V1TaskState.parse(n)).toBe(state);
    const t = V1Task.parse({ id: "t", contextId: "c", status: { state: n } });
    expect(taskFromV1(t).status.state).toBe(state);
  });

  it("accepts the role numbers 1 (user) and 2 (agent)", () => {
    const parts = [{ text: "x" }];
    expect(V1Message.parse({ messageId: "a", role: 1, parts }).role).toBe("user");
    expect(V1Message.parse({ messageId: "b", role: 2, parts }).role).toBe("agent");
  });

  it("ignores fields it does not know (§5.7)", () => {
    const m = V1Message.parse({
      messageId: "m",
      role: "ROLE_USER",
      parts: [{ text: "x", futureField: 1 }],
      kind: "message",
    });
    expect(messageFromV1(m).parts).toStrictEqual([{ type: "text", content: "x" }]);
  });

  it("a bad stateHistory marker is dropped rather than trusted", () => {
    const t = taskFromV1(
      V1Task.parse({
        id: "t",
        contextId: "c",
        status: { state: "TASK_STATE_WORKING" },
        metadata: { "edgelink/stateHistory": [{ previousState: "nope" }], keep: 1 },
      }),
    );
    expect(t.stateHistory).toEqual([]);
    expect(t.metadata).toEqual({ keep: 1 });
  });

  // Regression: the spec's own streaming example omits contextId; it used to come back as
  // "", which our Task schema (min 1) refuses, so the task could not be stored.
  it("B13 a foreign task without contextId reads back as a valid Task", () => {
    const t = taskFromV1(
      V1Task.parse({ id: "task-uuid", status: { state: "TASK_STATE_WORKING" } }),
    );
    expect(Task.safeParse(wire(t)).success).toBe(true);
  });
});

describe("bad v1 input is rejected with the field in the issue path", () => {
  const paths = (r: { success: boolean; error?: { issues: { path: PropertyKey[] }[] } }) => {
    expect(r.success).toBe(false);
    return r.error?.issues.map((i) => i.path.join(".")) ?? [];
  };
  const ok = { messageId: "m", role: "ROLE_USER", parts: [{ text: "x" }] };

  it.each([
    ["a missing messageId", { ...ok, messageId: undefined }, "messageId"],
    ["an empty messageId", { ...ok, messageId: "" }, "messageId"],
    ["a v0.3 role", { ...ok, role: "user" }, "role"],
    ["ROLE_UNSPECIFIED", { ...ok, role: "ROLE_UNSPECIFIED" }, "role"],
    ["role number 0", { ...ok, role: 0 }, "role"],
    ["no parts (A2A requires one)", { ...ok, parts: [] }, "parts"],
    ["a part with two contents", { ...ok, parts: [{ text: "x", data: {} }] }, "parts.0"],
    ["a part with no content", { ...ok, parts: [{ metadata: {} }] }, "parts.0"],
    ["raw bytes that are not base64", { ...ok, parts: [{ raw: "%%%" }] }, "parts.0.raw"],
    ["metadata that is not an object", { ...ok, metadata: [1] }, "metadata"],
  ])("V1Message: %s", (_, input, path) => {
    expect(paths(V1Message.safeParse(input))).toContain(path);
  });

  it.each([
    ["a v0.3 state name", { id: "t", status: { state: "working" } }, "status.state"],
    ["an unknown state name", { id: "t", status: { state: "TASK_STATE_RUNNING" } }, "status.state"],
    ["state number 9", { id: "t", status: { state: 9 } }, "status.state"],
    ["no status", { id: "t" }, "status"],
    ["no id", { status: { state: 1 } }, "id"],
    [
      "a bad history message",
      {
        id: "t",
        status: { state: 1 },
        history: [{ messageId: "m", role: "ROLE_USER", parts: [] }],
      },
      "history.0.parts",
    ],
    ["a bad timestamp", { id: "t", status: { state: 1, timestamp: "noon" } }, "status.timestamp"],
  ])("V1Task: %s", (_, input, path) => {
    expect(paths(V1Task.safeParse(input))).toContain(path);
  });

  it("an Edgelink message with no parts renders JSON its own v1 schema refuses", () => {
    // Pinned so the asymmetry is visible: C1 allows parts [], A2A does not.
    const json = wire(messageToV1(Messages.create({ messageId: "m" })));
    expect(paths(V1Message.safeParse(json))).toEqual(["parts"]);
  });
});
