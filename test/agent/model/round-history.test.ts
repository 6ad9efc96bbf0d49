import { env, runInDurableObject } from "cloudflare:test";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { resolveContextWindow } from "../../../src/agent/context-window-option";
import type { Agent } from "../../../src/agent/definition";
import { historyBudget } from "../../../src/agent/model/turn-history";
import type { HistoryStore } from "../../../src/conversation/history/history-store";
import type { Item } from "../../../src/history/items";
import { SUMMARY_LABEL } from "../../../src/history/summarize";
import { estimateTokens } from "../../../src/history/tokens";
import { anthropic } from "../../../src/providers/anthropic/anthropic";
import type { ModelRequest } from "../../../src/providers/base/types";
import { openai } from "../../../src/providers/openai/openai-chat";
import { contextObjectName } from "../../../src/storage/ids";
import { streamMessage } from "../../harness/llm/stream";
import worker, { harness } from "../../harness/llm/worker";
import { FakeProvider, fixtureText } from "../../providers/fake-provider";

type Json = Record<string, unknown>;

let fake: FakeProvider;
const agent = worker.agent as Agent<unknown>;
const defaults = { ...agent };

/** A model whose whole context window is 2,400 tokens, 256 of them kept for the answer. */
function smallModel() {
  return openai({
    model: "gpt-4o-mini",
    apiKey: "sk-test",
    baseUrl: "https://fake.test/v1",
    capabilities: { contextWindow: 2400, maxOutputTokens: 256 },
  });
}

beforeEach(() => {
  fake = new FakeProvider({ seed: 11, maxChunk: 17 });
  harness.fetch = fake.fetch;
  harness.requests = [];
  harness.toolRuns = [];
  harness.toolOutput = null;
  harness.model = smallModel();
});
afterEach(() => {
  Object.assign(agent, defaults);
  harness.toolOutput = null;
});

const TOOL_CALL = "openai-chat/tool-call-split-args.sse";
const RECORDED_CALL_ID = "call_ZR5UUuTt3pf61kjwAJIYdVMj";

/**
 * The recorded tool-call stream with its call id renumbered: a live provider gives each
 * call of a turn its own id, and replaying one recording would repeat it every round.
 */
function toolRound(n: number) {
  const body = fixtureText(TOOL_CALL).replaceAll(RECORDED_CALL_ID, `call_round_${n}`);
  expect(body).toContain(`call_round_${n}`);
  return { status: 200, body, headers: { "content-type": "text/event-stream" } };
}

/** What `get_capital` answers in round `n`: about 400 estimated tokens. */
const roundOutput = (n: number) =>
  `Round ${n} result: ${"The capital of the United Kingdom is London. ".repeat(36)}`;

function contextOf(events: Json[]): string {
  const last = events.at(-1)?.statusUpdate as Json | undefined;
  if (!last) throw new Error("the stream ended without a status update");
  return last.contextId as string;
}
const finalState = (events: Json[]) =>
  ((events.at(-1)?.statusUpdate as Json | undefined)?.status as Json | undefined)?.state;

function stubOf(contextId: string) {
  const ns = env.EDGELINK_CONTEXT;
  return ns.get(ns.idFromName(contextObjectName("", contextId)));
}

/** Counts the SELECTs on the conversation's `history_items` from here on. */
async function countHistorySelects(contextId: string) {
  let selects = 0;
  const restore = await runInDurableObject(stubOf(contextId), (_instance, state) => {
    const sql = state.storage.sql;
    const exec = sql.exec;
    sql.exec = ((query: string, ...args: SqlStorageValue[]) => {
      if (query.includes("history_items") && /^\s*SELECT/i.test(query)) selects++;
      return exec.call(sql, query, ...args);
    }) as typeof sql.exec;
    return () => {
      sql.exec = exec;
    };
  });
  return async () => {
    await runInDurableObject(stubOf(contextId), () => restore());
    return selects;
  };
}

async function storedHistory(contextId: string): Promise<Item[]> {
  return runInDurableObject(stubOf(contextId), (instance) => {
    const history = (instance as unknown as { store: { history: HistoryStore<Item> } }).store
      .history;
    return history.all().map((row) => row.item);
  });
}

