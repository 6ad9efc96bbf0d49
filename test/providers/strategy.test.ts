import { describe, expect, it } from "vitest";
import { resolveAgent } from "../../src/agent/definition";
import { generate } from "../../src/providers/base/collect";
import { type Model, ModelRequest } from "../../src/providers/base/types";
import { openai } from "../../src/providers/openai/openai-chat";
import { openaiCompatible } from "../../src/providers/openai/openai-compatible";
import { pickedIndex, withStrategy } from "../../src/providers/strategy";
import { FakeProvider } from "./fake-provider";

const base = () => openai({ model: "gpt-4o-mini", apiKey: "k", baseUrl: "https://fake.test/v1" });
const MEXICO = "The capital of Mexico is Mexico City.";
const UK = "The capital of the UK is London.";
type Json = Record<string, unknown>;
const messagesOf = (body: Json) => body.messages as { role: string; content: unknown }[];
const system = (body: Json) => String(messagesOf(body).find((m) => m.role === "system")?.content);

const TOOLS = [
  {
    name: "get_capital",
    description: "Capital of a country",
    parameters: { type: "object", properties: { country: { type: "string" } } },
  },
];

async function ask(model: Model, fake: FakeProvider, request: unknown = {}) {
  return generate(
    model,
    ModelRequest.parse({
      system: "Be brief.",
      messages: [{ role: "user", content: "Capital of Mexico?" }],
      ...(request as Json),
    }),
    { fetch: fake.fetch },
  );
}

