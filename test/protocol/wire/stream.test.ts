import { describe, expect, it } from "vitest";
import { Artifacts } from "../../../src/protocol/artifact";
import type { TaskEvent } from "../../../src/protocol/events";
import { Messages } from "../../../src/protocol/message";
import { Parts } from "../../../src/protocol/part";
import { submittedTask } from "../../../src/protocol/task";
import { renderEvent, renderEventJson, type StreamFormat } from "../../../src/protocol/wire/stream";

const task = submittedTask("t1", "c1", Messages.user("hi"));
const chunk = (text: string, append: boolean, lastChunk: boolean): TaskEvent => ({
  kind: "artifact-update",
  taskId: "t1",
  contextId: "c1",
  artifact: Artifacts.create({ artifactId: "a", name: "result", parts: [Parts.text(text)] }),
  append,
  lastChunk,
});
const events = (): TaskEvent[] => [
  { kind: "task", task },
  { kind: "message", message: Messages.agent("a reply") },
  chunk("first", false, false),
  chunk('"quoted" and\nbroken', true, true),
  {
    kind: "status-update",
    taskId: "t1",
    contextId: "c1",
    status: { state: "completed", message: null, timestamp: new Date(0).toISOString() },
    final: true,
    metadata: { why: "done" },
  },
];
const formats: StreamFormat[] = [
  { version: "1.0", binding: "jsonrpc", rpcId: 7 },
  { version: "1.0", binding: "jsonrpc", rpcId: 'req-"7"' },
  { version: "1.0", binding: "jsonrpc", rpcId: null },
  { version: "1.0", binding: "jsonrpc" },
  { version: "1.0", binding: "rest" },
  { version: "0.3", binding: "jsonrpc", rpcId: 3 },
  { version: "0.3", binding: "rest" },
];

describe("a stream event's JSON, built once", () => {
  it("D4: is byte for byte what JSON.stringify makes of the rendered event, in every format", () => {
    for (const format of formats) {
      // The same event objects for every format, as the hub hands them to each stream.
      for (const event of events()) {
        expect(renderEventJson(event, format)).toBe(JSON.stringify(renderEvent(event, format)));
      }
    }
    const shared = events();
    for (const format of formats) {
      for (const event of shared) {
        expect(renderEventJson(event, format)).toBe(JSON.stringify(renderEvent(event, format)));
      }
    }
  });

  it("D4: serializes an event once per protocol version, however many streams send it", () => {
    let reads = 0;
    const base = chunk("counted", true, false) as Extract<TaskEvent, { kind: "artifact-update" }>;
    const { artifact } = base;
    const event = {
      ...base,
      get artifact() {
        reads++;
        return artifact;
      },
    } as TaskEvent;
    const sent = [1, 2, 3, "four"].map((rpcId) =>
      renderEventJson(event, { version: "1.0", binding: "jsonrpc", rpcId }),
    );
    expect(reads).toBe(1);
    expect(sent[3]).toContain('"id":"four"');
    renderEventJson(event, { version: "1.0", binding: "rest" });
    expect(reads).toBe(1);
    renderEventJson(event, { version: "0.3", binding: "jsonrpc", rpcId: 1 });
    expect(reads).toBe(2);
  });
});
