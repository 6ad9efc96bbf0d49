import { describe, expect, it } from "vitest";
import type { SendParams } from "../../src/protocol/wire/requests";
import { parseSend } from "../../src/protocol/wire/requests";
import type { Scope } from "../../src/storage/ids";
import { packSend, unpackSend } from "../../src/storage/rpc-send";

const scope = (extra: Partial<Scope> = {}): Scope => ({
  tenant: "acme",
  contextId: "c.0123456789abcdef0123456789abcdef",
  owner: "apiKey::alice",
  ...extra,
});

/** The same values with the same keys in the same order, as the object would read them. */
function expectSame(actual: unknown, expected: unknown) {
  expect(JSON.stringify(actual)).toBe(JSON.stringify(expected));
  expect(actual).toStrictEqual(expected);
}

const wire = (message: Record<string, unknown>, configuration?: Record<string, unknown>) =>
  parseSend(
    {
      message: { messageId: "m-1", role: "ROLE_USER", parts: [{ text: "hi" }], ...message },
      ...(configuration ? { configuration } : {}),
    },
    "1.0",
  ) as SendParams;

describe("SendMessage's packed call to its conversation object", () => {
  const plain: [string, Scope, SendParams][] = [
    ["a follow-up", scope({ newTaskId: "sealed" }), wire({ contextId: "c.x" })],
    ["a first message", scope({ inspector: true, newTaskId: "s" }), wire({})],
    ["a task continued", scope(), wire({ taskId: "t.1", contextId: "c.x" })],
    [
      "with configuration and several parts",
      scope({ newTaskId: "s", newApproverTaskId: "a" }),
      wire(
        { parts: [{ text: "a" }, { text: "" }, { text: "é😀" }] },
        { historyLength: 0, returnImmediately: true },
      ),
    ],
    ["anonymous, default tenant", { tenant: "", contextId: "c", owner: "" }, wire({ taskId: "" })],
  ];
  for (const [name, s, params] of plain) {
    it(`C4 ${name}: unpacked into exactly the scope and params packed`, () => {
      const packed = packSend(s, params, "1.0");
      expect(packed).not.toBeNull();
      expect((packed ?? []).every((v) => v === null || typeof v !== "object")).toBe(true);
      const call = unpackSend(packed ?? []);
      expectSame(call.scope, s);
      expectSame(call.params, params);
      expect(call.version).toBe("1.0");
    });
  }

  it("C1 anything but a plain message is not packed: it crosses as it is", () => {
    const params = wire({});
    const text = params.message.parts[0];
    const notPlain: [Scope, SendParams][] = [
      [scope({ trace: "00-abc" }), params],
      [scope({ approver: "bob" }), params],
      [{ tenant: "", contextId: "c" }, params],
      [scope(), wire({ metadata: { a: 1 } })],
      [scope(), wire({ extensions: ["urn:x"] })],
      [scope(), wire({ parts: [{ data: { a: 1 } }] })],
      [scope(), wire({ parts: [{ text: "a", mediaType: "text/plain" }] })],
      [scope(), { ...params, metadata: { a: 1 } }],
      [scope(), { ...params, acceptedOutputModes: ["text/plain"] }],
      [scope(), { message: params.message } as SendParams],
      [
        scope(),
        {
          ...params,
          message: { ...params.message, parts: [{ ...text, metadata: {} }] },
        } as SendParams,
      ],
    ];
    for (const [s, p] of notPlain) expect(packSend(s, p, "1.0")).toBeNull();
  });

  it("C1 a call the Worker did not pack is refused, not read", () => {
    expect(() => unpackSend([] as never)).toThrow(TypeError);
    expect(() => unpackSend({ length: 20 } as never)).toThrow(TypeError);
  });
});
