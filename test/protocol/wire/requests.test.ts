import { describe, expect, it } from "vitest";
import { A2AError } from "../../../src/protocol/errors";
import {
  DEFAULT_PAGE_SIZE,
  MAX_PAGE_SIZE,
  parseList,
  parseSend,
  parseTaskId,
} from "../../../src/protocol/wire/requests";

const v1Message = { messageId: "m1", role: "ROLE_USER", parts: [{ text: "Hello" }] };
const v03Message = {
  kind: "message",
  messageId: "m1",
  role: "user",
  parts: [{ kind: "text", text: "Hello" }],
};

/** Runs `fn` and returns the InvalidParams A2AError it must throw. */
function invalid(fn: () => unknown): A2AError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(A2AError);
    const err = e as A2AError;
    expect(err.kind).toBe("InvalidParams");
    expect(err.code).toBe(-32602);
    expect(err.httpStatus).toBe(400);
    return err;
  }
  return expect.unreachable("expected InvalidParams");
}
const violations = (fn: () => unknown): string[] => invalid(fn).fieldViolations.map((v) => v.field);

describe("parseSend v1.0", () => {
  it("reads the message and defaults to a blocking send", () => {
    const p = parseSend({ message: v1Message }, "1.0");
    expect(p.message).toStrictEqual({
      messageId: "m1",
      role: "user",
      parts: [{ type: "text", content: "Hello" }],
      timestamp: expect.any(String),
    });
    expect(p.returnImmediately).toBe(false);
    expect(p.historyLength).toBeUndefined();
    expect(p.acceptedOutputModes).toBeUndefined();
    expect(p.metadata).toBeUndefined();
    expect(p.pushConfig).toBeUndefined();
  });

  it("reads the configuration and metadata", () => {
    const p = parseSend(
      {
        tenant: "acme",
        message: v1Message,
        configuration: {
          acceptedOutputModes: ["text/plain", "application/json"],
          historyLength: 3,
          returnImmediately: true,
          taskPushNotificationConfig: { url: "https://hook" },
        },
        metadata: { trace: "t" },
      },
      "1.0",
    );
    expect(p.returnImmediately).toBe(true);
    expect(p.historyLength).toBe(3);
    expect(p.acceptedOutputModes).toEqual(["text/plain", "application/json"]);
    expect(p.metadata).toEqual({ trace: "t" });
    expect(p.pushConfig).toEqual({ url: "https://hook" });
  });

  it("names the bad field under params", () => {
    expect(violations(() => parseSend({ message: { ...v1Message, parts: [] } }, "1.0"))).toEqual([
      "params.message.parts",
    ]);
    expect(violations(() => parseSend({}, "1.0"))).toEqual(["params.message"]);
    expect(violations(() => parseSend(undefined, "1.0"))).toEqual(["params.message"]);
    expect(violations(() => parseSend({ message: v03Message }, "1.0"))).toContain(
      "params.message.role",
    );
    expect(
      violations(() =>
        parseSend({ message: v1Message, configuration: { historyLength: -1 } }, "1.0"),
      ),
    ).toEqual(["params.configuration.historyLength"]);
  });

  it("says what was wrong in the violation description", () => {
    const err = invalid(() => parseSend({ message: { ...v1Message, parts: [] } }, "1.0"));
    expect(err.fieldViolations).toEqual([
      { field: "params.message.parts", description: "at least one part is required" },
    ]);
    expect(err.message).toBe(
      "Invalid parameters: params.message.parts: at least one part is required",
    );
  });
});

describe("parseSend v0.3", () => {
  it("reads a v0.3 message; no blocking flag means a blocking send", () => {
    const p = parseSend({ message: v03Message }, "0.3");
    expect(p.message.parts).toStrictEqual([{ type: "text", content: "Hello" }]);
    expect(p.message.role).toBe("user");
    expect(p.returnImmediately).toBe(false);
  });

  it.each([
    [false, true],
    [true, false],
  ])("blocking: %s means returnImmediately: %s", (blocking, returnImmediately) => {
    const p = parseSend({ message: v03Message, configuration: { blocking } }, "0.3");
    expect(p.returnImmediately).toBe(returnImmediately);
  });

  it("reads pushNotificationConfig, historyLength and accepted modes", () => {
    const p = parseSend(
      {
        message: v03Message,
        configuration: {
          pushNotificationConfig: { url: "https://hook" },
          historyLength: 0,
          acceptedOutputModes: ["text/plain"],
        },
      },
      "0.3",
    );
    expect(p.pushConfig).toEqual({ url: "https://hook" });
    expect(p.historyLength).toBe(0);
    expect(p.acceptedOutputModes).toEqual(["text/plain"]);
  });

  it("names the bad field under params", () => {
    expect(violations(() => parseSend({ message: v1Message }, "0.3"))).toContain(
      "params.message.parts.0.kind",
    );
    expect(
      violations(() => parseSend({ message: { ...v03Message, role: "ROLE_USER" } }, "0.3")),
    ).toEqual(["params.message.role"]);
  });
});

