import { describe, expect, it } from "vitest";
import { A2AError } from "../../src/protocol/errors";
import { idKeys } from "../../src/storage/ids";

function refusal(env: object, origin: string): string | null {
  try {
    void idKeys(env, origin);
    return null;
  } catch (error) {
    return error instanceof A2AError ? error.kind : String(error);
  }
}

describe("id keys without EDGELINK_ID_KEY (issue 10: the origin is parsed once)", () => {
  it("local dev gets ephemeral keys; any other origin a clear error, however the calls interleave", () => {
    const noKey = {};
    // The remembered origin must never answer for another one.
    expect(refusal(noKey, "https://agent.example")).toBe("Internal");
    expect(refusal(noKey, "http://127.0.0.1:8787")).toBeNull();
    expect(refusal(noKey, "http://127.0.0.1:8787")).toBeNull();
    expect(refusal(noKey, "https://agent.example")).toBe("Internal");
    expect(refusal(noKey, "http://localhost")).toBeNull();
    expect(refusal(noKey, "https://localhost.example")).toBe("Internal");
    expect(refusal(noKey, "not a url")).toBe("Internal");
    // A secret too short is no secret.
    expect(refusal({ EDGELINK_ID_KEY: "short" }, "https://agent.example")).toBe("Internal");
    expect(refusal({ EDGELINK_ID_KEY: "x".repeat(32) }, "https://agent.example")).toBeNull();
  });
});
