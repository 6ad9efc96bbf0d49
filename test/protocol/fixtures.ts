import { type Artifact, Artifacts } from "../../src/protocol/artifact";
import type { JsonValue } from "../../src/protocol/json";
import { type Message, Messages, type Role } from "../../src/protocol/message";
import { type Part, Parts } from "../../src/protocol/part";
import { type Task, Tasks } from "../../src/protocol/task";
import type { TaskState } from "../../src/protocol/task-state";

/** What a value looks like after one trip through `JSON.stringify` and `JSON.parse`. */
export const wire = (value: unknown): unknown => JSON.parse(JSON.stringify(value));

export const ROLES: readonly Role[] = ["user", "agent", "assistant", "system"];

/**
 * One of every part shape the wire must carry losslessly. Labels double as test names;
 * the odd cases (scalars in data parts, empty infer strings, metadata on our own types)
 * are the ones a naive mapping loses.
 */
export function everyPart(): Record<string, Part> {
  return {
    text: Parts.text("héllo ✓\n  two  spaces\ttab"),
    "text with mediaType": { type: "text", content: "# Title", mediaType: "text/markdown" },
    "text with metadata": { type: "text", content: "x", metadata: { lang: "en", n: 1 } },
    "empty text": Parts.text(""),
    "data object": Parts.data({ a: 1, nested: { b: [true, null] } }),
    "data object that looks wrapped": Parts.data({ value: 5 }),
    "data array": Parts.data([1, "two", { three: 3 }]),
    "data string": Parts.data("just a string"),
    "data number": Parts.data(42),
    "data boolean": Parts.data(false),
    "data null": Parts.data(null),
    "data with mediaType": {
      type: "data",
      content: { k: "v" },
      mediaType: "application/vnd.example+json",
    },
    "data scalar with mediaType and metadata": {
      type: "data",
      content: 7,
      mediaType: "application/json",
      metadata: { unit: "kg" },
    },
    "file by url": Parts.file({
      url: "https://example.com/a.pdf",
      mediaType: "application/pdf",
      filename: "a.pdf",
    }),
    "file by bytes": Parts.file({ bytes: "aGVsbG8=", mediaType: "text/plain", filename: "h.txt" }),
    "file by url only": Parts.file({ url: "https://example.com/blob" }),
    image: Parts.image("https://example.com/cat.jpg", "image/jpeg"),
    tool_call: Parts.toolCall("add", { a: 1, b: 2 }, "call_1"),
    "tool_call with metadata": { ...Parts.toolCall("f", {}, "c9"), metadata: { trace: "t1" } },
    tool_output: Parts.toolOutput("call_1", { sum: 3 }),
    "tool_output with error": Parts.toolOutput("call_2", null, "boom"),
    "tool_output scalar result": Parts.toolOutput("call_3", "3"),
    infer: Parts.infer({
      prompt: "p",
      user: "",
      outputSchema: { type: "object" },
      metadata: { temperature: 0.2 },
    }),
    "infer empty": Parts.infer(),
    "infer_output string": Parts.inferOutput("the answer"),
    "infer_output object": Parts.inferOutput({ answer: 42 }),
    error: Parts.error("E_TOOL", "tool failed", true),
    "error default retryable": Parts.error("E_X", "x"),
    status: Parts.status("input-required", "need a date"),
    "status without message": Parts.status("working"),
    route: Parts.route("billing", { reason: "invoice", confidence: 0.9, metadata: { k: 1 } }),
    decision: Parts.decision("escalate"),
    "unknown type with object": { type: "x-chart", content: { series: [1, 2] } },
    "unknown type with scalar": { type: "sticker", content: "🦆" },
    "unknown type with null": { type: "ping", content: null, metadata: { seq: 3 } },
  };
}

/** A message with every optional field set and every part type in it. */
export function fullMessage(role: Role = "user"): Message {
  return Messages.create({
    messageId: `msg-${role}`,
    role,
    parts: Object.values(everyPart()),
    contextId: "ctx-1",
    taskId: "task-1",
    metadata: { source: "test", nested: { deep: [1, 2, 3] } as JsonValue },
    extensions: ["https://example.com/ext/v1"],
    referenceTaskIds: ["task-0"],
    timestamp: "2025-06-01T12:00:00.123Z",
  });
}

/** An artifact with every descriptor set, and one with every descriptor left null. */
export function fullArtifact(): Artifact {
  return Artifacts.create({
    artifactId: "art-1",
    name: "report",
    description: "the final report",
    parts: [Parts.text("42"), Parts.data({ n: 42 }), Parts.toolCall("t", {}, "c1")],
    metadata: { lang: "en" },
    kind: "summary",
    uri: "https://example.com/report",
    mediaType: "text/markdown",
    actionId: "act-7",
    extensions: ["https://example.com/ext/v1"],
    timestamp: "2025-06-01T12:00:01.000Z",
  });
}
export function bareArtifact(): Artifact {
  return Artifacts.create({ artifactId: "art-2", timestamp: "2025-06-01T12:00:02.000Z" });
}

/**
 * A task that has lived: several state changes, a message of every role, artifacts,
 * user metadata and a status message.
 */
export function fullTask(): Task {
  const task = Tasks.create(fullMessage("user"), { id: "task-1", contextId: "ctx-1" });
  Tasks.begin(task);
  Tasks.addMessage(task, fullMessage("system"));
  Tasks.addArtifact(task, fullArtifact());
  Tasks.requireInput(task, fullMessage("assistant"));
  Tasks.begin(task);
  Tasks.addArtifact(task, bareArtifact());
  Tasks.complete(task, "done");
  task.metadata = { owner: "alice", tags: ["a", "b"], score: 0.5 };
  task.status.message = fullMessage("agent");
  return task;
}

/**
 * The transition table written out independently of the source, so a change to either
 * shows up here. Seed rows (B3) plus decision 2 (working→canceled) plus where A2A puts
 * its own states: rejected ends a task, auth-required interrupts it like input-required.
 */
export const LEGAL: Record<TaskState, TaskState[]> = {
  submitted: ["working", "failed", "canceled", "rejected"],
  working: ["completed", "input-required", "auth-required", "failed", "canceled", "rejected"],
  "input-required": ["working", "failed", "canceled"],
  "auth-required": ["working", "failed", "canceled"],
  completed: [],
  canceled: [],
  failed: [],
  rejected: [],
  unknown: [],
};