describe("reasoning strategy (J5)", () => {
  it("J5 cot and react: the model is told to reason in a think block first, after the agent's own instructions", async () => {
    for (const mode of ["cot", "react"] as const) {
      const fake = new FakeProvider().reply({ fixture: "openai-chat/text-with-usage.sse" });
      const answer = await ask(withStrategy(base(), { mode }), fake);
      expect(answer.text).toBe(MEXICO);
      const prompt = system(fake.requests[0]?.body ?? {});
      expect(prompt.startsWith("Be brief.\n\n")).toBe(true);
      expect(prompt).toContain("<think></think>");
      expect(prompt).toContain(mode === "react" ? "call a tool" : "step by step");
    }
  });

  it("J5 reflection: the first answer is a draft, sent as reasoning; a second call reviews it and its answer is the answer; usage and cost add up", async () => {
    const fake = new FakeProvider().reply(
      { fixture: "openai-chat/text-with-usage.sse" },
      { fixture: "openai-chat/after-tool-result-text.sse" },
    );
    const plain = await ask(
      base(),
      new FakeProvider().reply({ fixture: "openai-chat/text-with-usage.sse" }),
    );
    const answer = await ask(withStrategy(base(), { mode: "reflection" }), fake);
    expect(answer.text).toBe(UK);
    expect(answer.reasoning).toBe(`Draft:\n${MEXICO}\n`);
    const review = messagesOf(fake.requests[1]?.body ?? {});
    expect(review.at(-2)).toEqual({ role: "assistant", content: MEXICO });
    expect(review.at(-1)?.role).toBe("user");
    expect(String(review.at(-1)?.content)).toMatch(/^Review your answer above/);
    expect(answer.usage?.promptTokens).toBeGreaterThan(plain.usage?.promptTokens ?? 0);
    const second = await ask(
      base(),
      new FakeProvider().reply({ fixture: "openai-chat/after-tool-result-text.sse" }),
    );
    expect(answer.usage?.totalTokens).toBe(
      (plain.usage?.totalTokens ?? 0) + (second.usage?.totalTokens ?? 0),
    );
    expect(answer.costEstimate).toBeCloseTo(
      (plain.costEstimate ?? 0) + (second.costEstimate ?? 0),
      12,
    );
  });

  it("J5 reflection: a round that calls tools is not reviewed (one call, its tool calls as they came)", async () => {
    const fake = new FakeProvider().reply({ fixture: "openai-chat/tool-call-split-args.sse" });
    const answer = await ask(withStrategy(base(), { mode: "reflection" }), fake, { tools: TOOLS });
    expect(fake.requests).toHaveLength(1);
    expect(answer.toolCalls.map((c) => c.name)).toEqual(["get_capital"]);
    expect(answer.reasoning).toBe("");
  });

  it("J5 planning: the turn's first round writes a plan (no tools offered), sent as reasoning and leading the round's system prompt; later rounds plan nothing", async () => {
    const fake = new FakeProvider().reply(
      { fixture: "openai-chat/text-with-usage.sse" },
      { fixture: "openai-chat/after-tool-result-text.sse" },
    );
    const model = withStrategy(base(), { planning: true });
    const answer = await ask(model, fake, { tools: TOOLS });
    const [plan, round] = fake.requests.map((r) => r.body);
    expect(plan?.tools).toBeUndefined();
    expect(String(messagesOf(plan ?? {}).at(-1)?.content)).toMatch(
      /^Before answering, write a short numbered plan/,
    );
    expect(round?.tools).toHaveLength(1);
    expect(system(round ?? {})).toBe(`Be brief.\n\nYour plan for this turn:\n${MEXICO}`);
    expect(answer.reasoning).toBe(`Plan:\n${MEXICO}\n`);
    expect(answer.text).toBe(UK);

    // A round that continues after a tool result is not the turn's first.
    const later = new FakeProvider().reply({ fixture: "openai-chat/after-tool-result-text.sse" });
    await ask(model, later, {
      tools: TOOLS,
      messages: [
        { type: "message", role: "user", content: "Capital of the UK?" },
        { type: "function_call", callId: "c1", name: "get_capital", arguments: "{}" },
        { type: "function_call_output", callId: "c1", name: "get_capital", output: "London" },
      ],
    });
    expect(later.requests).toHaveLength(1);
  });

  it("J5 tools and memory off: no tools offered; only the turn's question and the instructions are sent", async () => {
    const fake = new FakeProvider().reply({ fixture: "openai-chat/text-with-usage.sse" });
    await ask(withStrategy(base(), { tools: false, memory: false }), fake, {
      tools: TOOLS,
      messages: [
        { role: "system", content: "Pinned instruction." },
        { role: "user", content: "Earlier question" },
        { role: "assistant", content: "Earlier answer" },
        { role: "user", content: "Capital of Mexico?" },
      ],
    });
    const body = fake.requests[0]?.body ?? {};
    expect(body.tools).toBeUndefined();
    // The adapter sends the system prompt and the pinned instruction as one system message.
    expect(messagesOf(body).map((m) => [m.role, m.content])).toEqual([
      ["system", "Be brief.\n\nPinned instruction."],
      ["user", "Capital of Mexico?"],
    ]);
  });

  it("J5: an agent's model given withStrategy reasons in a think block the agent takes out of its text; an unknown mode is refused", async () => {
    const fake = new FakeProvider().reply({ fixture: "openai-chat/text-with-usage.sse" });
    const agent = resolveAgent({
      card: { name: "x", description: "x" },
      model: withStrategy(base(), { mode: "cot" }),
    });
    await ask(agent.model as Model, fake);
    expect(system(fake.requests[0]?.body ?? {})).toContain("<think></think>");
    expect(() => withStrategy(base(), { mode: "nope" as never })).toThrow(
      /strategy.mode must be auto, cot, react, reflection or tot, got nope/,
    );
  });

  it("J5 tot: candidates written apart (by the drafting model), one call picks; the pick is the answer, the candidates reasoning", async () => {
    // One fake provider answers both hosts in order: three candidates, then the pick.
    const fake = new FakeProvider().reply(
      { fixture: "openai-chat/text-with-usage.sse" },
      { fixture: "openai-chat/after-tool-result-text.sse" },
      { fixture: "openai-chat/azure-empty-choices-first-chunk.sse" },
      { fixture: "openai-compatible/vllm-text-usage.sse" },
    );
    const judge = openaiCompatible({
      name: "vllm",
      baseUrl: "https://vllm.test/v1",
      model: "meta-llama/Llama-3.3-70B-Instruct",
      apiKey: "key",
    });
    const answer = await ask(withStrategy(judge, { mode: "tot", drafting: base() }), fake);
    expect(fake.requests.map((r) => new URL(r.url).host)).toEqual([
      "fake.test",
      "fake.test",
      "fake.test",
      "vllm.test",
    ]);
    expect(fake.requests.slice(0, 3).map((r) => system(r.body))).toEqual(
      [1, 2, 3].map(
        (i) =>
          `Be brief.\n\nThis is attempt ${i} of 3 at this answer: reason it out on your own, in your own way.`,
      ),
    );
    const pick = String(messagesOf(fake.requests[3]?.body ?? {}).at(-1)?.content);
    expect(pick).toContain(`[1] ${MEXICO}\n\n[2] ${UK}\n\n[3] Capital of Denmark.`);
    // The judge answered "1, 2, 3, 4, 5": the first number, candidate 1.
    expect(answer.text).toBe(MEXICO);
    expect(answer.reasoning).toBe(
      `Candidate 1:\n${MEXICO}\nCandidate 2:\n${UK}\nCandidate 3:\nCapital of Denmark.\nChosen: 1\n`,
    );
    expect(answer.usage?.promptTokens).toBeGreaterThan(46);
  });

  it("J5 tot: which candidate a pick names", () => {
    expect(pickedIndex("[2]", 3)).toBe(1);
    expect(pickedIndex("The best is 3.", 3)).toBe(2);
    expect(pickedIndex("Not 7 or 12, but [3] is best", 3)).toBe(2);
    expect(pickedIndex("Candidate 5", 3)).toBe(0);
    expect(pickedIndex("none of them", 3)).toBe(0);
    expect(() => withStrategy(base(), { mode: "tot", branches: 6 })).toThrow(
      /branches must be an integer from 2 to 5/,
    );
  });

  it("J5 drafting: the drafting model writes the draft, this model reviews it", async () => {
    const fake = new FakeProvider().reply(
      { fixture: "openai-chat/text-with-usage.sse" },
      { fixture: "openai-compatible/vllm-text-usage.sse" },
    );
    const reviewer = openaiCompatible({
      name: "vllm",
      baseUrl: "https://vllm.test/v1",
      model: "meta-llama/Llama-3.3-70B-Instruct",
      apiKey: "key",
    });
    const answer = await ask(withStrategy(reviewer, { drafting: base() }), fake);
    expect(fake.requests.map((r) => new URL(r.url).host)).toEqual(["fake.test", "vllm.test"]);
    expect(messagesOf(fake.requests[1]?.body ?? {}).at(-2)).toEqual({
      role: "assistant",
      content: MEXICO,
    });
    expect(answer.reasoning).toBe(`Draft:\n${MEXICO}\n`);
    expect(answer.text).toBe("1, 2, 3, 4, 5");
  });
});
