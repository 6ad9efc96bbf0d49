import { describe, expect, it } from "vitest";
import { connectTarget, describeTarget } from "../../src/agent/delegation-target";

const binding = { fetch: () => Promise.resolve(new Response("unused")) } as unknown as Fetcher;
const card = { name: "Peer", url: "https://peer.example.com/a2a" };

describe("a delegation's target as the ledger stores it", () => {
  it("a URL as its href, a card as its JSON, a binding by its name", () => {
    expect(describeTarget("https://peer.example.com", {})).toBe("url:https://peer.example.com/");
    expect(describeTarget(new URL("https://peer.example.com/a2a"), {})).toBe(
      "url:https://peer.example.com/a2a",
    );
    expect(describeTarget(card, {})).toBe(`card:${JSON.stringify(card)}`);
    expect(describeTarget({ binding: "PEER" }, {})).toBe("binding:PEER");
  });

  it("a service binding is found by identity among env's values, whatever its shape", () => {
    expect(describeTarget(binding, { OTHER: {}, PEER: binding })).toBe("binding:PEER");
  });

  it("an object that is not one of env's bindings, or a card over 64 KiB, is refused", () => {
    class Stub {
      fetch() {}
    }
    expect(() => describeTarget(new Stub() as unknown as Fetcher, { PEER: binding })).toThrow(
      /must be one of this Worker's env bindings/,
    );
    const huge = { name: "Peer", description: "x".repeat(64 * 1024) };
    expect(() => describeTarget(huge, {})).toThrow(/over 64 KiB/);
  });

  it("a stored binding whose env value is not a service binding is refused, naming it", () => {
    expect(() => connectTarget("binding:PEER", { PEER: "not a binding" })).toThrow(
      "delegate: env.PEER is not a service binding of this Worker",
    );
    expect(() => connectTarget("binding:GONE", {})).toThrow(/env\.GONE/);
  });
});
