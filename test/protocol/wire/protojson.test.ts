import { describe, expect, it } from "vitest";
import type { JsonObject } from "../../../src/protocol/json";
import { protoJsonNames } from "../../../src/protocol/wire/protojson";

describe("protoJsonNames", () => {
  it("maps proto names to JSON names at every level, the JSON name winning", () => {
    const mapped = protoJsonNames({
      history_length: 2,
      message: { message_id: "m", parts: [{ media_type: "text/plain", text: "x" }] },
      configuration: { return_immediately: true, returnImmediately: false },
    } as JsonObject);
    expect(mapped).toStrictEqual({
      historyLength: 2,
      message: { messageId: "m", parts: [{ mediaType: "text/plain", text: "x" }] },
      configuration: { returnImmediately: false },
    });
  });

  it("keeps the keys of the user's own JSON as written", () => {
    const mapped = protoJsonNames({
      message: { metadata: { user_key: 1 }, parts: [{ data: { a_b: 2 } }] },
      task_id: "t",
    } as JsonObject);
    expect(mapped).toStrictEqual({
      message: { metadata: { user_key: 1 }, parts: [{ data: { a_b: 2 } }] },
      taskId: "t",
    });
  });

  it("answers a request with no proto name as it is, copying nothing", () => {
    const params = {
      message: { messageId: "m", metadata: { user_key: 1 }, parts: [{ data: { a_b: 2 } }] },
    } as JsonObject;
    expect(protoJsonNames(params)).toBe(params);
    // One proto name anywhere outside the user's JSON and the request is mapped.
    const deep = { message: { parts: [{ media_type: "a/b" }] } } as JsonObject;
    expect(protoJsonNames(deep)).not.toBe(deep);
    expect(protoJsonNames(deep)).toStrictEqual({ message: { parts: [{ mediaType: "a/b" }] } });
  });
});
