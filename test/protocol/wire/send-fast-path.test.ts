import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { A2AError } from "../../../src/protocol/errors";
import { LIMITS } from "../../../src/protocol/limits";
import { parseSend, parseSendBySchema } from "../../../src/protocol/wire/requests";
import { plainV1Send } from "../../../src/protocol/wire/send-fast-path";

const message = { messageId: "m1", role: "ROLE_USER", parts: [{ text: "hello" }] };
const withMessage = (changes: Record<string, unknown>) => ({
  message: { ...message, ...changes },
});
const texts = (n: number) => Array.from({ length: n }, (_, i) => ({ text: `p${i}` }));

/** Inputs the fast path takes: the plain shape, up to each of its limits. */
const PLAIN: Record<string, unknown> = {
  "the bench's message": { message: { ...message, contextId: "ctx-1" } },
  "no context": { message },
  "a task id": withMessage({ taskId: "t".repeat(LIMITS.taskIdLength) }),
  "role as its number": withMessage({ role: 1 }),
  "the longest ids": withMessage({ messageId: "m".repeat(256), contextId: "c".repeat(256) }),
  "an empty context id": withMessage({ contextId: "" }),
  "an empty task id": withMessage({ taskId: "" }),
  "an empty text": withMessage({ parts: [{ text: "" }] }),
  "the most parts": withMessage({ parts: texts(LIMITS.parts) }),
  unicode: withMessage({ messageId: "é😀", parts: [{ text: "😀\u0000" }] }),
  "blocking choice": { message, configuration: { returnImmediately: true } },
  "history length": { message, configuration: { historyLength: 0, returnImmediately: false } },
  "a large history length": { message, configuration: { historyLength: 2 ** 53 - 1 } },
  "an empty configuration": { message, configuration: {} },
};

/** Inputs it leaves to the schema: valid ones outside the plain shape, and invalid ones. */
const SCHEMA: Record<string, unknown> = {
  "not an object": "hello",
  "an array": [message],
  null: null,
  "no message": {},
  "a message array": { message: [message] },
  "a tenant": { tenant: "acme", message },
  "an unknown field": { message, extra: 1 },
  metadata: { message, metadata: { a: 1 } },
  "message metadata": withMessage({ metadata: { "edgelink/role": "system" } }),
  "an unknown message field": withMessage({ kind: "message" }),
  extensions: withMessage({ extensions: ["x"] }),
  "agent role": withMessage({ role: "ROLE_AGENT" }),
  "role 2": withMessage({ role: 2 }),
  "v0.3 role": withMessage({ role: "user" }),
  "no role": { message: { messageId: "m1", parts: [{ text: "x" }] } },
  "empty message id": withMessage({ messageId: "" }),
  "numeric message id": withMessage({ messageId: 1 }),
  "long message id": withMessage({ messageId: "m".repeat(257) }),
  "control character": withMessage({ messageId: "a\nb" }),
  "lone surrogate": withMessage({ messageId: "a\ud800" }),
  "long context id": withMessage({ contextId: "c".repeat(257) }),
  "context id with DEL": withMessage({ contextId: "a\u007f" }),
  "numeric context id": withMessage({ contextId: 5 }),
  "null context id": withMessage({ contextId: null }),
  "long task id": withMessage({ taskId: "t".repeat(LIMITS.taskIdLength + 1) }),
  "no parts": withMessage({ parts: [] }),
  "parts not a list": withMessage({ parts: { text: "x" } }),
  "too many parts": withMessage({ parts: texts(LIMITS.parts + 1) }),
  "a data part": withMessage({ parts: [{ data: { a: 1 } }] }),
  "a url part": withMessage({ parts: [{ url: "relative" }] }),
  "a text part with media type": withMessage({ parts: [{ text: "x", mediaType: "text/plain" }] }),
  "a part with two contents": withMessage({ parts: [{ text: "x", data: 1 }] }),
  "a numeric text": withMessage({ parts: [{ text: 1 }] }),
  "an empty part": withMessage({ parts: [{}] }),
  "a null part": withMessage({ parts: [null] }),
  "a part marked a tool call": withMessage({
    parts: [{ text: "x", metadata: { "edgelink/part": "tool_call" } }],
  }),
  "configuration null": { message, configuration: null },
  "configuration a list": { message, configuration: [] },
  "negative history": { message, configuration: { historyLength: -1 } },
  "fractional history": { message, configuration: { historyLength: 1.5 } },
  "unsafe history": { message, configuration: { historyLength: 2 ** 53 } },
  "history as text": { message, configuration: { historyLength: "3" } },
  "blocking as text": { message, configuration: { returnImmediately: "true" } },
  "output modes": { message, configuration: { acceptedOutputModes: ["text/plain"] } },
  "a push config": {
    message,
    configuration: { taskPushNotificationConfig: { url: "https://example.com/hook" } },
  },
};

/** What parsing gives: the params, or the error's kind, message and fields. */
function outcome(parse: () => unknown): unknown {
  try {
    return { params: parse() };
  } catch (error) {
    if (!(error instanceof A2AError)) throw error;
    return { error: error.kind, message: error.message, fields: error.fieldViolations };
  }
}

describe("parseSend's plain v1 path", () => {
  // One clock for both parses: a message's timestamp is the time it is read.
  beforeEach(() => {
    vi.useFakeTimers();
    vi.setSystemTime(new Date("2026-11-02T10:00:00.000Z"));
  });
  afterEach(() => vi.useRealTimers());

  it.each(Object.entries(PLAIN))("takes %s, answering what the schema does", (_, input) => {
    expect(plainV1Send(input)).not.toBeNull();
    const expected = outcome(() => parseSendBySchema(input, "1.0"));
    expect(expected).toHaveProperty("params");
    expect(outcome(() => parseSend(input, "1.0"))).toStrictEqual(expected);
  });

  it.each(Object.entries(SCHEMA))("leaves %s to the schema", (_, input) => {
    expect(plainV1Send(input)).toBeNull();
    const expected = outcome(() => parseSendBySchema(input, "1.0"));
    expect(outcome(() => parseSend(input, "1.0"))).toStrictEqual(expected);
  });

  it("never takes a v0.3 request", () => {
    const v03 = {
      message: { kind: "message", messageId: "m1", role: "user", parts: [{ text: "x" }] },
    };
    const expected = outcome(() => parseSendBySchema(v03, "0.3"));
    expect(outcome(() => parseSend(v03, "0.3"))).toStrictEqual(expected);
    // A v1-shaped message under v0.3 is the v0.3 schema's to judge (its role is not v0.3's).
    expect(outcome(() => parseSend({ message }, "0.3"))).toHaveProperty("error", "InvalidParams");
  });

  it("sends no field it has no value for (the params are cloned to the object)", () => {
    const params = parseSend({ message }, "1.0");
    expect(Object.keys(params).sort()).toStrictEqual(["message", "returnImmediately"]);
    const viaSchema = parseSendBySchema({ message, metadata: { a: 1 } }, "1.0");
    expect(Object.keys(viaSchema).sort()).toStrictEqual([
      "message",
      "metadata",
      "returnImmediately",
    ]);
  });
});
