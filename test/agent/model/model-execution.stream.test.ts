import { SELF } from "cloudflare:test";
import { beforeEach, describe, expect, it } from "vitest";
import { openai } from "../../../src/providers/openai/openai-chat";
import { streamMessage } from "../../harness/llm/stream";
import { harness } from "../../harness/llm/worker";
import { FakeProvider } from "../../providers/fake-provider";
import {
  BASE,
  readEvents,
  rest,
  rpc,
  send,
  sleep,
  userMessage,
  waitForState,
} from "../../support/helpers";

type Json = Record<string, unknown>;

let fake: FakeProvider;

beforeEach(() => {
  fake = new FakeProvider({ seed: 11, maxChunk: 9 });
  harness.fetch = fake.fetch;
  harness.requests = [];
  harness.toolRuns = [];
  harness.holdTools = false;
  harness.toolAborts = [];
  harness.model = openai({
    model: "gpt-4o-mini",
    apiKey: "sk-test",
    baseUrl: "https://fake.test/v1",
  });
});

const artifactUpdates = (events: Json[]) =>
  events.flatMap((e) => (e.artifactUpdate ? [e.artifactUpdate as Json] : []));
const textOfUpdates = (updates: Json[]) =>
  updates
    .flatMap((u) => ((u.artifact as Json).parts as { text?: string }[]).map((p) => p.text ?? ""))
    .join("");
const finalStatus = (events: Json[]) => {
  const statuses = events.flatMap((e) => (e.statusUpdate ? [e.statusUpdate as Json] : []));
  return statuses.at(-1) as Json;
};

