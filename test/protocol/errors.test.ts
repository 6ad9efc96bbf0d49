import { describe, expect, it } from "vitest";
import { A2AError, ERROR_TABLE, type ErrorKind, invalidParams } from "../../src/protocol/errors";

/** A2A §5.4 (code, gRPC status, HTTP status) and JSON-RPC 2.0's own codes (§9.5, §11.6). */
const EXPECTED: [ErrorKind, number, string, number, string][] = [
  ["TaskNotFound", -32001, "NOT_FOUND", 404, "TASK_NOT_FOUND"],
  ["TaskNotCancelable", -32002, "FAILED_PRECONDITION", 400, "TASK_NOT_CANCELABLE"],
  [
    "PushNotificationNotSupported",
    -32003,
    "FAILED_PRECONDITION",
    400,
    "PUSH_NOTIFICATION_NOT_SUPPORTED",
  ],
  ["UnsupportedOperation", -32004, "FAILED_PRECONDITION", 400, "UNSUPPORTED_OPERATION"],
  ["ContentTypeNotSupported", -32005, "INVALID_ARGUMENT", 400, "CONTENT_TYPE_NOT_SUPPORTED"],
  ["InvalidAgentResponse", -32006, "INTERNAL", 500, "INVALID_AGENT_RESPONSE"],
  [
    "ExtendedAgentCardNotConfigured",
    -32007,
    "FAILED_PRECONDITION",
    400,
    "EXTENDED_AGENT_CARD_NOT_CONFIGURED",
  ],
  ["ExtensionSupportRequired", -32008, "FAILED_PRECONDITION", 400, "EXTENSION_SUPPORT_REQUIRED"],
  ["VersionNotSupported", -32009, "FAILED_PRECONDITION", 400, "VERSION_NOT_SUPPORTED"],
  ["JSONParse", -32700, "INVALID_ARGUMENT", 400, "INVALID_JSON"],
  ["InvalidRequest", -32600, "INVALID_ARGUMENT", 400, "INVALID_REQUEST"],
  ["MethodNotFound", -32601, "NOT_FOUND", 404, "METHOD_NOT_FOUND"],
  ["InvalidParams", -32602, "INVALID_ARGUMENT", 400, "INVALID_PARAMS"],
  ["Internal", -32603, "INTERNAL", 500, "INTERNAL"],
];

describe("ERROR_TABLE (A2A §5.4)", () => {
  it.each(EXPECTED)("%s is code %i, %s, HTTP %i, reason %s", (kind, code, status, http, reason) => {
    expect(ERROR_TABLE[kind]).toEqual({ code, http, status, reason });
    const err = new A2AError(kind, "x");
    expect(err.code).toBe(code);
    expect(err.httpStatus).toBe(http);
  });

  it("the A2A-specific codes are exactly -32001..-32009, one kind each (besides HTTP 415)", () => {
    const a2a = Object.values(ERROR_TABLE)
      .filter((e) => e.http !== 415)
      .map((e) => e.code)
      .filter((c) => c >= -32009 && c <= -32001)
      .sort((a, b) => b - a);
    expect(a2a).toEqual([-32001, -32002, -32003, -32004, -32005, -32006, -32007, -32008, -32009]);
  });

  it("the extra kinds keep JSON-RPC codes but their own HTTP statuses", () => {
    expect(ERROR_TABLE.PayloadTooLarge).toMatchObject({ code: -32600, http: 413 });
    expect(ERROR_TABLE.Unauthenticated).toMatchObject({ http: 401, status: "UNAUTHENTICATED" });
  });

  it("every reason is distinct UPPER_SNAKE_CASE", () => {
    const reasons = Object.values(ERROR_TABLE).map((e) => e.reason);
    expect(new Set(reasons).size).toBe(reasons.length);
    for (const r of reasons) expect(r).toMatch(/^[A-Z][A-Z_]*[A-Z]$/);
  });
});

