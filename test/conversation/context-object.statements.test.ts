import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { ContextRpc } from "../../src/conversation/context-object";
import { Message } from "../../src/protocol/message";
import { contextObjectName } from "../../src/storage/ids";
import { CONTEXT_SCHEMA } from "../../src/storage/schema";
import { withAgent } from "../support/agent-override";
import { listUntil, rpc, send, userMessage } from "../support/helpers";
import { loggingStatements } from "../support/sql-plans";

type Json = Record<string, unknown>;

const stubOf = (contextId: string) =>
  env.EDGELINK_CONTEXT.get(env.EDGELINK_CONTEXT.idFromName(contextObjectName("", contextId)));

const logging = <T>(contextId: string, fn: () => Promise<T>) =>
  loggingStatements(stubOf(contextId), fn);

/** The index outbox's acknowledgement of rows the index holds (see `IndexOutbox.writeAcks`). */
const INDEX_ACK = "UPDATE tasks SET index_pending = 0 WHERE ";

/** The values a statement binds: its distinct `?N` and its bare `?`. */
const parameters = (query: string) =>
  new Set(query.match(/\?\d+/g)).size + (query.match(/\?(?!\d)/g)?.length ?? 0);

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
    // No event is written (nothing could read a task made and ended in one turn). The index
    // acknowledges rows the warm-up messages sent, and an acknowledgement is written with the
    // next transaction by design: on a loaded machine the window closed before this message
    // and its acknowledgement rode along. It is not this message's write, so it is set aside.
    const own = log.filter((q) => !q.startsWith(INDEX_ACK));
    const inTransaction = own.slice(own.indexOf("<transaction>"));
    expect(inTransaction.map((q) => q.split(" (")[0])).toEqual([
      "<transaction>",
      "INSERT INTO history_items",
      "INSERT INTO tasks",
    ]);
    expect(own.filter((q) => q === "<transaction>")).toHaveLength(1);
    // Each bound value costs workerd several thousand instructions: the history row binds
    // its id, seq, task and body; the task row its id, key, context, status time, state
    // history, creation time, listing place, event and history floors and its artifact.
    // Its state is a literal, its update time its status time's parameter, its ceilings
    // their floors' plus the few events and items of its turn.
    const [item, row] = inTransaction.slice(1) as [string, string];
    expect([parameters(item), parameters(row)]).toEqual([4, 11]);
    // Whether the row is pinned is a literal too (a user's message is not), so the partial
    // index of pinned rows reads no JSON.
    expect(item).toMatch(/'message', \?\d*, 0, 0\)$/);
    expect(row).toMatch(/\?\d+ \+ 2, \?\d+ \+ 0,/);
    expect(row).toContain("'completed'");
    expect(own.filter((q) => /^(UPDATE|DELETE)/.test(q))).toEqual([]);
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

describe("the SQL of a new conversation's first message", () => {
  it("B1: its schema is one statement script (the current schema), and what it just made is never read back: no listing clock, event seq or identity read, before or in its index flush", async () => {
    const contextId = `first-${crypto.randomUUID()}`;
    const stub = stubOf(contextId) as unknown as ContextRpc;
    const message = Message.parse({ role: "user", parts: [{ type: "text", content: "hi" }] });
    const scope = { tenant: "", contextId, owner: "", newTaskId: "sealed" };
    const { result, log } = await logging(contextId, async () => {
      const sent = await stub.sendMessage(scope, { message, returnImmediately: false }, "1.0");
      // The index flush, a window later, is the first message's too: wait for it to land.
      if (!sent.ok) throw new Error(JSON.stringify(sent.error));
      const id = (JSON.parse(sent.value) as { task: { id: string } }).task.id;
      await listUntil({ pageSize: 100 }, ({ tasks }) => tasks.some((t) => t.id === id));
      return sent;
    });
    expect(result.ok).toBe(true);
    const creates = log.filter((q) => /\bCREATE (TABLE|INDEX|TRIGGER)\b/.test(q));
    expect(creates).toEqual([CONTEXT_SCHEMA.current.sql.replace(/\s+/g, " ").trim()]);
    expect(log.filter((q) => /^(ALTER|DROP)\b/.test(q))).toEqual([]);
    expect(log.filter((q) => /FROM list_clock|FROM meta WHERE key/.test(q))).toEqual([]);
    // The index flush's own read of where its rows go (the identity) is not among them.
    expect(log.some((q) => q.includes("FROM tasks WHERE index_pending = 1"))).toBe(true);
  });
});
