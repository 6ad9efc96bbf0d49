import { describe, expect, it } from "vitest";
import { resolveAgent } from "../../src/agent/definition";
import { A2AError } from "../../src/models/errors";
import { Parts } from "../../src/models/part";
import { requireExtensions, requireInputFormats } from "../../src/server/negotiation";
import { rpc, userMessage } from "../helpers";

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
