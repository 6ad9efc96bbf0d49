import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { contextObjectName } from "../../src/storage/ids";
import { withAgent } from "../support/agent-override";
import { rpc, send, userMessage } from "../support/helpers";
import { loggingStatements } from "../support/sql-plans";

type Json = Record<string, unknown>;

const stubOf = (contextId: string) =>
  env.EDGELINK_CONTEXT.get(env.EDGELINK_CONTEXT.idFromName(contextObjectName("", contextId)));

const logging = <T>(contextId: string, fn: () => Promise<T>) =>
  loggingStatements(stubOf(contextId), fn);

const echo = (ctx: Json) => {
  const parts = (ctx.message as { parts: { content?: unknown }[] }).parts;
  return `echo: ${String(parts[0]?.content ?? "")}`;
};

describe("the SQL of one blocking message (a count, not a time)", () => {
  it("B6: a follow-up answered at once is one transaction of two INSERTs: its message, and its task already completed with its answer", async () => {
    const { contextId } = (await send("start")) as { contextId: string };
    await withAgent(stubOf(contextId), () => ({ handler: echo }));
    await rpc("SendMessage", { message: userMessage("warm", { contextId }) });
    await rpc("SendMessage", { message: userMessage("warm again", { contextId }) });
    const { result, log } = await logging(contextId, () =>
      rpc("SendMessage", { message: userMessage("hello", { contextId }) }),
    );
    expect((result.body.result as { task: Json }).task).toMatchObject({
      status: { state: "TASK_STATE_COMPLETED" },
    });
    // One transaction: the message, then the task's row once, with its answer and its end.
    // No event is written (nothing could read a task made and ended in one turn).
    const inTransaction = log.slice(log.indexOf("<transaction>"));
    expect(inTransaction.map((q) => q.split(" (")[0])).toEqual([
      "<transaction>",
      "INSERT INTO history_items",
      "INSERT INTO tasks",
    ]);
    expect(log.filter((q) => q === "<transaction>")).toHaveLength(1);
    expect(log.filter((q) => /^(UPDATE|DELETE)/.test(q))).toEqual([]);
    // The next message's statements are the same texts (values never shape them), so each
    // is prepared once and taken from workerd's cache after.
    const next = await logging(contextId, async () => {
      for (let i = 0; i < 5; i++) {
        await rpc("SendMessage", { message: userMessage(`again ${i}`, { contextId }) });
      }
    });
    const texts = (l: string[]) => new Set(l.filter((q) => q.startsWith("INSERT INTO tasks")));
    expect([...texts(next.log)]).toEqual([...texts(log)]);
  });
});
