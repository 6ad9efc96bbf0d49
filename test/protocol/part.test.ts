import { describe, expect, it } from "vitest";
import {
  FileContent,
  isKnownPart,
  KNOWN_PART_TYPES,
  Part,
  Parts,
  textOf,
} from "../../src/protocol/part";
import { everyPart, wire } from "./fixtures";

const CALL_ID = /^call_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const rejects = (input: unknown) => expect(Part.safeParse(input).success).toBe(false);

describe("part base (C3)", () => {
  it("C3 knows exactly the A2A and Edgelink part types", () => {
    expect([...KNOWN_PART_TYPES]).toEqual([
      "text",
      "data",
      "file",
      "tool_call",
      "tool_output",
      "infer",
      "infer_output",
      "error",
      "status",
      "route",
      "decision",
    ]);
  });

  it.each(Object.entries(everyPart()))("C3 %s round-trips through JSON and Part.parse", (_, p) => {
    expect(Part.parse(wire(p))).toStrictEqual(p);
  });

  it("C3 a part of an unknown type is preserved untouched", () => {
    const custom = {
      type: "x-chart",
      content: { series: [1, 2, { label: "three" }], opts: null },
      metadata: { v: 2 },
    };
    const parsed = Part.parse(wire(custom));
    expect(parsed).toStrictEqual(custom);
    expect(isKnownPart(parsed)).toBe(false);
  });

  it("C3 a known type with bad content is rejected, not kept as an unknown part", () => {
    rejects({ type: "text", content: 5 });
    rejects({ type: "tool_call", content: {} });
    rejects({ type: "error", content: { code: "E" } });
    rejects({ type: "status", content: {} });
    rejects({ type: "file", content: {} });
  });

  it("C3 a part needs a non-empty type and some content", () => {
    rejects({ content: "x" });
    rejects({ type: "", content: "x" });
    rejects({ type: "custom" });
    rejects({ type: "text" });
    rejects("text");
    rejects(null);
  });

  it("C3 part metadata must be a JSON object", () => {
    rejects({ type: "text", content: "x", metadata: "m" });
    rejects({ type: "text", content: "x", metadata: [1] });
    expect(Part.parse({ type: "text", content: "x", metadata: { a: [1] } })).toEqual({
      type: "text",
      content: "x",
      metadata: { a: [1] },
    });
  });

  it("C3 isKnownPart tells our types from foreign ones", () => {
    for (const p of Object.values(everyPart())) {
      expect(isKnownPart(p)).toBe((KNOWN_PART_TYPES as readonly string[]).includes(p.type));
    }
  });
});

describe("text and data parts (C4)", () => {
  it("C4 text is kept byte-exact", () => {
    const s = "  é\u0301 ✓ 🦆\r\n\ttab \u0000 \u2028 end  ";
    const p = Parts.text(s);
    expect(p).toStrictEqual({ type: "text", content: s });
    expect((Part.parse(wire(p)) as { content: string }).content).toBe(s);
  });

  it("C4 json and data factories store the content as given", () => {
    const content = { b: 2, a: [1, { c: null }] };
    const p = Parts.json(content);
    expect(p).toStrictEqual({ type: "data", content });
    expect(p.content).toBe(content);
    expect(Parts.data(content)).toStrictEqual(p);
    expect(Object.keys(Parts.data(content).content as object)).toEqual(["b", "a"]);
  });

  it.each([[[1, 2]], ["s"], [0], [true], [null]])("C4 data content may be any JSON: %j", (v) => {
    expect(Part.parse({ type: "data", content: v })).toStrictEqual({ type: "data", content: v });
  });

  it("C4 the seed's json type is read as a data part with everything else kept", () => {
    expect(
      Part.parse({
        type: "json",
        content: { a: 1 },
        mediaType: "application/json",
        metadata: { m: 1 },
      }),
    ).toStrictEqual({
      type: "data",
      content: { a: 1 },
      mediaType: "application/json",
      metadata: { m: 1 },
    });
  });

  it("C4 data content that is not JSON is rejected", () => {
    rejects({ type: "data", content: undefined });
    rejects({ type: "data", content: () => 1 });
  });
});

