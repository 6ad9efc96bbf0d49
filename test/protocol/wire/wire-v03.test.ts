import { describe, expect, it } from "vitest";
import type { Artifact } from "../../../src/protocol/artifact";
import type { JsonObject } from "../../../src/protocol/json";
import { type Message, Messages } from "../../../src/protocol/message";
import { type Part, Parts } from "../../../src/protocol/part";
import { Task, Tasks } from "../../../src/protocol/task";
import { TASK_STATES } from "../../../src/protocol/task-state";
import {
  artifactToV03,
  eventToV03,
  messageFromV03,
  messageToV03,
  partFromV03,
  partToV03,
  statusToV03,
  taskFromV03,
  taskToV03,
  V03Message,
  V03Part,
  V03Task,
} from "../../../src/protocol/wire/wire-v03";
import {
  bareArtifact,
  everyPart,
  fullArtifact,
  fullMessage,
  fullTask,
  ROLES,
  wire,
} from "../fixtures";

// Every trip goes through JSON text and the v0.3 zod schema, as a request body would.
const viaV03 = {
  part: (p: Part) => partFromV03(V03Part.parse(wire(partToV03(p)))),
  message: (m: Message) => messageFromV03(V03Message.parse(wire(messageToV03(m)))),
  task: (t: Task) => taskFromV03(V03Task.parse(wire(taskToV03(t)))),
  // v0.3 has no stand-alone artifact reader; artifacts come back inside tasks.
  artifact: (a: Artifact) => {
    const t = Task.parse({ id: "t", contextId: "c", artifacts: [a] });
    return taskFromV03(V03Task.parse(wire(taskToV03(t)))).artifacts[0];
  },
};

const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const TS = "2025-06-01T12:00:00.123Z";

describe("v0.3 round trips: model → v0.3 JSON → model", () => {
  it.each(Object.entries(everyPart()))("C3 a %s part comes back equal", (_, part) => {
    expect(viaV03.part(part)).toStrictEqual(part);
  });

  it.each(ROLES)("C1 a %s message with every field and every part comes back equal", (role) => {
    const m = fullMessage(role);
    expect(viaV03.message(m)).toStrictEqual(m);
  });

  it.each(ROLES)("C2 a plain %s message from the factory comes back equal", (role) => {
    const m = Messages[role]("hello");
    expect(viaV03.message(m)).toStrictEqual(m);
  });

  it("D1 artifacts with every descriptor set, and with none, come back equal", () => {
    expect(viaV03.artifact(fullArtifact())).toEqual(fullArtifact());
    expect(viaV03.artifact(bareArtifact())).toEqual(bareArtifact());
  });

  it("B13 a full task (state history, status message, metadata) comes back equal", () => {
    const t = fullTask();
    const back = viaV03.task(t);
    expect(back).toEqual(t);
    expect(Task.parse(wire(back))).toEqual(t);
  });

  it.each(TASK_STATES)("B13 a task in state %s comes back in that state", (state) => {
    const t = Task.parse({ id: "t", contextId: "c", status: { state }, history: [] });
    expect(viaV03.task(t)).toEqual(t);
  });

  it("B14 flowState does not travel", () => {
    const t = fullTask();
    t.flowState.plan = ["a"];
    expect(JSON.stringify(taskToV03(t))).not.toContain("plan");
    expect(viaV03.task(t).flowState).toEqual({});
  });
});

