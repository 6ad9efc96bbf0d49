import {
  env,
  evictDurableObject,
  runDurableObjectAlarm,
  runInDurableObject,
  SELF,
} from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { contextObjectName } from "../../src/storage/ids";
import { withAgent, withLimits } from "../support/agent-override";
import {
  BASE,
  readEvents,
  rest,
  rpc,
  type SseEvent,
  send,
  userMessage,
  waitForState,
} from "../support/helpers";
import {
  authedAgent,
  BOB,
  ALICE as CAROL,
  rpcAs,
  signingKey,
  type Worker,
} from "../worker/auth-support";

type Json = Record<string, unknown>;

function stubOf(contextId: string) {
  const ns = env.EDGELINK_CONTEXT;
  return ns.get(ns.idFromName(contextObjectName("", contextId)));
}

/** A conversation to retry in: its contextId, from a first message. */
async function conversation(): Promise<string> {
  return (await send("start")).contextId as string;
}

/** The tasks of a conversation (asked of its object: nothing lags). */
async function tasksOf(contextId: string): Promise<Json[]> {
  const { body } = await rpc("ListTasks", { contextId, historyLength: 10 });
  return (body.result as Json).tasks as Json[];
}

/** The user messages with this text in a conversation's history (each run adds one). */
function said(contextId: string, text: string): Promise<number> {
  return runInDurableObject(stubOf(contextId), (_i, state) =>
    Number(
      state.storage.sql
        .exec(
          `SELECT count(*) AS n FROM history_items
           WHERE json_extract(body, '$.role') = 'user' AND json_extract(body, '$.content[0]') = ?`,
          text,
        )
        .one().n,
    ),
  );
}

const sendRpc = (message: Json, configuration?: Json) =>
  rpc("SendMessage", { message, ...(configuration ? { configuration } : {}) });

function streamSend(message: Json): Promise<Response> {
  return SELF.fetch(`${BASE}/`, {
    method: "POST",
    headers: { "Content-Type": "application/json", "A2A-Version": "1.0" },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "SendStreamingMessage",
      params: { message },
    }),
  });
}

const taskOf = (event: SseEvent | undefined) => {
  if (!event) throw new Error("no event");
  const result = event.data.result as Json;
  return (result.task ?? result.statusUpdate ?? result.artifactUpdate) as Json;
};

