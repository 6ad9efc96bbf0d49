import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { ERROR_TABLE } from "../../../src/protocol/errors";
import { contextObjectName } from "../../../src/storage/ids";
import { withLimits as setLimits } from "../../support/agent-override";
import { rest, rpc, send, userMessage } from "../../support/helpers";

type Json = Record<string, unknown>;

const contextStub = (contextId: string) => {
  const ns = env.EDGELINK_CONTEXT;
  return ns.get(ns.idFromName(contextObjectName("", contextId)));
};

const withLimits = (contextId: string, limits: Json) => setLimits(contextStub(contextId), limits);

const historyTotal = async (contextId: string) =>
  (await rest("GET", `/contexts/${contextId}/history`)).body.totalSize as number;

describe("a conversation's history is bounded (limits.historyItems, issue 10)", () => {
  it("a full conversation refuses a new message on both bindings, writing nothing, until it is compacted", async () => {
    const first = await send("one");
    const contextId = first.contextId as string;
    await send("one more", { contextId });
    await send("and one more", { contextId });
    const before = await historyTotal(contextId);
    expect(before).toBeGreaterThan(0);
    await withLimits(contextId, { historyItems: before + 1 });

    // One more item fits: this message is taken.
    const second = await send("two", { contextId });
    expect((second.status as Json).state).toBe("TASK_STATE_COMPLETED");
    const full = await historyTotal(contextId);

    const refused = await rpc("SendMessage", { message: userMessage("three", { contextId }) });
    const error = refused.body.error as Json;
    expect(error.code).toBe(ERROR_TABLE.ConversationFull.code);
    expect(error.message).toContain("limits.historyItems");
    expect(error.message).toContain("history:compact");
    const overRest = await rest("POST", "/message:send", {
      message: userMessage("three", { contextId }),
    });
    expect(overRest.status).toBe(409);
    expect((overRest.body.error as Json).status).toBe("FAILED_PRECONDITION");
    // Nothing was written: no item, no task.
    expect(await historyTotal(contextId)).toBe(full);
    const listed = await rpc("ListTasks", { contextId });
    expect(((listed.body.result as Json).tasks as Json[]).length).toBe(4);

    // Compacted, the conversation takes messages again.
    const compacted = await rest("POST", `/contexts/${contextId}/history:compact`, {
      strategy: "recent",
      maxMessages: 2,
    });
    expect(compacted.status).toBe(200);
    const after = await send("four", { contextId });
    expect((after.status as Json).state).toBe("TASK_STATE_COMPLETED");
  });
});
