import { describe, expect, it } from "vitest";
import { Message, Messages, Role } from "../../src/protocol/message";
import { Parts } from "../../src/protocol/part";
import { fullMessage, ROLES, wire } from "./fixtures";

const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe("Message (C1)", () => {
  it("C1 an empty message gets an id, role user, no parts and a timestamp", () => {
    const m = Message.parse({});
    expect(m.messageId).toMatch(UUID);
    expect(m.role).toBe("user");
    expect(m.parts).toEqual([]);
    expect(m.timestamp).toMatch(ISO_UTC);
    expect(Object.keys(m).sort()).toEqual(["messageId", "parts", "role", "timestamp"]);
  });

  it("C1 ids are unique and default part arrays are not shared", () => {
    const a = Messages.create();
    const b = Messages.create();
    expect(a.messageId).not.toBe(b.messageId);
    a.parts.push(Parts.text("only a"));
    expect(b.parts).toEqual([]);
  });

  it("C1 the roles are user, agent, assistant and system", () => {
    expect(Role.options).toEqual(["user", "agent", "assistant", "system"]);
    for (const role of ROLES) expect(Message.parse({ role }).role).toBe(role);
  });

  it.each(["tool", "developer", "ROLE_USER", "User", ""])("C1 rejects the role %j", (role) => {
    const result = Message.safeParse({ role });
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.path).toEqual(["role"]);
  });

  it("C1 rejects an empty id, a non-UTC timestamp and a bad part, naming each field", () => {
    const result = Message.safeParse({
      messageId: "",
      timestamp: "2025-01-01 10:00",
      parts: [Parts.text("ok"), { type: "text" }],
    });
    expect(result.success).toBe(false);
    expect(result.error?.issues.map((i) => i.path.join(".")).sort()).toEqual([
      "messageId",
      "parts.1",
      "timestamp",
    ]);
  });

  it("C1 every optional field survives JSON and Message.parse", () => {
    const m = fullMessage("assistant");
    expect(Message.parse(wire(m))).toStrictEqual(m);
  });
});

describe("message helpers (C2)", () => {
  it.each([
    ["user", Messages.user],
    ["agent", Messages.agent],
    ["assistant", Messages.assistant],
    ["system", Messages.system],
  ] as const)("C2 %s(text) is one text part with that role", (role, make) => {
    const m = make("hi there");
    expect(m.role).toBe(role);
    expect(m.parts).toStrictEqual([{ type: "text", content: "hi there" }]);
    expect(m.messageId).toMatch(UUID);
    expect(m.timestamp).toMatch(ISO_UTC);
    expect(Message.parse(m)).toStrictEqual(m);
  });

  it("C2 addText and addPart append in order and return the same message", () => {
    const m = Messages.user("a");
    const returned = Messages.addPart(Messages.addText(m, "b"), Parts.data({ c: 3 }));
    expect(returned).toBe(m);
    expect(m.parts).toStrictEqual([
      { type: "text", content: "a" },
      { type: "text", content: "b" },
      { type: "data", content: { c: 3 } },
    ]);
  });

  it("C2 an infer message is a user message with exactly one infer part", () => {
    const m = Messages.infer({ prompt: "classify", outputSchema: { type: "string" } });
    expect(m.role).toBe("user");
    expect(m.parts).toStrictEqual([
      { type: "infer", content: { prompt: "classify", outputSchema: { type: "string" } } },
    ]);
    expect(Messages.infer().parts).toStrictEqual([{ type: "infer", content: {} }]);
  });

  it("C2 create applies the schema defaults and validation", () => {
    const m = Messages.create({ role: "agent", contextId: "c1" });
    expect(m).toMatchObject({ role: "agent", contextId: "c1", parts: [] });
    expect(() => Messages.create({ role: "robot" as never })).toThrow();
  });
});