describe("v0.3 wire shapes", () => {
  it("C4 text parts are kind text; a mediaType rides in metadata", () => {
    expect(partToV03(Parts.text("hi"))).toStrictEqual({ kind: "text", text: "hi" });
    expect(
      partToV03({ type: "text", content: "# h", mediaType: "text/markdown", metadata: { a: 1 } }),
    ).toStrictEqual({
      kind: "text",
      text: "# h",
      metadata: { a: 1, "edgelink/mediaType": "text/markdown" },
    });
  });

  it("C12 files are kind file with uri or bytes, mimeType and name", () => {
    expect(
      partToV03(
        Parts.file({ url: "https://x/a.pdf", mediaType: "application/pdf", filename: "a.pdf" }),
      ),
    ).toStrictEqual({
      kind: "file",
      file: { uri: "https://x/a.pdf", mimeType: "application/pdf", name: "a.pdf" },
    });
    expect(partToV03(Parts.file({ bytes: "aGVsbG8=" }))).toStrictEqual({
      kind: "file",
      file: { bytes: "aGVsbG8=" },
    });
  });

  it("C4 an object data part is kind data as is", () => {
    expect(partToV03(Parts.data({ a: 1 }))).toStrictEqual({ kind: "data", data: { a: 1 } });
  });

  it.each([[[1, 2]], ["s"], [0], [false], [null]])(
    "C4 a non-object data part %j is wrapped under value (v0.3 data is an object)",
    (v) => {
      expect(partToV03(Parts.data(v))).toStrictEqual({
        kind: "data",
        data: { value: v },
        metadata: { "edgelink/wrapped": true },
      });
    },
  );

  it.each([
    ["tool_call", Parts.toolCall("add", { a: 1 }, "c1")],
    ["tool_output", Parts.toolOutput("c1", 3)],
    ["infer", Parts.infer({ prompt: "p" })],
    ["infer_output", Parts.inferOutput({ x: 1 })],
    ["error", Parts.error("E", "m")],
    ["status", Parts.status("working")],
    ["route", Parts.route("k")],
    ["decision", Parts.decision("k")],
    ["x-unknown", { type: "x-unknown", content: { a: [1] } } as Part],
  ])("C3 a %s part rides in a data part marked with its type", (type, part) => {
    expect(partToV03(part)).toStrictEqual({
      kind: "data",
      data: part.content,
      metadata: { "edgelink/part": type },
    });
  });

  it("C8 a string infer_output is both marked and wrapped", () => {
    expect(partToV03(Parts.inferOutput("answer"))).toStrictEqual({
      kind: "data",
      data: { value: "answer" },
      metadata: { "edgelink/part": "infer_output", "edgelink/wrapped": true },
    });
  });

  it.each([
    ["user", "user", undefined],
    ["agent", "agent", undefined],
    ["assistant", "agent", "assistant"],
    ["system", "user", "system"],
  ] as const)("C1 a %s message is role %s with kind message", (role, wireRole, mark) => {
    const m = Messages.create({ messageId: "m1", role, parts: [Parts.text("x")], timestamp: TS });
    const metadata: JsonObject = { "edgelink/timestamp": TS };
    if (mark) metadata["edgelink/role"] = mark;
    expect(messageToV03(m)).toStrictEqual({
      kind: "message",
      messageId: "m1",
      role: wireRole,
      parts: [{ kind: "text", text: "x" }],
      metadata,
    });
  });

  it.each(TASK_STATES)("B13 state %s is sent in lower case as is", (state) => {
    expect(statusToV03({ state, message: null, timestamp: TS })).toStrictEqual({
      state,
      timestamp: TS,
    });
  });

  it("B13 a task is kind task with its markers in metadata", () => {
    const t = fullTask();
    const json = taskToV03(t);
    expect(json.kind).toBe("task");
    expect(json.id).toBe("task-1");
    expect(json.contextId).toBe("ctx-1");
    expect((json.status as JsonObject).state).toBe("completed");
    expect(((json.status as JsonObject).message as JsonObject).kind).toBe("message");
    expect(json.artifacts).toStrictEqual(t.artifacts.map(artifactToV03));
    expect(json.metadata).toStrictEqual({
      owner: "alice",
      tags: ["a", "b"],
      score: 0.5,
      "edgelink/stateHistory": wire(t.stateHistory),
      "edgelink/createdAt": t.createdAt,
    });
  });

  it("D3 null artifact descriptors are left out of the wire", () => {
    expect(artifactToV03(bareArtifact())).toStrictEqual({
      artifactId: "art-2",
      parts: [],
      metadata: {
        "edgelink/artifact": { kind: "result", timestamp: "2025-06-01T12:00:02.000Z" },
      },
    });
  });

  it("historyLength and includeArtifacts behave as in v1", () => {
    const t = Tasks.create(Messages.user("m0"));
    Tasks.addMessage(t, Messages.agent("m1"));
    Tasks.addMessage(t, Messages.agent("m2"));
    Tasks.addArtifact(t, bareArtifact());
    const texts = (json: JsonObject) =>
      (json.history as JsonObject[]).map((m) => (m.parts as JsonObject[])[0]?.text);
    expect(texts(taskToV03(t))).toEqual(["m0", "m1", "m2"]);
    expect(texts(taskToV03(t, { historyLength: 2 }))).toEqual(["m1", "m2"]);
    expect("history" in taskToV03(t, { historyLength: 0 })).toBe(false);
    expect("artifacts" in taskToV03(t, { includeArtifacts: false })).toBe(false);
    expect(taskToV03(t).artifacts).toHaveLength(1);
  });
});

describe("eventToV03", () => {
  const status = { state: "working" as const, message: Messages.agent("50%"), timestamp: TS };

  it("a task event is the task itself", () => {
    const t = fullTask();
    expect(eventToV03({ kind: "task", task: t })).toStrictEqual(taskToV03(t));
  });

  it("a message event is the message itself", () => {
    const m = fullMessage("agent");
    expect(eventToV03({ kind: "message", message: m })).toStrictEqual(messageToV03(m));
  });

  it.each([true, false])("a status update carries final: %s", (final) => {
    expect(
      eventToV03({ kind: "status-update", taskId: "t1", contextId: "c1", status, final }),
    ).toStrictEqual({
      kind: "status-update",
      taskId: "t1",
      contextId: "c1",
      status: statusToV03(status),
      final,
    });
  });

  it("an artifact update keeps append and lastChunk even when false", () => {
    const a = fullArtifact();
    expect(
      eventToV03({
        kind: "artifact-update",
        taskId: "t1",
        contextId: "c1",
        artifact: a,
        append: false,
        lastChunk: false,
        metadata: { n: 1 },
      }),
    ).toStrictEqual({
      kind: "artifact-update",
      taskId: "t1",
      contextId: "c1",
      artifact: artifactToV03(a),
      append: false,
      lastChunk: false,
      metadata: { n: 1 },
    });
  });
});

