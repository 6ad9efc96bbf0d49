import { beforeEach, describe, expect, it } from "vitest";
import { anthropic } from "../../../src/providers/anthropic/anthropic";
import { fallback } from "../../../src/providers/fallback";
import { gemini } from "../../../src/providers/gemini/gemini";
import { openai } from "../../../src/providers/openai/openai-chat";
import { streamMessage } from "../../harness/llm/stream";
import { harness } from "../../harness/llm/worker";
import { FakeProvider, fixtureJson, fixtureText } from "../../providers/fake-provider";
import { rest } from "../../support/helpers";

type Json = Record<string, unknown>;

let fake: FakeProvider;

beforeEach(() => {
  fake = new FakeProvider({ seed: 5, maxChunk: 13 });
  harness.fetch = fake.fetch;
  harness.requests = [];
  harness.toolRuns = [];
});

const answer = (events: Json[]) =>
  events
    .flatMap((e) => (e.artifactUpdate ? [e.artifactUpdate as Json] : []))
    .flatMap((u) => ((u.artifact as Json).parts as { text?: string }[]).map((p) => p.text ?? ""))
    .join("");
const last = (events: Json[]) =>
  events.flatMap((e) => (e.statusUpdate ? [e.statusUpdate as Json] : [])).at(-1) as Json;
const state = (events: Json[]) => (last(events).status as Json).state;

describe("model-backed agent on each provider's recorded tool chains", () => {
  it("G5: Anthropic thinking and its signature are replayed exactly with the tool result", async () => {
    harness.model = anthropic({
      model: "claude-haiku-4-5-20251001",
      apiKey: "k",
      baseUrl: "https://fake.test",
    });
    fake.reply(
      { fixture: "anthropic/thinking-then-tool-use.sse" },
      { fixture: "anthropic/after-thinking-tool-result-text.sse" },
    );
    const prompt =
      "Use the fixed_version tool. Then tell me the version and make one short joke about it. Think about it first.";
    const events = await streamMessage(prompt);
    expect(state(events)).toBe("TASK_STATE_COMPLETED");
    expect(harness.toolRuns).toEqual(["fixed_version"]);
    expect(answer(events).length).toBeGreaterThan(10);

    const recorded = fixtureJson<{ body: { messages: Json[] } }>(
      "anthropic/after-thinking-tool-result-text.request.json",
    ).body.messages;
    const sent = fake.requests[1]?.body.messages as Json[];
    // The recorded follow-up: the user's text, the thinking (signature intact) + tool_use,
    // then the tool_result, each exactly as the provider needs them.
    expect(sent.slice(1)).toEqual(recorded.slice(1));
    expect((sent[0]?.content as Json[] | undefined)?.at(-1)).toEqual(
      (recorded[0]?.content as Json[] | undefined)?.[0],
    );
  });

  it("G6: Gemini's thought signature on the function call is replayed with the function response", async () => {
    harness.model = gemini({
      model: "gemini-3-pro-preview",
      apiKey: "k",
      baseUrl: "https://fake.test",
    });
    fake.reply(
      { fixture: "gemini/function-call-thought-signature.sse" },
      { fixture: "gemini/after-function-response-text.sse" },
    );
    const events = await streamMessage("What is the capital of the user country? Call the tool");
    expect(state(events)).toBe("TASK_STATE_COMPLETED");
    expect(harness.toolRuns).toEqual(["get_country"]);
    expect(answer(events)).toMatch(/Mexico City/);

    const recorded = fixtureJson<{ body: { contents: Json[] } }>(
      "gemini/after-function-response-text.request.json",
    ).body.contents;
    const sent = fake.requests[1]?.body.contents as Json[];
    const call = (sent[1]?.parts as Json[] | undefined)?.[0] as Json;
    const recordedCall = (recorded[1]?.parts as Json[] | undefined)?.[0] as Json;
    // Replayed exactly as Gemini sent it (standard base64). The recording's client re-encoded
    // the same bytes as base64url, so compare the bytes.
    const bytes = (b64: unknown) => String(b64).replaceAll("-", "+").replaceAll("_", "/");
    expect(bytes(call.thoughtSignature)).toBe(bytes(recordedCall.thoughtSignature));
    const received = /"thoughtSignature": *"([^"]+)"/.exec(
      fixtureText("gemini/function-call-thought-signature.sse"),
    )?.[1];
    expect(call.thoughtSignature).toBe(received);
    expect((call.functionCall as Json).name).toBe("get_country");
    expect(sent[2]?.role).toBe("user");
    expect(JSON.stringify(sent[2])).toContain("Mexico");
  });

  it("H1 H2: a fallback's health is shared by every conversation of the agent in the isolate", async () => {
    // One model, as an agent defined at module scope holds it.
    harness.model = fallback([
      openai({ model: "gpt-4o-mini", apiKey: "k", baseUrl: "https://primary.test/v1" }),
      openai({ model: "gpt-4o-mini", apiKey: "k", baseUrl: "https://secondary.test/v1" }),
    ]);
    fake.reply(
      { status: 500, body: '{"error":{"message":"boom","type":"server_error"}}' },
      { fixture: "openai-chat/text-with-usage.sse" },
    );
    const first = await streamMessage("What is the capital of Mexico?");
    expect(state(first)).toBe("TASK_STATE_COMPLETED");
    expect(answer(first)).toBe("The capital of Mexico is Mexico City.");
    expect(fake.requests.map((r) => new URL(r.url).host)).toEqual([
      "primary.test",
      "secondary.test",
    ]);

    // Within the cool-down a new conversation (another Durable Object) skips the failed
    // primary too: what one conversation learned about a provider holds for all of them.
    fake.reply({ fixture: "openai-chat/text-with-usage.sse" });
    const second = await streamMessage("Again?");
    expect(last(second).contextId).not.toBe(last(first).contextId);
    expect(state(second)).toBe("TASK_STATE_COMPLETED");
    expect(fake.requests.map((r) => new URL(r.url).host)).toEqual([
      "primary.test",
      "secondary.test",
      "secondary.test",
    ]);
  });

  it("J3 J4: <think> blocks split across chunks never reach the answer; the thinking is kept in history", async () => {
    harness.model = openai({ model: "deepseek-r1", apiKey: "k", baseUrl: "https://fake.test/v1" });
    const deltas = ["<thi", "nk>The user", " asks 2+2.</th", "ink>", "\n\n2 + 2", " = 4."];
    const body = [
      ...deltas.map(
        (content) =>
          `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", model: "deepseek-r1", choices: [{ index: 0, delta: { content }, finish_reason: null }] })}\n\n`,
      ),
      `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", model: "deepseek-r1", choices: [{ index: 0, delta: {}, finish_reason: "stop" }] })}\n\n`,
      "data: [DONE]\n\n",
    ].join("");
    fake.reply({ status: 200, body, headers: { "content-type": "text/event-stream" } });
    const events = await streamMessage("What is 2+2?");
    expect(state(events)).toBe("TASK_STATE_COMPLETED");
    expect(answer(events)).toBe("2 + 2 = 4.");
    const history = await rest("GET", `/contexts/${last(events).contextId}/history`);
    const reply = (history.body.items as Json[])[1] as Json;
    expect(reply.content).toEqual(["2 + 2 = 4."]);
    expect((reply.extra as Json).thinking).toBe("The user asks 2+2.");
  });
});
