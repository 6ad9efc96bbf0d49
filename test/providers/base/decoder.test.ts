import { describe, expect, it } from "vitest";
import { inStreamError, nonEmpty, StreamMessage } from "../../../src/providers/base/decoder";
import { ProviderError } from "../../../src/providers/base/errors";
import { capabilitiesFor } from "../../../src/providers/base/pricing";
import { type StreamEvent, usage } from "../../../src/providers/base/types";

const capabilities = capabilitiesFor("acme-1", {
  inputPricePerMillion: 1,
  outputPricePerMillion: 2,
});

function message(requestId: string | null = null): StreamMessage {
  return new StreamMessage({ provider: "acme", model: "acme-1", capabilities, requestId });
}

describe("the start and end every stream decoder shares", () => {
  it("sends message_start once, with the stream's model and id when the header had none", () => {
    const m = message();
    const out: StreamEvent[] = [];
    m.start(out, { model: "acme-1-0425", requestId: "resp_1" });
    m.start(out, { model: "other", requestId: "resp_2" });
    expect(out).toEqual([
      { type: "message_start", provider: "acme", model: "acme-1-0425", requestId: "resp_1" },
    ]);
    expect(m.started).toBe(true);
    expect(m.requestId).toBe("resp_1");
  });

  it("keeps the header's request id and the asked-for model when the stream names none", () => {
    const m = message("req_header");
    const out: StreamEvent[] = [];
    m.start(out, { model: null, requestId: "resp_1" });
    expect(out).toEqual([
      { type: "message_start", provider: "acme", model: "acme-1", requestId: "req_header" },
    ]);
  });

  it("finishes with the cost of the usage, starting the message if nothing had", () => {
    const m = message();
    const out: StreamEvent[] = [];
    const used = usage({ promptTokens: 1_000_000, completionTokens: 500_000 });
    m.finish(out, { stopReason: "stop", providerStopReason: "end", usage: used, reasoning: [] });
    expect(out.map((e) => e.type)).toEqual(["message_start", "message_end"]);
    expect(out[1]).toEqual({
      type: "message_end",
      stopReason: "stop",
      providerStopReason: "end",
      usage: used,
      reasoning: [],
      costEstimate: 2,
    });
    expect(m.ended).toBe(true);
    expect(() => m.assertEnded()).not.toThrow();
  });

  it("has no cost without usage", () => {
    const out: StreamEvent[] = [];
    message().finish(out, {
      stopReason: "stop",
      providerStopReason: null,
      usage: null,
      reasoning: [],
    });
    expect(out[1]).toMatchObject({ type: "message_end", costEstimate: null });
  });

  it("calls a body that stopped before the end cut off: a retryable stream error", () => {
    const m = message("req_9");
    m.start([]);
    let caught: unknown;
    try {
      m.assertEnded("no terminator");
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ProviderError);
    expect(caught).toMatchObject({
      provider: "acme",
      kind: "stream",
      message: "no terminator",
      requestId: "req_9",
      retryable: true,
    });
  });
});

describe("an error a provider sent inside its stream", () => {
  it("is a stream error naming the provider, with the provider's code and status", () => {
    const error = inStreamError("acme", {
      detail: "overloaded",
      code: "overloaded_error",
      status: 529,
      requestId: "req_1",
      retryable: true,
      retryAfterMs: 1000,
    });
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({
      provider: "acme",
      kind: "stream",
      message: "acme sent an error in the stream: overloaded",
      code: "overloaded_error",
      status: 529,
      requestId: "req_1",
      retryable: true,
      retryAfterMs: 1000,
    });
  });

  it("may name the vendor apart from the configured provider name, and defaults to nulls", () => {
    const error = inStreamError("my-gemini", {
      detail: "bad",
      speaker: "gemini",
      retryable: false,
    });
    expect(error).toMatchObject({
      provider: "my-gemini",
      message: "gemini sent an error in the stream: bad",
      code: null,
      status: null,
      requestId: null,
      retryable: false,
      retryAfterMs: null,
    });
  });
});

describe("nonEmpty", () => {
  it("keeps a string with something in it and drops the rest", () => {
    expect(nonEmpty("a")).toBe("a");
    expect(nonEmpty("")).toBeNull();
    expect(nonEmpty(3)).toBeNull();
    expect(nonEmpty(undefined)).toBeNull();
  });
});
