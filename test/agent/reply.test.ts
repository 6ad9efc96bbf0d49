import { describe, expect, it } from "vitest";
import { replyMessage } from "../../src/agent/reply";
import type { Part } from "../../src/protocol/part";

describe("replyMessage (direct replies, A2A §3.1.1)", () => {
  it("a string becomes one text part of an agent message in the context, with no task", () => {
    const m = replyMessage("pong", "ctx-1");
    expect(m).toMatchObject({ role: "agent", contextId: "ctx-1", parts: [{ type: "text" }] });
    expect(m.taskId).toBeUndefined();
    expect(m.messageId).not.toBe(replyMessage("pong", "ctx-1").messageId);
  });

  it("parts are checked like stored parts: a malformed one throws instead of going out", () => {
    const bad = [{ type: "text", content: 42 }] as unknown as Part[];
    expect(() => replyMessage(bad, "ctx-1")).toThrow();
    const good: Part[] = [{ type: "text", content: "ok" }];
    expect(replyMessage(good, "ctx-1").parts).toEqual(good);
  });
});
