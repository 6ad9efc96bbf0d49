import { describe, expect, it } from "vitest";
import { resolveAgent } from "../../../src/agent/definition";
import { A2AError } from "../../../src/protocol/errors";
import { Parts } from "../../../src/protocol/part";
import type { Model } from "../../../src/providers/base/types";
import {
  requireAcceptedParts,
  requireExtensions,
  requireInputFormats,
} from "../../../src/worker/a2a/negotiation";
import { rpc, userMessage } from "../../support/helpers";

const agent = resolveAgent({
  card: {
    name: "N",
    description: "negotiation",
    inputFormats: ["text/plain", "image/*"],
    extensions: [
      { uri: "https://ext.example/required", required: true },
      { uri: "https://ext.example/optional" },
    ],
  },
});

function kindOf(fn: () => void): string | null {
  try {
    fn();
    return null;
  } catch (error) {
    return error instanceof A2AError ? error.kind : "other";
  }
}

describe("extensions (-32008)", () => {
  it("refuses a request that does not declare a required extension", () => {
    const bare = new Request("http://x/");
    expect(kindOf(() => requireExtensions(bare, agent))).toBe("ExtensionSupportRequired");
    const declared = new Request("http://x/", {
      headers: { "A2A-Extensions": "https://ext.example/other, https://ext.example/required" },
    });
    expect(kindOf(() => requireExtensions(declared, agent))).toBeNull();
  });

  it("an agent without required extensions accepts everything", () => {
    const open = resolveAgent({ card: { name: "O", description: "" } });
    expect(kindOf(() => requireExtensions(new Request("http://x/"), open))).toBeNull();
  });
});

describe("input media types (-32005)", () => {
  it("accepts listed types, wildcards, and parts without a media type", () => {
    const ok = [
      Parts.text("hi"),
      Parts.file({ url: "https://x/cat.png", mediaType: "image/png" }),
      Parts.toolCall("add", {}),
      Parts.data({ a: 1 }),
    ];
    expect(kindOf(() => requireInputFormats(ok, agent))).toBeNull();
  });

  it("refuses an unlisted media type and names the part", () => {
    try {
      requireInputFormats(
        [Parts.text("x"), Parts.file({ url: "https://x/a.pdf", mediaType: "application/pdf" })],
        agent,
      );
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(A2AError);
      expect((error as A2AError).kind).toBe("ContentTypeNotSupported");
      expect((error as A2AError).fieldViolations[0]?.field).toBe(
        "params.message.parts.1.mediaType",
      );
    }
  });

  it("the demo agent (text/plain only) answers an image with -32005 and stores nothing", async () => {
    const { body } = await rpc("SendMessage", {
      message: userMessage("", { parts: [{ url: "https://x/cat.png", mediaType: "image/png" }] }),
    });
    expect(body.error).toMatchObject({ code: -32005 });
  });
});

describe("client infer and tool_call parts (C5, C7)", () => {
  const model = { provider: "test", model: "m" } as unknown as Model;
  const card = { name: "M", description: "" };
  const parts = [Parts.text("hi"), Parts.toolCall("add", {}), Parts.infer({ prompt: "p" })];

  it("C5, C7: a model-backed agent refuses each with invalid params naming the part and the option", () => {
    const agent = resolveAgent({ card, model }) as never;
    try {
      requireAcceptedParts(parts, agent);
      expect.unreachable();
    } catch (error) {
      expect((error as A2AError).kind).toBe("InvalidParams");
      expect((error as A2AError).code).toBe(-32602);
      expect((error as A2AError).message).toMatch(/tool_call parts .* acceptToolCalls: true/);
      expect((error as A2AError).fieldViolations[0]?.field).toBe("params.message.parts.1");
    }
    const tools = resolveAgent({ card, model, acceptToolCalls: true }) as never;
    try {
      requireAcceptedParts(parts, tools);
      expect.unreachable();
    } catch (error) {
      expect((error as A2AError).message).toMatch(/infer parts .* acceptInfer: true/);
      expect((error as A2AError).fieldViolations[0]?.field).toBe("params.message.parts.2");
    }
  });

  it("C5, C7: accepted when opted in, and always by an agent without a model (B10)", () => {
    const optedIn = resolveAgent({ card, model, acceptInfer: true, acceptToolCalls: true });
    expect(kindOf(() => requireAcceptedParts(parts, optedIn as never))).toBeNull();
    expect(kindOf(() => requireAcceptedParts(parts, agent))).toBeNull();
  });
});
