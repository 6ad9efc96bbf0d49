import { describe, expect, it } from "vitest";
import { EventHub } from "../../../src/conversation/runs/event-hub";
import type { LoggedEvent } from "../../../src/protocol/events";

const logged = (seq: number): LoggedEvent => ({
  seq,
  event: {
    kind: "status-update",
    taskId: "t",
    contextId: "c",
    status: { state: "working", message: null, timestamp: "2026-12-07T00:00:00.000Z" },
    final: false,
  },
});

describe("the event hub hands a batch of events to each listener still registered", () => {
  it("D4: every listener gets every event of a batch in log order", () => {
    const hub = new EventHub();
    const seen: string[] = [];
    hub.on("t", (e) => seen.push(`a${e.seq}`));
    hub.on("t", (e) => seen.push(`b${e.seq}`));
    hub.on("other", (e) => seen.push(`x${e.seq}`));
    hub.emit("t", [logged(1), logged(2), logged(3)]);
    expect(seen).toEqual(["a1", "b1", "a2", "b2", "a3", "b3"]);
  });

  it("D4: a listener unsubscribed during a batch (by itself or another) gets none of its later events; one registered during it gets none of the batch", () => {
    const hub = new EventHub();
    const seen: string[] = [];
    let offB = () => {};
    const offA = hub.on("t", (e) => {
      seen.push(`a${e.seq}`);
      if (e.seq === 1) {
        offA();
        offB();
        hub.on("t", (late) => seen.push(`late${late.seq}`));
      }
    });
    offB = hub.on("t", (e) => seen.push(`b${e.seq}`));
    const offC = hub.on("t", (e) => {
      seen.push(`c${e.seq}`);
      if (e.seq === 2) offC();
    });
    hub.emit("t", [logged(1), logged(2), logged(3)]);
    expect(seen).toEqual(["a1", "c1", "c2"]);
    hub.emit("t", [logged(4)]);
    expect(seen.slice(3)).toEqual(["late4"]);
    expect(hub.count("t")).toBe(1);
  });
});