describe("idempotent SendMessage: a retry gets the original task back", () => {
  it("a retry after success answers exactly what the first send answered; no second task, no second run (B4)", async () => {
    const contextId = await conversation();
    const message = userMessage("retry me", { contextId, messageId: `r-${crypto.randomUUID()}` });
    const first = await sendRpc(message);
    const task = (first.body.result as Json).task as Json;
    expect((task.status as Json).state).toBe("TASK_STATE_COMPLETED");
    const again = await sendRpc(message);
    expect(again.body).toEqual(first.body);
    // Remembered in SQLite, not in memory: a restarted object knows it too.
    await evictDurableObject(stubOf(contextId));
    expect((await sendRpc(message)).body).toEqual(first.body);
    // Over the other binding, rendered as that binding renders a send's answer.
    const overRest = await rest("POST", "/message:send", { message });
    expect(overRest.status).toBe(200);
    expect((overRest.body.task as Json).id).toBe(task.id);
    expect(overRest.body.task).toEqual(task);
    // The conversation has the first task and this one; the handler ran once.
    expect((await tasksOf(contextId)).map((t) => t.id)).toContain(task.id);
    expect(await tasksOf(contextId)).toHaveLength(2);
    expect(await said(contextId, "retry me")).toBe(1);
    // Naming the task it went to is the same retry.
    const named = await sendRpc({ ...message, taskId: task.id });
    expect(((named.body.result as Json).task as Json).id).toBe(task.id);
    // A v0.3 client's retry of the same message: the same task, in v0.3 shapes.
    const v03 = await rpc(
      "message/send",
      {
        message: {
          kind: "message",
          messageId: message.messageId,
          role: "user",
          parts: [{ kind: "text", text: "retry me" }],
          contextId,
        },
      },
      { version: null },
    );
    expect(v03.body.result).toMatchObject({
      kind: "task",
      id: task.id,
      status: { state: "completed" },
    });
    expect(await tasksOf(contextId)).toHaveLength(2);
  });

  it("a retried answer to an input-required task gets the task it finished, not 'task is finished'", async () => {
    const asked = await send("hello");
    const contextId = asked.contextId as string;
    const answer = userMessage("Ada", {
      contextId,
      taskId: asked.id,
      messageId: `a-${crypto.randomUUID()}`,
    });
    const first = await sendRpc(answer);
    expect((((first.body.result as Json).task as Json).status as Json).state).toBe(
      "TASK_STATE_COMPLETED",
    );
    const again = await sendRpc(answer);
    expect(again.body).toEqual(first.body);
    expect(await said(contextId, "Ada")).toBe(1);
  });

  it("a retry while the task works gets it as it is now, and the run goes on once", async () => {
    const contextId = await conversation();
    const message = userMessage("count 1", { contextId, messageId: `w-${crypto.randomUUID()}` });
    const first = await sendRpc(message, { returnImmediately: true });
    const id = ((first.body.result as Json).task as Json).id as string;
    const again = await sendRpc(message);
    const task = (again.body.result as Json).task as Json;
    expect(task.id).toBe(id);
    expect(["TASK_STATE_SUBMITTED", "TASK_STATE_WORKING"]).toContain((task.status as Json).state);
    const done = await waitForState(id, "TASK_STATE_COMPLETED");
    expect(JSON.stringify(done.artifacts)).toContain("Counted to 1.");
    expect(await tasksOf(contextId)).toHaveLength(2);
    expect(await said(contextId, "count 1")).toBe(1);
  });

  it("a retried stream streams the existing task: a snapshot, then its live events; once it ended, the snapshot alone", async () => {
    const contextId = await conversation();
    const message = userMessage("count 1", { contextId, messageId: `s-${crypto.randomUUID()}` });
    const original = await streamSend(message);
    const { events: head, reader } = await readEvents(original, 1);
    const id = taskOf(head[0]).id as string;
    // The network failed: the client sends the same message again while it counts.
    const retried = await streamSend(message);
    expect(retried.headers.get("content-type")).toMatch(/text\/event-stream/);
    const { events } = await readEvents(retried);
    await reader.cancel();
    const first = taskOf(events[0]);
    expect(first.id).toBe(id);
    expect(events.length).toBeGreaterThan(1);
    const last = taskOf(events.at(-1));
    expect(last.taskId).toBe(id);
    expect((last.status as Json).state).toBe("TASK_STATE_COMPLETED");
    // After the end: the finished task, and the stream closes.
    const after = await readEvents(await streamSend(message));
    expect(after.events).toHaveLength(1);
    const snapshot = taskOf(after.events[0]);
    expect(snapshot.id).toBe(id);
    expect((snapshot.status as Json).state).toBe("TASK_STATE_COMPLETED");
    expect(await tasksOf(contextId)).toHaveLength(2);
    expect(await said(contextId, "count 1")).toBe(1);
  });

  it("the same messageId with different content, or for another task, is refused naming params.message.messageId", async () => {
    const contextId = await conversation();
    const messageId = `d-${crypto.randomUUID()}`;
    const first = await sendRpc(userMessage("one thing", { contextId, messageId }));
    const id = ((first.body.result as Json).task as Json).id as string;
    const other = await sendRpc(userMessage("another thing", { contextId, messageId }));
    expect(other.body.error).toMatchObject({ code: -32602 });
    expect(JSON.stringify(other.body.error)).toContain("params.message.messageId");
    const overRest = await rest("POST", "/message:send", {
      message: userMessage("another thing", { contextId, messageId }),
    });
    expect(overRest.status).toBe(400);
    expect(JSON.stringify(overRest.body)).toContain('"message.messageId"');
    const hello = (await send("hello", { contextId })) as Json;
    const elsewhere = await sendRpc(
      userMessage("one thing", { contextId, messageId, taskId: hello.id }),
    );
    expect(elsewhere.body.error).toMatchObject({ code: -32602 });
    expect(JSON.stringify(elsewhere.body.error)).toContain("params.message.messageId");
    // Nothing was written by either.
    expect((await tasksOf(contextId)).map((t) => t.id)).toContain(id);
    expect(await tasksOf(contextId)).toHaveLength(3);
    expect(await said(contextId, "another thing")).toBe(0);
  });

  it("two copies of one message at once make one task, also while a slow reply hook is asked", async () => {
    const contextId = await conversation();
    // A hook that lets the second copy in while the first waits on it.
    await withAgent(stubOf(contextId), () => ({
      reply: () => new Promise<undefined>((r) => setTimeout(() => r(undefined), 50)),
    }));
    const message = userMessage("twice at once", {
      contextId,
      messageId: `c-${crypto.randomUUID()}`,
    });
    const [a, b] = await Promise.all([sendRpc(message), sendRpc(message)]);
    expect(a.body.error).toBeUndefined();
    expect(b.body.error).toBeUndefined();
    expect(((a.body.result as Json).task as Json).id).toBe(
      ((b.body.result as Json).task as Json).id,
    );
    expect(await tasksOf(contextId)).toHaveLength(2);
    expect(await said(contextId, "twice at once")).toBe(1);
  });

  it("an agent without a reply hook finds the retry where it stores the message", async () => {
    const contextId = await conversation();
    await withAgent(stubOf(contextId), () => ({ reply: undefined }));
    const message = userMessage("no hook", { contextId, messageId: `h-${crypto.randomUUID()}` });
    const first = await sendRpc(message);
    const again = await sendRpc(message);
    expect(again.body).toEqual(first.body);
    const streamed = await readEvents(await streamSend(message));
    expect(streamed.events).toHaveLength(1);
    expect(taskOf(streamed.events[0]).id).toBe(((first.body.result as Json).task as Json).id);
    expect(await tasksOf(contextId)).toHaveLength(2);
    expect(await said(contextId, "no hook")).toBe(1);
  });

  it("a message with no contextId starts a new conversation, so it is never a retry", async () => {
    const message = userMessage("no context", { messageId: `n-${crypto.randomUUID()}` });
    const a = ((await sendRpc(message)).body.result as Json).task as Json;
    const b = ((await sendRpc(message)).body.result as Json).task as Json;
    expect(a.contextId).not.toBe(b.contextId);
    expect(a.id).not.toBe(b.id);
  });
});

