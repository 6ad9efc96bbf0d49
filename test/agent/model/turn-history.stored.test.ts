import { env, runInDurableObject } from "cloudflare:test";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { resolveContextWindow } from "../../../src/agent/context-window-option";
import type { Agent } from "../../../src/agent/definition";
import type { HistoryStore } from "../../../src/conversation/history/history-store";
import { itemFromMessage } from "../../../src/conversation/tasks/conversation-bridge";
import type { Item } from "../../../src/history/items";
import { SUMMARY_LABEL, type Summarizer } from "../../../src/history/summarize";
import { Message } from "../../../src/protocol/message";
import { openai } from "../../../src/providers/openai/openai-chat";
import { contextObjectName, idKeys, sealedTaskId } from "../../../src/storage/ids";
import { streamMessage } from "../../harness/llm/stream";
import worker, { harness } from "../../harness/llm/worker";
import { FakeProvider } from "../../providers/fake-provider";
import { BASE, waitForState } from "../../support/helpers";
import { orphanTaskRow } from "../../support/task-fixture";
import { itemAt } from "../../support/window-items";

type Json = Record<string, unknown>;

let fake: FakeProvider;
const agent = worker.agent as Agent<unknown>;
const defaults = { ...agent };

beforeEach(() => {
  fake = new FakeProvider({ seed: 7, maxChunk: 13 });
  harness.fetch = fake.fetch;
  harness.requests = [];
  harness.toolRuns = [];
  harness.model = openai({
    model: "gpt-4o-mini",
    apiKey: "sk-test",
    baseUrl: "https://fake.test/v1",
  });
});
afterEach(() => {
  Object.assign(agent, defaults);
});

/** The context of a streamed task, from its last status update. */
function contextOf(events: Json[]): string {
  const last = events.at(-1)?.statusUpdate as Json | undefined;
  if (!last) throw new Error("the stream ended without a status update");
  return last.contextId as string;
}

/** The chat messages of the last request the fake provider got. */
function lastSent(): Json[] {
  const request = fake.requests.at(-1);
  if (!request) throw new Error("no request reached the provider");
  return (request.body as Json).messages as Json[];
}

function stubOf(contextId: string) {
  const ns = env.EDGELINK_CONTEXT;
  return ns.get(ns.idFromName(contextObjectName("", contextId)));
}

/** Puts `n` items of a long conversation (test/support/window-items.ts) into the context's history. */
async function seed(contextId: string, n: number): Promise<void> {
  await runInDurableObject(stubOf(contextId), (instance, state) => {
    const history = (instance as unknown as { store: { history: HistoryStore<Item> } }).store
      .history;
    for (let start = 0; start < n; start += 5000) {
      state.storage.transactionSync(() => {
        for (let i = start; i < Math.min(n, start + 5000); i++) history.append(itemAt(i));
      });
    }
  });
}

/** Records the SQLite statements on the conversation's `history_items` from here on. */
async function countHistoryReads(contextId: string) {
  const seen: { query: string; cursor: SqlStorageCursor<Record<string, SqlStorageValue>> }[] = [];
  const restore = await runInDurableObject(stubOf(contextId), (_instance, state) => {
    const sql = state.storage.sql;
    const exec = sql.exec;
    sql.exec = ((query: string, ...args: SqlStorageValue[]) => {
      const cursor = exec.call(sql, query, ...args);
      if (query.includes("history_items")) seen.push({ query, cursor });
      return cursor;
    }) as typeof sql.exec;
    return () => {
      sql.exec = exec;
    };
  });
  return {
    rowsRead: () => seen.reduce((sum, s) => sum + s.cursor.rowsRead, 0),
    queries: () => seen.map((s) => s.query),
    restore: () => runInDurableObject(stubOf(contextId), () => restore()),
  };
}

/** OpenAI chat messages' estimated tokens, the way F7 counts items. */
function estimate(messages: Json[]): number {
  let total = 0;
  for (const m of messages) {
    total += 4 + Math.floor(String(m.content ?? "").length / 4);
    for (const call of (m.tool_calls ?? []) as {
      function: { name: string; arguments: string };
    }[]) {
      total +=
        5 +
        Math.floor(call.function.name.length / 4) +
        Math.floor(call.function.arguments.length / 4);
    }
  }
  return total;
}