describe("tool_call and tool_output parts (C5, C6)", () => {
  it("C5 toolCall keeps name, args and a given callId", () => {
    expect(Parts.toolCall("add", { a: 1, b: 2 }, "call_1")).toStrictEqual({
      type: "tool_call",
      content: { toolName: "add", args: { a: 1, b: 2 }, callId: "call_1" },
    });
  });

  it("C5 missing args become {} and a missing callId is generated", () => {
    const p = Parts.toolCall("now");
    expect(p.content.args).toEqual({});
    expect(p.content.callId).toMatch(CALL_ID);
    const parsed = Part.parse({ type: "tool_call", content: { toolName: "now" } });
    expect(parsed).toStrictEqual({
      type: "tool_call",
      content: { toolName: "now", args: {}, callId: expect.stringMatching(CALL_ID) },
    });
  });

  it("C5 generated callIds are unique", () => {
    const ids = Array.from({ length: 100 }, () => Parts.toolCall("x").content.callId);
    expect(new Set(ids).size).toBe(100);
  });

  it("C5 a tool call needs a name, object args and a non-empty callId", () => {
    expect(() => Parts.toolCall("")).toThrow();
    rejects({ type: "tool_call", content: { toolName: "x", args: [1] } });
    rejects({ type: "tool_call", content: { toolName: "x", args: "a=1" } });
    rejects({ type: "tool_call", content: { toolName: "x", callId: "" } });
  });

  it("C6 toolOutput carries callId, result and a null error by default", () => {
    expect(Parts.toolOutput("call_1", { sum: 3 })).toStrictEqual({
      type: "tool_output",
      content: { callId: "call_1", result: { sum: 3 }, error: null },
    });
    expect(Parts.toolOutput("call_2", null, "division by zero").content).toStrictEqual({
      callId: "call_2",
      result: null,
      error: "division by zero",
    });
  });

  it("C6 parsing fills result and error with null, and requires the callId", () => {
    expect(Part.parse({ type: "tool_output", content: { callId: "c" } })).toStrictEqual({
      type: "tool_output",
      content: { callId: "c", result: null, error: null },
    });
    rejects({ type: "tool_output", content: { result: 1 } });
    rejects({ type: "tool_output", content: { callId: "" } });
    rejects({ type: "tool_output", content: { callId: "c", error: 500 } });
  });

  it("C6 the callId of an output matches the call it answers", () => {
    const call = Parts.toolCall("add", { a: 1 });
    const out = Parts.toolOutput(call.content.callId, 1);
    expect(out.content.callId).toBe(call.content.callId);
  });
});

describe("infer and infer_output parts (C7, C8)", () => {
  it("C7 absent keys are omitted, empty strings kept", () => {
    expect(Parts.infer({ prompt: "", user: "" })).toStrictEqual({
      type: "infer",
      content: { prompt: "", user: "" },
    });
    expect(Object.keys(Parts.infer({ prompt: "p" }).content)).toEqual(["prompt"]);
    expect(Object.keys(Parts.infer().content)).toEqual([]);
    const parsed = Part.parse({ type: "infer", content: { user: "" } });
    expect(parsed).toStrictEqual({ type: "infer", content: { user: "" } });
  });

  // Regression: zod keeps keys whose value is undefined, so forwarded optional arguments
  // made `"prompt" in content` true although no prompt was given.
  it("C7 a key passed as undefined is absent from the content", () => {
    const prompt: string | undefined = undefined;
    expect(Object.keys(Parts.infer({ prompt, user: "u" }).content)).toEqual(["user"]);
  });

  it("C7 keeps outputSchema and metadata as objects", () => {
    const content = {
      prompt: "extract",
      user: "alice",
      outputSchema: { type: "object", required: ["x"] },
      metadata: { model: "small" },
    };
    expect(Parts.infer(content)).toStrictEqual({ type: "infer", content });
    expect(() => Parts.infer({ outputSchema: [] as never })).toThrow();
    rejects({ type: "infer", content: { prompt: 1 } });
  });

  it("C8 infer_output is a string or an object", () => {
    expect(Parts.inferOutput("42")).toStrictEqual({ type: "infer_output", content: "42" });
    expect(Parts.inferOutput({ n: 42 })).toStrictEqual({
      type: "infer_output",
      content: { n: 42 },
    });
    expect(Part.parse({ type: "infer_output", content: "" })).toStrictEqual({
      type: "infer_output",
      content: "",
    });
    rejects({ type: "infer_output", content: 42 });
    rejects({ type: "infer_output", content: [1] });
    rejects({ type: "infer_output", content: null });
  });
});