/** The history budget of a request, as the agent derives it from the model's window. */
const budgetOf = (request: ModelRequest) =>
  historyBudget(harness.model as NonNullable<typeof harness.model>, request, agent.contextWindow);

/**
 * F10 on the wire: every assistant message with tool calls is followed at once by one
 * result per call, and every tool result belongs to such a block.
 */
function expectPairsIntact(messages: Json[]): void {
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i] as Json;
    if (m.role === "tool") throw new Error(`tool result at ${i} follows no call`);
    const calls = (m.tool_calls ?? []) as { id: string }[];
    if (calls.length === 0) continue;
    const answered: string[] = [];
    while ((messages[i + 1] as Json | undefined)?.role === "tool") {
      answered.push((messages[++i] as Json).tool_call_id as string);
    }
    expect(answered.sort()).toEqual(calls.map((c) => c.id).sort());
  }
}

function wireMessages(n: number): Json[] {
  const request = fake.requests[n];
  if (!request) throw new Error(`the provider got no request ${n}`);
  return (request.body as Json).messages as Json[];
}
const roundsIn = (messages: Json[]) =>
  messages.flatMap((m) => {
    const found = m.role === "tool" ? /^Round (\d+) result/.exec(String(m.content)) : null;
    return found ? [Number(found[1])] : [];
  });