describe("foreign A2A v0.3 JSON (no edgelink markers)", () => {
  it("reads a minimal message, with or without its kind", () => {
    for (const input of [
      { kind: "message", messageId: "m1", role: "user", parts: [{ kind: "text", text: "Hello" }] },
      { messageId: "m1", role: "user", parts: [{ kind: "text", text: "Hello" }] },
    ]) {
      expect(messageFromV03(V03Message.parse(input))).toStrictEqual({
        messageId: "m1",
        role: "user",
        parts: [{ type: "text", content: "Hello" }],
        timestamp: expect.stringMatching(ISO_UTC),
      });
    }
  });

  it("reads file and data parts; an unmarked {value} object is not unwrapped", () => {
    const m = messageFromV03(
      V03Message.parse({
        messageId: "m2",
        role: "agent",
        parts: [
          { kind: "file", file: { uri: "https://x/a.wav", mimeType: "audio/wav", name: "a.wav" } },
          { kind: "file", file: { bytes: "AAEC" } },
          { kind: "data", data: { value: 1 }, metadata: { src: "peer" } },
        ],
      }),
    );
    expect(m.parts).toStrictEqual([
      {
        type: "file",
        content: { url: "https://x/a.wav", mediaType: "audio/wav", filename: "a.wav" },
      },
      { type: "file", content: { bytes: "AAEC" } },
      { type: "data", content: { value: 1 }, metadata: { src: "peer" } },
    ]);
  });

  it("reads a task waiting for input with its status message", () => {
    const t = taskFromV03(
      V03Task.parse({
        kind: "task",
        id: "task_abc",
        contextId: "ctx_def",
        status: {
          state: "input-required",
          message: {
            kind: "message",
            messageId: "q",
            role: "agent",
            parts: [{ kind: "text", text: "Which order?" }],
          },
          timestamp: "2025-01-01T00:00:00Z",
        },
      }),
    );
    expect(t.status.state).toBe("input-required");
    expect(t.status.timestamp).toBe("2025-01-01T00:00:00Z");
    expect(t.status.message?.role).toBe("agent");
    expect(t.status.message?.parts).toStrictEqual([{ type: "text", content: "Which order?" }]);
    expect(t).toMatchObject({ history: [], artifacts: [], metadata: {}, stateHistory: [] });
  });

  // Regression: the marker used to be trusted after a bare Array.isArray check, so a peer
  // echoing junk produced a Task whose stateHistory broke the StateChange type.
  it("a bad stateHistory marker is dropped rather than trusted", () => {
    const t = taskFromV03(
      V03Task.parse({
        id: "t",
        contextId: "c",
        status: { state: "working" },
        metadata: { "edgelink/stateHistory": [{ previousState: "nope" }, 7] },
      }),
    );
    expect(t.stateHistory).toEqual([]);
  });
});

describe("bad v0.3 input is rejected with the field in the issue path", () => {
  const paths = (r: { success: boolean; error?: { issues: { path: PropertyKey[] }[] } }) => {
    expect(r.success).toBe(false);
    return r.error?.issues.map((i) => i.path.join(".")) ?? [];
  };
  const ok = { messageId: "m", role: "user", parts: [{ kind: "text", text: "x" }] };

  it.each([
    ["a v1 role name", { ...ok, role: "ROLE_USER" }, "role"],
    ["a role number", { ...ok, role: 1 }, "role"],
    ["the role assistant", { ...ok, role: "assistant" }, "role"],
    ["no parts", { ...ok, parts: [] }, "parts"],
    ["an empty messageId", { ...ok, messageId: "" }, "messageId"],
    ["a wrong kind", { ...ok, kind: "task" }, "kind"],
    ["a v1-style part", { ...ok, parts: [{ text: "x" }] }, "parts.0.kind"],
    ["an unknown part kind", { ...ok, parts: [{ kind: "image", url: "x" }] }, "parts.0.kind"],
    ["data that is not an object", { ...ok, parts: [{ kind: "data", data: [1] }] }, "parts.0.data"],
    [
      "a file with both uri and bytes",
      { ...ok, parts: [{ kind: "file", file: { uri: "u", bytes: "AA==" } }] },
      "parts.0.file",
    ],
  ])("V03Message: %s", (_, input, path) => {
    expect(paths(V03Message.safeParse(input))).toContain(path);
  });

  it.each([
    [
      "a near-miss state",
      { id: "t", contextId: "c", status: { state: "input_required" } },
      "status.state",
    ],
    [
      "a v1 state name",
      { id: "t", contextId: "c", status: { state: "TASK_STATE_WORKING" } },
      "status.state",
    ],
    ["a state number", { id: "t", contextId: "c", status: { state: 2 } }, "status.state"],
    ["no contextId", { id: "t", status: { state: "working" } }, "contextId"],
    ["an empty id", { id: "", contextId: "c", status: { state: "working" } }, "id"],
  ])("V03Task: %s", (_, input, path) => {
    expect(paths(V03Task.safeParse(input))).toContain(path);
  });
});