describe("idempotent SendMessage: the window and its bound", () => {
  it("a retry is still recognised when the conversation is full; once retention pruned the task, the id is refused, never a second task", async () => {
    const contextId = await conversation();
    const message = userMessage("keep me", { contextId, messageId: `b-${crypto.randomUUID()}` });
    const id = (((await sendRpc(message)).body.result as Json).task as Json).id as string;
    // The history bounds the ids remembered: a full conversation takes no new message,
    // but still answers a retry of one it took.
    const items = await runInDurableObject(stubOf(contextId), (_i, state) =>
      Number(state.storage.sql.exec("SELECT count(*) AS n FROM history_items").one().n),
    );
    await withLimits(stubOf(contextId), { historyItems: items });
    const full = await send("more", { contextId }).catch((e: Error) => e.message);
    expect(String(full)).toContain("holds");
    const again = await sendRpc(message);
    expect(((again.body.result as Json).task as Json).id).toBe(id);
    // Retention prunes every finished task: there is nothing left to answer a retry with,
    // and the id, still in the history, makes no second task either.
    await withLimits(stubOf(contextId), { historyItems: items + 10, retainFinishedTasks: 0 });
    expect(await runDurableObjectAlarm(stubOf(contextId))).toBe(true);
    expect(await tasksOf(contextId)).toHaveLength(0);
    const late = await sendRpc(message);
    expect(late.body.error).toMatchObject({ code: -32602 });
    expect(JSON.stringify(late.body.error)).toContain("params.message.messageId");
    expect(JSON.stringify(late.body.error)).toContain("retention");
    expect(await tasksOf(contextId)).toHaveLength(0);
    // A new id is a new message, as ever.
    const next = await send("keep me", { contextId });
    expect((next.status as Json).state).toBe("TASK_STATE_COMPLETED");
  });
});

describe("idempotent SendMessage: callers never share a message id", () => {
  let worker: Worker;
  beforeAll(async () => {
    worker = authedAgent(await signingKey(), { clientContextIds: true });
  });

  it("another caller's same contextId and messageId make that caller's own task", async () => {
    const message = userMessage("mine", {
      contextId: `shared-${crypto.randomUUID()}`,
      messageId: "the-same-id",
    });
    const sendAs = async (who: Record<string, string>) => {
      const { body } = await rpcAs(worker, who, "SendMessage", { message });
      if (!body.result) throw new Error(JSON.stringify(body.error));
      return (body.result as { task: Json }).task;
    };
    const carol = await sendAs(CAROL);
    const bob = await sendAs(BOB);
    expect(bob.id).not.toBe(carol.id);
    // Each caller's retry finds that caller's task.
    expect((await sendAs(BOB)).id).toBe(bob.id);
    expect((await sendAs(CAROL)).id).toBe(carol.id);
  });
});