describe("a turn's tool rounds are fitted to the context window before every model call (F25, issue 10)", () => {
  it("F25 F8 F10: eight tool rounds under a 2,400-token window: every request within budget, pairs intact, the question and the current round always sent, older items dropped oldest first; the history keeps everything", async () => {
    fake.reply({ fixture: "openai-chat/text-with-usage.sse" });
    const contextId = contextOf(await streamMessage("hello there, an earlier turn"));

    const rounds = 8;
    let round = 0;
    harness.toolOutput = () => roundOutput(++round);
    for (let n = 1; n <= rounds; n++) fake.reply(toolRound(n));
    fake.reply({ fixture: "openai-chat/after-tool-result-text.sse" });
    harness.requests = [];
    const first = fake.requests.length;
    const events = await streamMessage(
      "What is the capital of the UK? Check it 8 times.",
      contextId,
    );
    expect(finalState(events)).toBe("TASK_STATE_COMPLETED");
    expect(harness.requests).toHaveLength(rounds + 1);

    for (const [call, request] of harness.requests.entries()) {
      // Within the budget on every call (F7 estimate of the items sent).
      expect(estimateTokens(request.messages)).toBeLessThanOrEqual(budgetOf(request));
      const wire = wireMessages(first + call);
      expectPairsIntact(wire);
      // The question is always there, and so is the round that just ended, last.
      expect(wire).toContainEqual({
        role: "user",
        content: "What is the capital of the UK? Check it 8 times.",
      });
      const sent = roundsIn(wire);
      if (call > 0) {
        expect(sent.at(-1)).toBe(call);
        expect(wire.at(-1)).toMatchObject({ role: "tool", tool_call_id: `call_round_${call}` });
        expect(wire.at(-2)).toMatchObject({
          role: "assistant",
          tool_calls: [{ id: `call_round_${call}` }],
        });
        // Newest kept: the rounds sent are the newest ones, with no gap.
        expect(sent).toEqual(
          Array.from({ length: sent.length }, (_, i) => call - sent.length + 1 + i),
        );
      }
    }
    // The window was really too small for all of it: the earlier turn and the first rounds
    // went before the last call.
    const last = wireMessages(first + rounds);
    expect(roundsIn(last)[0]).toBeGreaterThan(1);
    expect(last.some((m) => m.content === "hello there, an earlier turn")).toBe(false);

    // Nothing is lost from storage: every call and every whole output is recorded.
    const history = await storedHistory(contextId);
    const outputs = history.flatMap((item) =>
      item.type === "function_call_output" ? [item.output] : [],
    );
    expect(outputs).toEqual(Array.from({ length: rounds }, (_, i) => roundOutput(i + 1)));
    expect(history.filter((item) => item.type === "function_call")).toHaveLength(rounds);
    expect(
      history.some((i) => i.type === "message" && i.content[0] === "hello there, an earlier turn"),
    ).toBe(true);
  }, 60_000);

  it("F25: a single tool output larger than the whole window is cut with a marker in the request, and stored whole", async () => {
    const huge = `BEGIN ${"0123456789".repeat(4000)} END`;
    harness.toolOutput = () => huge;
    fake.reply(toolRound(1), { fixture: "openai-chat/after-tool-result-text.sse" });
    const events = await streamMessage("What is the capital of the UK?");
    expect(finalState(events)).toBe("TASK_STATE_COMPLETED");

    const after = harness.requests[1] as ModelRequest;
    expect(estimateTokens(after.messages)).toBeLessThanOrEqual(budgetOf(after));
    const wire = wireMessages(1);
    expectPairsIntact(wire);
    expect(wire).toContainEqual({ role: "user", content: "What is the capital of the UK?" });
    const sent = wire.at(-1) as Json;
    expect(sent).toMatchObject({ role: "tool", tool_call_id: "call_round_1" });
    const content = String(sent.content);
    const marker =
      /\n\[Edgelink: tool output cut to its first (\d+) of (\d+) characters to fit the model's context window\]$/.exec(
        content,
      );
    expect(marker?.[2]).toBe(String(huge.length));
    const kept = Number(marker?.[1]);
    // What was sent is the output's beginning, as much of it as the window had room for.
    expect(kept).toBeGreaterThan(4000);
    expect(content.slice(0, kept)).toBe(huge.slice(0, kept));

    const history = await storedHistory(contextOf(events));
    const stored = history.find((item) => item.type === "function_call_output");
    expect(stored?.type === "function_call_output" && stored.output).toBe(huge);
  });

  it("F25 F8: when the rounds outgrow the window, the older turns are summarized by the agent's summarizer (once), the summary sent with the current turn", async () => {
    const transcripts: string[] = [];
    agent.summarizer = async (transcript) => {
      transcripts.push(transcript);
      return "Earlier the user greeted the assistant three times.";
    };
    agent.contextWindow = resolveContextWindow({ keepRecentTurns: 1 });
    fake.reply({ fixture: "openai-chat/text-with-usage.sse" });
    const contextId = contextOf(await streamMessage("greeting number one"));
    for (const text of ["greeting number two", "greeting number three"]) {
      fake.reply({ fixture: "openai-chat/text-with-usage.sse" });
      await streamMessage(text, contextId);
    }

    let round = 0;
    harness.toolOutput = () => roundOutput(++round);
    for (let n = 1; n <= 5; n++) fake.reply(toolRound(n));
    fake.reply({ fixture: "openai-chat/after-tool-result-text.sse" });
    harness.requests = [];
    const first = fake.requests.length;
    const events = await streamMessage("What is the capital of the UK?", contextId);
    expect(finalState(events)).toBe("TASK_STATE_COMPLETED");

    // The turn's first call had room for the greetings: nothing summarized then.
    expect(wireMessages(first).some((m) => m.content === "greeting number one")).toBe(true);
    expect(transcripts).toHaveLength(1);
    expect(transcripts[0]).toContain("greeting number one");
    expect(transcripts[0]).not.toContain("What is the capital of the UK?");
    const summary = {
      role: "assistant",
      content: `${SUMMARY_LABEL}\nEarlier the user greeted the assistant three times.`,
    };
    const last = wireMessages(first + 5);
    expect(last).toContainEqual(summary);
    expect(last.some((m) => m.content === "greeting number one")).toBe(false);
    expect(last.at(-1)).toMatchObject({ role: "tool", tool_call_id: "call_round_5" });
    for (const [call, request] of harness.requests.entries()) {
      expect(estimateTokens(request.messages)).toBeLessThanOrEqual(budgetOf(request));
      expectPairsIntact(wireMessages(first + call));
    }
  }, 60_000);

  it("F25 F8 F10: on Anthropic's wire too, each fitted request starts with the question (many pages back) and answers every tool_use in the very next message", async () => {
    harness.model = anthropic({
      model: "claude-haiku-4-5-20251001",
      apiKey: "k",
      baseUrl: "https://fake.test",
      capabilities: { contextWindow: 700, maxOutputTokens: 100 },
    });
    agent.maxToolRounds = 16;
    // Pages of two rows: the question is many pages back by the last rounds.
    agent.contextWindow = resolveContextWindow({ pageSize: 2 });
    const rounds = 14;
    const recorded = "toolu_01NRLabsLyVHZPKxbKvkfSMn";
    for (let n = 1; n <= rounds; n++) {
      // The recorded stream with its tool_use id renumbered, as a live provider gives each its own.
      const body = fixtureText("anthropic/tool-use-split-args.sse").replaceAll(
        recorded,
        `toolu_round_${n}`,
      );
      fake.reply({ status: 200, body, headers: { "content-type": "text/event-stream" } });
    }
    fake.reply({ fixture: "anthropic/text-after-tool-results.sse" });
    const events = await streamMessage("What is the weather in Ontario? Ask many times.");
    expect(finalState(events)).toBe("TASK_STATE_COMPLETED");
    expect(harness.requests).toHaveLength(rounds + 1);

    let dropped = false;
    for (const [call, request] of harness.requests.entries()) {
      expect(estimateTokens(request.messages)).toBeLessThanOrEqual(budgetOf(request));
      const messages = wireMessages(call);
      expect(messages[0]).toMatchObject({ role: "user" });
      expect(JSON.stringify(messages[0])).toContain("What is the weather in Ontario?");
      const uses = messages.map((m) =>
        (Array.isArray(m.content) ? (m.content as Json[]) : []).flatMap((b) =>
          b.type === "tool_use" ? [b.id] : [],
        ),
      );
      const results = messages.map((m) =>
        (Array.isArray(m.content) ? (m.content as Json[]) : []).flatMap((b) =>
          b.type === "tool_result" ? [b.tool_use_id] : [],
        ),
      );
      messages.forEach((_, i) => {
        expect(results[i]).toEqual(uses[i - 1] ?? []);
      });
      if (call > 0) {
        expect(uses.at(-2)).toEqual([`toolu_round_${call}`]);
        expect(results.at(-1)).toEqual([`toolu_round_${call}`]);
        if (!uses.flat().includes("toolu_round_1")) dropped = true;
      }
    }
    // The window was too small for every round: the first ones were left out.
    expect(dropped).toBe(true);
  });

  it("F25: while the request fits, a tool round reads no history: the turn reads what a turn without tools does", async () => {
    harness.model = openai({
      model: "gpt-4o-mini",
      apiKey: "sk-test",
      baseUrl: "https://fake.test/v1",
    });
    fake.reply({ fixture: "openai-chat/text-with-usage.sse" });
    const contextId = contextOf(await streamMessage("hello"));

    fake.reply({ fixture: "openai-chat/text-with-usage.sse" });
    let stop = await countHistorySelects(contextId);
    await streamMessage("no tools this time", contextId);
    const plain = await stop();

    for (let n = 1; n <= 3; n++) fake.reply(toolRound(n));
    fake.reply({ fixture: "openai-chat/after-tool-result-text.sse" });
    stop = await countHistorySelects(contextId);
    const events = await streamMessage(
      "What is the capital of the UK? Check it 3 times.",
      contextId,
    );
    const withTools = await stop();
    expect(finalState(events)).toBe("TASK_STATE_COMPLETED");
    expect(fake.requests).toHaveLength(6);
    expect(plain).toBeGreaterThan(0);
    expect(withTools).toBe(plain);
  });

  it("F25 F9: contextWindow.maxItems holds on every call of a turn: older rounds leave, the question and the current round stay", async () => {
    harness.model = openai({
      model: "gpt-4o-mini",
      apiKey: "sk-test",
      baseUrl: "https://fake.test/v1",
    });
    agent.contextWindow = resolveContextWindow({ maxItems: 6 });
    let round = 0;
    harness.toolOutput = () => `Round ${++round} result: London`;
    for (let n = 1; n <= 5; n++) fake.reply(toolRound(n));
    fake.reply({ fixture: "openai-chat/after-tool-result-text.sse" });
    const events = await streamMessage("What is the capital of the UK? Check it 5 times.");
    expect(finalState(events)).toBe("TASK_STATE_COMPLETED");
    for (const [call, request] of harness.requests.entries()) {
      expect(request.messages.length).toBeLessThanOrEqual(6);
      const wire = wireMessages(call);
      expectPairsIntact(wire);
      expect(wire).toContainEqual({
        role: "user",
        content: "What is the capital of the UK? Check it 5 times.",
      });
      if (call > 0) expect(roundsIn(wire).at(-1)).toBe(call);
    }
    expect(roundsIn(wireMessages(5))).toEqual([4, 5]);
  });
});