describe("a model turn over a long conversation sends its window (F25, issue 10)", () => {
  it("F25 F10: over 100,000 items the provider gets the instructions, the running summary and the newest turns within budget, reading a few hundred rows", async () => {
    fake.reply({ fixture: "openai-chat/text-with-usage.sse" });
    const first = await streamMessage("hello");
    const contextId = contextOf(first);
    await seed(contextId, 100_000);

    const transcripts: string[] = [];
    const summarizer: Summarizer = async (transcript) => {
      transcripts.push(transcript);
      return "The user asked about the weather in many towns; it was sunny everywhere.";
    };
    agent.summarizer = summarizer;
    agent.contextWindow = resolveContextWindow({ maxTokens: 3000 });

    const reads = await countHistoryReads(contextId);
    fake.reply({ fixture: "openai-chat/text-with-usage.sse" });
    await streamMessage("What is the capital of Mexico?", contextId);
    const rowsRead = reads.rowsRead();
    const queries = reads.queries();
    await reads.restore();

    const sent = lastSent();
    // The history's own system message, 100,000 items back, is pinned (F8): the OpenAI
    // converter joins it to the agent's instructions.
    expect(sent[0]).toEqual({
      role: "system",
      content: "You are a helpful assistant.\n\nYou answer questions about the weather.",
    });
    // ... then the running summary, then the newest turns, the new question last.
    const summary = sent.find((m) => String(m.content).startsWith(SUMMARY_LABEL));
    expect(summary).toEqual({
      role: "assistant",
      content: `${SUMMARY_LABEL}\nThe user asked about the weather in many towns; it was sunny everywhere.`,
    });
    expect(sent.at(-1)).toEqual({ role: "user", content: "What is the capital of Mexico?" });
    expect(sent.length).toBeLessThan(40);
    expect(estimate(sent.slice(1))).toBeLessThanOrEqual(3000);
    // F10: every tool result sent follows the call it answers.
    const calls = new Set<string>();
    for (const m of sent) {
      for (const c of (m.tool_calls ?? []) as { id: string }[]) calls.add(c.id);
      if (m.role === "tool") expect(calls.has(m.tool_call_id as string)).toBe(true);
    }
    // One summarizer call, over older turns, not over the ones kept verbatim.
    expect(transcripts).toHaveLength(1);
    expect(transcripts[0]).not.toContain("What is the capital of Mexico?");
    expect(transcripts[0]).toContain("question 19998:");
    // The turn read a few pages of history rows, not 100,000.
    expect(rowsRead).toBeLessThan(1000);
    for (const query of queries.filter((q) => q.startsWith("SELECT *"))) {
      // Bounded: a page (LIMIT), one task's rows, or one row by its key (a retry lookup).
      expect(query).toMatch(/LIMIT|task_id = \?|WHERE id = \?$/);
    }

    // The next turn starts from the stored summary: no new summarizer call.
    fake.reply({ fixture: "openai-chat/text-with-usage.sse" });
    await streamMessage("And of Peru?", contextId);
    const next = lastSent();
    expect(next).toContainEqual(summary);
    expect(next.at(-1)).toEqual({ role: "user", content: "And of Peru?" });
    expect(transcripts).toHaveLength(1);
  }, 60_000);

  it("F25: a turn resumed after a restart sends its question, however many of its recorded rounds came after it", async () => {
    fake.reply({ fixture: "openai-chat/text-with-usage.sse" });
    const contextId = contextOf(await streamMessage("hello"));
    const orphanId = await sealedTaskId(
      await idKeys(env, BASE),
      { tenant: "", owner: "" },
      contextId,
    );
    // A task a restart left working: its question, then 300 items its earlier rounds
    // recorded (far more than the 400-token window holds).
    await runInDurableObject(stubOf(contextId), async (instance, state) => {
      const now = new Date().toISOString();
      orphanTaskRow(state.storage.sql, orphanId, contextId);
      const history = (instance as unknown as { store: { history: HistoryStore<Item> } }).store
        .history;
      const question = Message.parse({
        messageId: "resumed-question",
        role: "user",
        parts: [{ type: "text", content: "Which towns were sunny?" }],
        contextId,
        taskId: orphanId,
        timestamp: now,
      });
      history.append(itemFromMessage(question), orphanId);
      for (let i = 0; i < 300; i++) {
        history.append(
          {
            type: "message",
            id: `progress-${i}`,
            createdAt: now,
            role: "assistant",
            content: [`Looked at town ${i}: it was sunny.`],
            interrupted: false,
            extra: {},
          } as Item,
          orphanId,
        );
      }
      agent.contextWindow = resolveContextWindow({ maxTokens: 400 });
      agent.resumeOnRestart = true;
      fake.reply({ fixture: "openai-chat/text-with-usage.sse" });
      await (instance as unknown as { recover(): Promise<void> }).recover();
    });
    await waitForState(orphanId, "TASK_STATE_COMPLETED");
    const sent = lastSent();
    expect(sent).toContainEqual({ role: "user", content: "Which towns were sunny?" });
    // The newest rounds fill the rest of the window, the question before them.
    expect(sent.at(-1)).toEqual({
      role: "assistant",
      content: "Looked at town 299: it was sunny.",
    });
    expect(estimate(sent.slice(1))).toBeLessThanOrEqual(400 + 12);
  });

  it("F25: a question bigger than the whole budget is still sent (the turn answers it; the older items give way)", async () => {
    fake.reply({ fixture: "openai-chat/text-with-usage.sse" });
    const contextId = contextOf(await streamMessage("hello"));
    agent.contextWindow = resolveContextWindow({ maxTokens: 50 });
    const question = `Summarize this: ${"lorem ipsum ".repeat(100)}`;
    fake.reply({ fixture: "openai-chat/text-with-usage.sse" });
    await streamMessage(question, contextId);
    expect(lastSent().slice(1)).toEqual([{ role: "user", content: question }]);
  });

  it("F25: without a summarizer the turn is truncated to the budget, newest kept", async () => {
    fake.reply({ fixture: "openai-chat/text-with-usage.sse" });
    const first = await streamMessage("hello");
    const contextId = contextOf(first);
    await seed(contextId, 2_000);
    agent.contextWindow = resolveContextWindow({ maxTokens: 500 });
    fake.reply({ fixture: "openai-chat/text-with-usage.sse" });
    await streamMessage("What is the capital of Mexico?", contextId);
    const sent = lastSent();
    expect(estimate(sent.slice(1))).toBeLessThanOrEqual(500);
    expect(sent.some((m) => String(m.content).startsWith(SUMMARY_LABEL))).toBe(false);
    expect(sent.at(-2)).toEqual({
      role: "assistant",
      content: "In town 399 it is sunny and 9 degrees.",
    });
    expect(sent.at(-1)).toEqual({ role: "user", content: "What is the capital of Mexico?" });
  });
});