describe("an agent with a model, over A2A streaming (issue 4 end to end)", () => {
  it("G13: streams the provider's deltas as artifact append chunks and completes with usage and cost", async () => {
    fake.reply({ fixture: "openai-chat/text-with-usage.sse" });
    const events = await streamMessage("What is the capital of Mexico?");

    const updates = artifactUpdates(events);
    expect(updates.length).toBeGreaterThan(2);
    expect(updates[0]?.append ?? false).toBe(false);
    for (const later of updates.slice(1)) expect(later.append).toBe(true);
    expect(updates.at(-1)?.lastChunk).toBe(true);
    expect(textOfUpdates(updates)).toBe("The capital of Mexico is Mexico City.");

    const end = finalStatus(events);
    expect((end.status as Json).state).toBe("TASK_STATE_COMPLETED");
    const taskId = end.taskId as string;
    const { body } = await rpc("GetTask", { id: taskId });
    const task = body.result as Json;
    const metadata = task.metadata as Json;
    expect(metadata.usage).toEqual({
      promptTokens: 14,
      completionTokens: 8,
      totalTokens: 22,
      reasoningTokens: 0,
      cachedPromptTokens: 0,
    });
    // gpt-4o-mini: 14 × $0.15 + 8 × $0.60 per million tokens.
    expect(metadata.cost).toBeCloseTo((14 * 0.15 + 8 * 0.6) / 1e6, 12);
    // The model the provider says answered (this recording was made with gpt-4o).
    expect(metadata.model).toEqual({ provider: "openai", model: "gpt-4o-2024-08-06" });
    expect(metadata.modelCalls).toBe(1);
    expect(typeof metadata.timeToFirstTokenMs).toBe("number");

    // G3: the instructions first, the user's message last, temperature 0 sent.
    const sent = fake.requests[0]?.body as Json;
    expect(sent.temperature).toBe(0);
    expect(sent.messages).toEqual([
      { role: "system", content: "You are a helpful assistant." },
      { role: "user", content: "What is the capital of Mexico?" },
    ]);
  });

  it("D4: the answer's last chunk carries its last text and lastChunk: no update and no stored part is an empty text (one round, and after a tool round)", async () => {
    const recordings = [
      ["openai-chat/text-with-usage.sse"],
      ["openai-chat/tool-call-split-args.sse", "openai-chat/after-tool-result-text.sse"],
    ];
    for (const fixtures of recordings) {
      // Whole recordings in one network read, and split at random byte boundaries.
      for (const maxChunk of [1 << 20, 9]) {
        fake = new FakeProvider({ seed: 5, maxChunk });
        harness.fetch = fake.fetch;
        fake.reply(...fixtures.map((fixture) => ({ fixture })));
        const events = await streamMessage("What is the capital?");
        const updates = artifactUpdates(events);
        const parts = updates.flatMap((u) => (u.artifact as Json).parts as Json[]);
        const where = `${fixtures.join(" + ")}, chunks of ${maxChunk}`;
        expect(parts.length, where).toBeGreaterThan(0);
        expect(
          parts.filter((p) => p.text === ""),
          where,
        ).toEqual([]);
        expect(updates.at(-1)?.lastChunk, where).toBe(true);
        expect(
          updates.slice(0, -1).filter((u) => u.lastChunk),
          where,
        ).toEqual([]);
        const end = finalStatus(events);
        expect((end.status as Json).state).toBe("TASK_STATE_COMPLETED");
        const { body } = await rpc("GetTask", { id: end.taskId });
        const stored = ((body.result as Json).artifacts as Json[]).flatMap(
          (a) => a.parts as Json[],
        );
        expect(stored.map((p) => p.text).join("")).toBe(textOfUpdates(updates));
        expect(
          stored.filter((p) => p.text === ""),
          where,
        ).toEqual([]);
      }
    }
  });

  it("records both turns in the context history; the next task sends them to the model", async () => {
    fake.reply({ fixture: "openai-chat/text-with-usage.sse" });
    const first = await streamMessage("What is the capital of Mexico?");
    const contextId = finalStatus(first).contextId as string;

    const history = await rest("GET", `/contexts/${contextId}/history`);
    expect(history.status).toBe(200);
    const items = (history.body.items as Json[]).map((i) => [i.type, i.role, i.content]);
    expect(items).toEqual([
      ["message", "user", ["What is the capital of Mexico?"]],
      ["message", "assistant", ["The capital of Mexico is Mexico City."]],
    ]);

    fake.reply({ fixture: "openai-chat/text-with-usage.sse" });
    await streamMessage("And of Peru?", contextId);
    const again = fake.requests[1]?.body as Json;
    expect((again.messages as Json[]).map((m) => [m.role, m.content])).toEqual([
      ["system", "You are a helpful assistant."],
      ["user", "What is the capital of Mexico?"],
      ["assistant", "The capital of Mexico is Mexico City."],
      ["user", "And of Peru?"],
    ]);
  });

  it("H15: runs the tool the model calls with its assembled arguments, sends the result back, then answers", async () => {
    fake.reply(
      { fixture: "openai-chat/tool-call-split-args.sse" },
      { fixture: "openai-chat/after-tool-result-text.sse" },
    );
    const events = await streamMessage("What is the capital of the UK? Use the tool, then answer.");
    expect(harness.toolRuns).toEqual(["UK"]);
    expect(textOfUpdates(artifactUpdates(events))).toBe("The capital of the UK is London.");
    const end = finalStatus(events);
    expect((end.status as Json).state).toBe("TASK_STATE_COMPLETED");

    // The second request threads the call and its result (H15), the user's input still first.
    const second = fake.requests[1]?.body as { messages: Json[] };
    expect(second.messages.slice(1)).toEqual([
      { role: "user", content: "What is the capital of the UK? Use the tool, then answer." },
      {
        role: "assistant",
        content: null,
        tool_calls: [
          {
            id: "call_ZR5UUuTt3pf61kjwAJIYdVMj",
            type: "function",
            function: { name: "get_capital", arguments: '{"country":"UK"}' },
          },
        ],
      },
      { role: "tool", tool_call_id: "call_ZR5UUuTt3pf61kjwAJIYdVMj", content: "London" },
    ]);

    const contextId = end.contextId as string;
    const history = await rest("GET", `/contexts/${contextId}/history`);
    expect((history.body.items as Json[]).map((i) => i.type)).toEqual([
      "message",
      "function_call",
      "function_call_output",
      "message",
    ]);
    const { body } = await rpc("GetTask", { id: end.taskId });
    const metadata = (body.result as Json).metadata as Json;
    // G14 (better): usage and cost summed over both model calls: 53+15 tokens in the tool
    // round, 78+9 in the answer (the recordings' usage), at gpt-4o-mini prices.
    expect(metadata.modelCalls).toBe(2);
    expect(metadata.usage).toMatchObject({
      promptTokens: 53 + 78,
      completionTokens: 15 + 9,
      totalTokens: 68 + 87,
    });
    expect(metadata.cost).toBeCloseTo(((53 + 78) * 0.15 + (15 + 9) * 0.6) / 1e6, 12);
  });

  it("H10 H16: a model that keeps calling tools is stopped after maxToolRounds (10); the task says it was cut short", async () => {
    for (let i = 0; i < 10; i++) fake.reply({ fixture: "openai-chat/tool-call-split-args.sse" });
    const events = await streamMessage("Loop forever");
    expect(fake.requests).toHaveLength(10);
    expect(harness.toolRuns).toHaveLength(10);
    const end = finalStatus(events);
    expect((end.status as Json).state).toBe("TASK_STATE_FAILED");
    const { body } = await rpc("GetTask", { id: end.taskId });
    const metadata = (body.result as Json).metadata as Json;
    expect(metadata.cutShort).toBe(true);
    expect(metadata.modelCalls).toBe(10);
    expect(metadata.error).toBe("Stopped after 10 tool rounds without a final answer");
  });

  it("H6: a stream cut after text was sent fails the task cleanly: one request, no duplicated text", async () => {
    fake.reply({ fixture: "openai-chat/text-with-usage.sse", cutAfterBytes: 1400 });
    const events = await streamMessage("What is the capital of Mexico?");
    expect(fake.requests).toHaveLength(1);
    const text = textOfUpdates(artifactUpdates(events));
    expect(text.length).toBeGreaterThan(0);
    expect("The capital of Mexico is Mexico City.".startsWith(text)).toBe(true);
    const end = finalStatus(events);
    expect((end.status as Json).state).toBe("TASK_STATE_FAILED");
    const { body } = await rpc("GetTask", { id: end.taskId });
    const metadata = (body.result as Json).metadata as Json;
    expect(metadata.providerError).toMatchObject({ provider: "openai", kind: "network" });
    expect(String(metadata.error)).toMatch(/connection|lost|network/i);
  });

  it("an HTTP error before any text fails the task with the provider's status and code, never its error body", async () => {
    fake.reply({ fixture: "openai-chat/error-404-model-not-found.json" });
    const events = await streamMessage("Hi");
    expect(artifactUpdates(events)).toHaveLength(0);
    const end = finalStatus(events);
    expect((end.status as Json).state).toBe("TASK_STATE_FAILED");
    const { body } = await rpc("GetTask", { id: end.taskId });
    const metadata = (body.result as Json).metadata as Json;
    expect(metadata.providerError).toMatchObject({
      provider: "openai",
      kind: "http",
      status: 404,
      retryable: false,
    });
    // The provider's error text may echo the request or the account: logged, not published.
    expect(String(metadata.error)).toMatch(/openai.*HTTP 404.*model_not_found.*reference ref_/);
    expect(JSON.stringify(body)).not.toMatch(/does not exist/);
  });

  it("A3: the card of a model-backed agent with tools says hasLlm and toolCalling, no delegation", async () => {
    const card = (await (await SELF.fetch(`${BASE}/.well-known/agent-card.json`)).json()) as Json;
    const extensions = (card.capabilities as Json).extensions as Json[];
    const profile = extensions.at(-1)?.params as Json;
    expect(profile.capabilities).toMatchObject({
      hasLlm: true,
      toolCalling: true,
      delegation: false,
    });
  });

  it("B9: CancelTask interrupts the running turn: a tool in progress sees its signal abort", async () => {
    harness.holdTools = true;
    fake.reply({ fixture: "openai-chat/tool-call-split-args.sse" });
    const task = await send("Capital of the UK?", {}, { returnImmediately: true });
    for (let i = 0; i < 100 && harness.toolRuns.length === 0; i++) await sleep(10);
    expect(harness.toolRuns).toEqual(["UK"]);
    const canceled = await rpc("CancelTask", { id: task.id, metadata: { reason: "user left" } });
    expect(((canceled.body.result as Json).status as Json).state).toBe("TASK_STATE_CANCELED");
    // Only the object's abort reaches the tool: its writes being refused would not.
    for (let i = 0; i < 100 && harness.toolAborts.length === 0; i++) await sleep(10);
    expect(harness.toolAborts).toEqual(["user left"]);
    expect(fake.requests).toHaveLength(1);
  });

  it("B9: canceling the task aborts the upstream stream at once", async () => {
    fake.reply({ fixture: "openai-chat/text-with-usage.sse", delayMs: 5 });
    const response = await SELF.fetch(`${BASE}/`, {
      method: "POST",
      headers: { "Content-Type": "application/json", "A2A-Version": "1.0" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "SendStreamingMessage",
        params: { message: userMessage("What is the capital of Mexico?") },
      }),
    });
    const { events, reader } = await readEvents(response, 2);
    const first = (events[0]?.data ?? {}) as { result?: { task?: { id?: string } } };
    const taskId = first.result?.task?.id;
    expect(taskId).toBeTypeOf("string");
    const canceled = await rpc("CancelTask", { id: taskId });
    expect(((canceled.body.result as Json).status as Json).state).toBe("TASK_STATE_CANCELED");
    await reader.cancel();
    await waitForState(taskId as string, "TASK_STATE_CANCELED");
    for (let i = 0; i < 50 && fake.canceledStreams === 0; i++)
      await new Promise((r) => setTimeout(r, 20));
    expect(fake.canceledStreams).toBe(1);
  });
});