describe("parseTaskId", () => {
  it("reads id, historyLength and metadata, ignoring tenant", () => {
    expect(parseTaskId({ tenant: "x", id: "t1", historyLength: 2, metadata: { a: 1 } })).toEqual({
      id: "t1",
      historyLength: 2,
      metadata: { a: 1 },
    });
    expect(parseTaskId({ id: "t1" })).toEqual({ id: "t1" });
  });

  it.each([
    [{}, "params.id"],
    [{ id: "" }, "params.id"],
    [{ id: 5 }, "params.id"],
    [{ id: "t", historyLength: -1 }, "params.historyLength"],
    [{ id: "t", historyLength: 1.5 }, "params.historyLength"],
  ])("rejects %j naming %s", (params, field) => {
    expect(violations(() => parseTaskId(params))).toEqual([field]);
  });
});

describe("parseList", () => {
  it("defaults to 50 per page without artifacts", () => {
    expect(DEFAULT_PAGE_SIZE).toBe(50);
    expect(MAX_PAGE_SIZE).toBe(100);
    expect(parseList({})).toEqual({ pageSize: 50, includeArtifacts: false });
    expect(parseList(undefined)).toEqual({ pageSize: 50, includeArtifacts: false });
  });

  it.each([1, 37, 100])("accepts pageSize %i", (pageSize) => {
    expect(parseList({ pageSize }).pageSize).toBe(pageSize);
  });

  it.each([0, 101, -5, 2.5])("rejects pageSize %d", (pageSize) => {
    expect(violations(() => parseList({ pageSize }))).toEqual(["params.pageSize"]);
  });

  it("explains the pageSize bounds", () => {
    expect(invalid(() => parseList({ pageSize: 150 })).fieldViolations).toEqual([
      { field: "params.pageSize", description: "pageSize must be between 1 and 100" },
    ]);
  });

  it.each([
    ["TASK_STATE_WORKING", "working"],
    ["TASK_STATE_INPUT_REQUIRED", "input-required"],
    [3, "completed"],
    ["TASK_STATE_UNSPECIFIED", undefined],
    [0, undefined],
  ] as const)("status %j sets the state filter to %s", (status, state) => {
    expect(parseList({ status }).state).toBe(state);
  });

  it.each(["working", "TASK_STATE_RUNNING", 9])("rejects status %j", (status) => {
    expect(violations(() => parseList({ status }))).toEqual(["params.status"]);
  });

  it("reads the other filters and normalises the timestamp to UTC", () => {
    expect(
      parseList({
        tenant: "t",
        contextId: "c1",
        pageToken: "abc",
        historyLength: 0,
        includeArtifacts: true,
        statusTimestampAfter: "2025-03-01T12:00:00+02:00",
      }),
    ).toEqual({
      contextId: "c1",
      pageSize: 50,
      pageToken: "abc",
      historyLength: 0,
      includeArtifacts: true,
      statusTimestampAfter: "2025-03-01T10:00:00.000Z",
    });
  });

  it("treats empty contextId and pageToken as absent", () => {
    const p = parseList({ contextId: "", pageToken: "" });
    expect(p.contextId).toBeUndefined();
    expect(p.pageToken).toBeUndefined();
  });

  it("names every bad field at once", () => {
    expect(
      violations(() =>
        parseList({
          pageSize: 150,
          historyLength: -5,
          status: "running",
          statusTimestampAfter: "x",
        }),
      ).sort(),
    ).toEqual([
      "params.historyLength",
      "params.pageSize",
      "params.status",
      "params.statusTimestampAfter",
    ]);
  });
});
