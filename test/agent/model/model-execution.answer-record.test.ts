import { env, runInDurableObject } from "cloudflare:test";
import { beforeEach, describe, expect, it } from "vitest";
import type { HistoryStore } from "../../../src/conversation/history/history-store";
import type { TaskStore } from "../../../src/conversation/tasks/task-store";
import { Item } from "../../../src/history/items";
import { Message } from "../../../src/protocol/message";
import { openai } from "../../../src/providers/openai/openai-chat";
import { contextObjectName } from "../../../src/storage/ids";
import { streamMessage } from "../../harness/llm/stream";
import { harness } from "../../harness/llm/worker";
import { FakeProvider } from "../../providers/fake-provider";
import { rpc } from "../../support/helpers";

type Json = Record<string, unknown>;

let fake: FakeProvider;

beforeEach(() => {
  fake = new FakeProvider({ seed: 3, maxChunk: 17 });
  harness.fetch = fake.fetch;
  harness.requests = [];
  harness.model = openai({
    model: "gpt-4o-mini",
    apiKey: "sk-test",
    baseUrl: "https://fake.test/v1",
  });
});

function stubOf(contextId: string) {
  const ns = env.EDGELINK_CONTEXT;
  return ns.get(ns.idFromName(contextObjectName("", contextId)));
}

describe("a model's answer is recorded without a validation pass (issue 10)", () => {
  it("F1: the stored answer item is exactly what the item schema builds from it, and its A2A message what the message schema builds", async () => {
    fake.reply({ fixture: "openai-chat/text-with-usage.sse" });
    const events = await streamMessage("What is the capital of Mexico?");
    const last = events.at(-1)?.statusUpdate as Json;
    expect((last.status as Json).state).toBe("TASK_STATE_COMPLETED");
    const contextId = last.contextId as string;
    const taskId = last.taskId as string;

    // The row as stored (JSON) and the live task's message (memory) of the same turn.
    const { stored, live } = await runInDurableObject(stubOf(contextId), (instance) => {
      const store = (instance as unknown as { store: TaskStore }).store;
      const history = store.history as HistoryStore<Item>;
      const rows = history.ofTask(taskId);
      return {
        stored: rows.map((r) => r.item),
        live: store.read(taskId)?.history ?? [],
      };
    });
    expect(stored.map((i) => i.type === "message" && i.role)).toEqual(["user", "assistant"]);
    const answer = stored[1] as Item & { type: "message" };
    expect(answer.content).toEqual(["The capital of Mexico is Mexico City."]);
    // Same keys, same order, same values: the schema would have stored the same JSON.
    expect(JSON.stringify(Item.parse(answer))).toBe(JSON.stringify(answer));
    const carried = answer.extra.a2a as Json;
    expect(JSON.stringify(Message.parse(carried))).toBe(JSON.stringify(carried));
    expect(carried).toMatchObject({ role: "agent", taskId, contextId });
    expect(answer.createdAt).toBe(carried.timestamp);

    // The live task's history holds that message; GetTask (from memory) shows it.
    expect(live.at(-1)).toEqual(carried);
    const task = (await rpc("GetTask", { id: taskId })).body.result as Json;
    const shown = (task.history as Json[]).at(-1) as Json;
    expect(shown.role).toBe("ROLE_AGENT");
    expect(shown.messageId).toBe(carried.messageId);
    expect(shown.parts).toEqual([{ text: "The capital of Mexico is Mexico City." }]);
  });
});