describe("A2AError", () => {
  it("is an Error carrying kind, message, metadata and field violations", () => {
    const err = new A2AError("TaskNotFound", "Task t1 not found", { taskId: "t1" });
    expect(err).toBeInstanceOf(Error);
    expect(err.name).toBe("A2AError");
    expect(err.kind).toBe("TaskNotFound");
    expect(err.message).toBe("Task t1 not found");
    expect(err.metadata).toEqual({ taskId: "t1" });
    expect(err.fieldViolations).toEqual([]);
  });

  it("details() starts with an ErrorInfo in the a2a-protocol.org domain", () => {
    const before = Date.now();
    const details = new A2AError("TaskNotFound", "nope", { taskId: "t1" }).details();
    expect(details).toHaveLength(1);
    expect(details[0]).toEqual({
      "@type": "type.googleapis.com/google.rpc.ErrorInfo",
      reason: "TASK_NOT_FOUND",
      domain: "a2a-protocol.org",
      metadata: { taskId: "t1", timestamp: expect.any(String) },
    });
    const info = details[0] as { metadata: { timestamp: string } };
    expect(Date.parse(info.metadata.timestamp)).toBeGreaterThanOrEqual(before - 1);
  });

  it("details() adds a BadRequest listing the field violations when there are any", () => {
    const violations = [
      { field: "params.message.parts", description: "at least one part is required" },
      { field: "params.message.role", description: "bad role" },
    ];
    const details = new A2AError("InvalidParams", "bad", {}, violations).details();
    expect(details).toHaveLength(2);
    expect(details[0]).toMatchObject({ reason: "INVALID_PARAMS", domain: "a2a-protocol.org" });
    expect(details[1]).toEqual({
      "@type": "type.googleapis.com/google.rpc.BadRequest",
      fieldViolations: violations,
    });
    expect(details[1]?.fieldViolations).not.toBe(violations);
  });

  it("toData is plain data that fromData turns back into the same error", () => {
    const err = new A2AError("InvalidParams", "bad", { a: "1" }, [
      { field: "params.id", description: "id is required" },
    ]);
    const data = err.toData();
    expect(data).toEqual({
      kind: "InvalidParams",
      message: "bad",
      metadata: { a: "1" },
      fieldViolations: [{ field: "params.id", description: "id is required" }],
    });
    // Durable Object RPC uses structured clone, so the plain form must survive it.
    const back = A2AError.fromData(structuredClone(data));
    expect(back).toBeInstanceOf(A2AError);
    expect(back.kind).toBe(err.kind);
    expect(back.message).toBe(err.message);
    expect(back.metadata).toEqual(err.metadata);
    expect(back.fieldViolations).toEqual(err.fieldViolations);
    expect(back.code).toBe(-32602);
  });

  it("toData leaves out empty metadata and violations; fromData restores the defaults", () => {
    const data = new A2AError("Internal", "boom").toData();
    expect(data).toStrictEqual({ kind: "Internal", message: "boom" });
    const back = A2AError.fromData(data);
    expect(back.metadata).toEqual({});
    expect(back.fieldViolations).toEqual([]);
  });
});

describe("invalidParams", () => {
  it("names each bad field by its dotted path under the prefix", () => {
    const err = invalidParams(
      [
        { path: ["message", "parts"], message: "at least one part is required" },
        { path: ["message", "parts", 0, "text"], message: "expected string" },
      ],
      "params",
    );
    expect(err.kind).toBe("InvalidParams");
    expect(err.code).toBe(-32602);
    expect(err.fieldViolations).toEqual([
      { field: "params.message.parts", description: "at least one part is required" },
      { field: "params.message.parts.0.text", description: "expected string" },
    ]);
    expect(err.message).toBe(
      "Invalid parameters: params.message.parts: at least one part is required; " +
        "params.message.parts.0.text: expected string",
    );
  });

  it("a root-level issue without a prefix is called (root)", () => {
    expect(invalidParams([{ path: [], message: "expected object" }]).fieldViolations).toEqual([
      { field: "(root)", description: "expected object" },
    ]);
    expect(invalidParams([{ path: [], message: "m" }], "params").fieldViolations[0]?.field).toBe(
      "params",
    );
  });
});