describe("error and status parts (C9, C10)", () => {
  it("C9 error parts default retryable to false", () => {
    expect(Parts.error("E_RATE", "slow down")).toStrictEqual({
      type: "error",
      content: { code: "E_RATE", message: "slow down", retryable: false },
    });
    expect(Parts.error("E_RATE", "slow down", true).content.retryable).toBe(true);
    expect(Part.parse({ type: "error", content: { code: "E", message: "m" } })).toStrictEqual({
      type: "error",
      content: { code: "E", message: "m", retryable: false },
    });
    rejects({ type: "error", content: { code: "E", message: "m", retryable: "yes" } });
    rejects({ type: "error", content: { message: "m" } });
  });

  it("C10 a status message is present as null when absent", () => {
    const p = Parts.status("working");
    expect(p).toStrictEqual({ type: "status", content: { state: "working", message: null } });
    const parsed = Part.parse({ type: "status", content: { state: "input-required" } });
    expect(parsed).toStrictEqual({
      type: "status",
      content: { state: "input-required", message: null },
    });
    expect("message" in (parsed.content as object)).toBe(true);
    expect(Parts.status("input-required", "which date?").content.message).toBe("which date?");
  });
});

describe("route and decision parts (C11)", () => {
  it("C11 route holds a key, optional reason and confidence, and metadata defaulting to {}", () => {
    expect(Parts.route("billing")).toStrictEqual({
      type: "route",
      content: { routeKey: "billing", metadata: {} },
    });
    expect(
      Parts.route("billing", { reason: "invoice", confidence: 0.75, metadata: { by: "llm" } }),
    ).toStrictEqual({
      type: "route",
      content: {
        routeKey: "billing",
        reason: "invoice",
        confidence: 0.75,
        metadata: { by: "llm" },
      },
    });
  });

  it("C11 decision has the same content under its own type", () => {
    expect(Parts.decision("escalate", { confidence: 1 })).toStrictEqual({
      type: "decision",
      content: { routeKey: "escalate", confidence: 1, metadata: {} },
    });
  });

  it("C11 confidence must lie in [0, 1] and the key must not be empty", () => {
    expect(Parts.route("k", { confidence: 0 }).content.confidence).toBe(0);
    expect(() => Parts.route("k", { confidence: 1.01 })).toThrow();
    expect(() => Parts.route("k", { confidence: -0.1 })).toThrow();
    expect(() => Parts.route("")).toThrow();
    rejects({ type: "decision", content: { routeKey: "k", confidence: 2 } });
  });
});

describe("file and media parts (C12)", () => {
  it("C12 a file is a URL or base64 bytes, with optional media type and name", () => {
    expect(Parts.file({ url: "https://x/a.wav", mediaType: "audio/wav" })).toStrictEqual({
      type: "file",
      content: { url: "https://x/a.wav", mediaType: "audio/wav" },
    });
    expect(
      Parts.file({ bytes: "AAEC/w==", mediaType: "video/mp4", filename: "v.mp4" }),
    ).toStrictEqual({
      type: "file",
      content: { bytes: "AAEC/w==", mediaType: "video/mp4", filename: "v.mp4" },
    });
  });

  it("C12 a file needs exactly one of url or bytes", () => {
    expect(() => Parts.file({})).toThrow("exactly one of url or bytes");
    expect(() => Parts.file({ url: "https://x", bytes: "AA==" })).toThrow(
      "exactly one of url or bytes",
    );
    rejects({ type: "file", content: { url: "https://x", bytes: "AA==" } });
    expect(FileContent.safeParse({ mediaType: "image/png" }).success).toBe(false);
  });

  it("C12 bytes must be base64", () => {
    expect(() => Parts.file({ bytes: "not base64!" })).toThrow();
    rejects({ type: "file", content: { bytes: "%%%" } });
  });

  it("C12 image is a file by URL, image/png unless told otherwise", () => {
    expect(Parts.image("https://x/cat.png")).toStrictEqual({
      type: "file",
      content: { url: "https://x/cat.png", mediaType: "image/png" },
    });
    expect(Parts.image("https://x/cat.webp", "image/webp").content.mediaType).toBe("image/webp");
  });
});

describe("textOf", () => {
  it("joins the text parts only, in order", () => {
    expect(
      textOf([
        Parts.text("Hello, "),
        Parts.data({ ignored: true }),
        Parts.toolCall("x"),
        Parts.text("world"),
        Parts.inferOutput("not text"),
      ]),
    ).toBe("Hello, world");
    expect(textOf([])).toBe("");
    expect(textOf([Parts.data("x")])).toBe("");
  });
});
