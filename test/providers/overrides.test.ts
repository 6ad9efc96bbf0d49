import { describe, expect, it } from "vitest";
import { ModelRequest } from "../../src/providers/base/types";
import { openai } from "../../src/providers/openai/openai-chat";
import { withOverrides } from "../../src/providers/overrides";
import { collectBatches, FakeProvider } from "./fake-provider";

const request = ModelRequest.parse({ messages: [{ role: "user", content: "Hi" }], temperature: 1 });

describe("withOverrides", () => {
  it("G17: returns a new model with the settings applied; the original is unchanged", async () => {
    const base = openai({ model: "gpt-4o-mini", apiKey: "k", baseUrl: "https://fake.test/v1" });
    const before = structuredClone(base.capabilities);
    const precise = withOverrides(base, {
      settings: { temperature: 0, maxTokens: 64 },
      capabilities: { inputPricePerMillion: 0.1 },
    });
    expect(precise).not.toBe(base);
    expect(precise.capabilities.inputPricePerMillion).toBe(0.1);
    expect(base.capabilities).toEqual(before);

    const fake = new FakeProvider().reply(
      { fixture: "openai-chat/text-with-usage.sse" },
      { fixture: "openai-chat/text-with-usage.sse" },
    );
    await collectBatches(precise.streamBatches(request, { fetch: fake.fetch }));
    await collectBatches(base.streamBatches(request, { fetch: fake.fetch }));
    expect(fake.requests[0]?.body).toMatchObject({ temperature: 0, max_tokens: 64 });
    expect(fake.requests[1]?.body.temperature).toBe(1);
    expect(fake.requests[1]?.body).not.toHaveProperty("max_tokens");
  });

  it("G14 G17: overridden prices reach the computed cost, not only the reported capabilities", async () => {
    const base = openai({ model: "gpt-4o-mini", apiKey: "k", baseUrl: "https://fake.test/v1" });
    const negotiated = withOverrides(base, {
      capabilities: { inputPricePerMillion: 1, outputPricePerMillion: 2 },
    });
    const fake = new FakeProvider().reply(
      { fixture: "openai-chat/text-with-usage.sse" },
      { fixture: "openai-chat/text-with-usage.sse" },
    );
    const cost = async (model: typeof base) => {
      const events = await collectBatches(model.streamBatches(request, { fetch: fake.fetch }));
      const end = events.find((e) => e.type === "message_end");
      return end?.type === "message_end" ? end.costEstimate : undefined;
    };
    // 14 prompt and 8 completion tokens in the recording.
    expect(await cost(negotiated)).toBeCloseTo((14 * 1 + 8 * 2) / 1e6, 12);
    expect(await cost(base)).toBeCloseTo((14 * 0.15 + 8 * 0.6) / 1e6, 12);
  });

  it("G17: invalid settings are refused when the override is made, naming the field", () => {
    const base = openai({ model: "gpt-4o-mini", apiKey: "k" });
    expect(() => withOverrides(base, { settings: { temperature: 5 } })).toThrow(/temperature/);
  });
});
