import { env, evictDurableObject, runInDurableObject, SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { contextObjectName } from "../../../src/storage/ids";
import { withAgent } from "../../support/agent-override";
import {
  BASE,
  parseSse,
  readEvents,
  rpc,
  send,
  sleep,
  userMessage,
  waitForState,
} from "../../support/helpers";

type Json = Record<string, unknown>;

/**
 * JSON.stringify calls of one blocking echo message in the test pool, request to answer:
 * the request body (this test's), the history row, the task row's state history, the
 * artifact's part and header, the completed status's message and state history, the answer.
 */
const COUNTED_STRINGIFY_CALLS = 8;

const stubOf = (contextId: string) =>
  env.EDGELINK_CONTEXT.get(env.EDGELINK_CONTEXT.idFromName(contextObjectName("", contextId)));

function post(body: Json, headers: Record<string, string> = {}) {
  return SELF.fetch(`${BASE}/`, {
    method: "POST",
    headers: { "Content-Type": "application/json", "A2A-Version": "1.0", ...headers },
    body: JSON.stringify(body),
  });
}

const streamMessage = (message: Json) =>
  post({ jsonrpc: "2.0", id: 7, method: "SendStreamingMessage", params: { message } });

const subscribe = (taskId: string, headers: Record<string, string> = {}) =>
  post({ jsonrpc: "2.0", id: 9, method: "SubscribeToTask", params: { id: taskId } }, headers);

/**
 * A conversation whose agent answers at once (the echo of the bench: its run ends in the
 * turn its task was made), or, for the text "slow", after a second.
 */
async function instantEcho(): Promise<string> {
  const { contextId } = (await send("start")) as { contextId: string };
  await echoIn(contextId);
  return contextId;
}

/** Makes a live object's agent the instant echo (a new instance has the demo agent again). */
async function echoIn(contextId: string): Promise<void> {
  await withAgent(stubOf(contextId), () => ({
    handler: async (ctx: { message: { parts: { content?: unknown }[] } }) => {
      const text = String(ctx.message.parts[0]?.content ?? "");
      if (text === "slow") await new Promise((resolve) => setTimeout(resolve, 1000));
      return `echo: ${text}`;
    },
  }));
}

interface Stored {
  events: number[];
  floor: number;
  ceiling: number | null;
}

/** The event rows of a task (their seqs) and its floor and ceiling, read in its object. */
function storedOf(contextId: string, taskId: string): Promise<Stored> {
  return runInDurableObject(stubOf(contextId), (_i, state) => {
    const sql = state.storage.sql;
    const events = sql
      .exec<{ seq: number }>("SELECT seq FROM events WHERE task_id = ? ORDER BY seq", taskId)
      .toArray()
      .map((r) => r.seq);
    const row = sql
      .exec<{ floor: number; ceiling: number | null }>(
        "SELECT event_floor AS floor, event_ceiling AS ceiling FROM tasks WHERE id = ?",
        taskId,
      )
      .one();
    return { events, ...row };
  });
}

async function blocking(contextId: string, text: string, extra: Json = {}, configuration?: Json) {
  const { body } = await rpc("SendMessage", {
    message: userMessage(text, { contextId, ...extra }),
    configuration,
  });
  return (body.result as { task: Json }).task;
}

/** A streamed message's SSE events, its task id and the seqs it was sent. */
async function streamed(contextId: string, text: string) {
  const events = parseSse(await (await streamMessage(userMessage(text, { contextId }))).text());
  const first = (events[0] as { data: Json }).data.result as { task: Json };
  return { taskId: first.task.id as string, events, ids: events.slice(1).map((e) => e.id) };
}

describe("a task nobody can read the events of writes none", () => {
  it("B12: a blocking echo writes no event row; its seqs stay used (floor to ceiling), and the tasks after it get ids past them, also after a restart", async () => {
    const contextId = await instantEcho();
    const before = await streamed(contextId, "before");
    const task = await blocking(contextId, "hello");
    expect(task.status).toMatchObject({ state: "TASK_STATE_COMPLETED" });
    // Let the turn's end pass: nothing of it is written later either.
    await sleep(20);
    const stored = await storedOf(contextId, task.id as string);
    expect(stored.events).toEqual([]);
    // working, the artifact, completed: three seqs, right after the streamed task's.
    expect(stored.floor).toBe((before.ids.at(-1) as number) + 1);
    expect(stored.ceiling).toBe(stored.floor + 2);

    // Every other read is as before: GetTask, the listing, the history.
    const { body: got } = await rpc("GetTask", { id: task.id });
    expect(got.result).toMatchObject({
      id: task.id,
      status: { state: "TASK_STATE_COMPLETED" },
      artifacts: [{ parts: [{ text: "echo: hello" }] }],
    });
    const { body: listed } = await rpc("ListTasks", { contextId });
    expect(((listed.result as Json).tasks as Json[]).map((t) => t.id)).toContain(task.id);
    expect((got.result as Json).history).toMatchObject([{ parts: [{ text: "hello" }] }]);
    // A finished task cannot be subscribed to, as before.
    const refused = (await (await subscribe(task.id as string)).json()) as Json;
    expect(refused.error).toMatchObject({ code: -32004 });

    const after = await streamed(contextId, "after");
    expect(after.ids[0]).toBe((stored.ceiling as number) + 1);
    // A new object reads the log's end again: the unwritten seqs are still taken.
    await evictDurableObject(stubOf(contextId));
    await echoIn(contextId);
    const quiet = await blocking(contextId, "quiet again");
    const quietStored = await storedOf(contextId, quiet.id as string);
    expect(quietStored.events).toEqual([]);
    expect(quietStored.floor).toBe((after.ids.at(-1) as number) + 1);
    await evictDurableObject(stubOf(contextId));
    await echoIn(contextId);
    const restarted = await streamed(contextId, "restarted");
    expect(restarted.ids[0]).toBe((quietStored.ceiling as number) + 1);
    const all = [before, after, restarted].flatMap((s) => s.ids as number[]);
    expect(new Set(all).size).toBe(all.length);
    expect([...all].sort((a, b) => a - b)).toEqual(all);
  });

  it("B12: a blocking echo serializes none of its events, and its metadata-free task row without the serializer", async () => {
    const { contextId } = (await send("start")) as { contextId: string };
    // The bench's echo: it answers without an await, so its task ends in the transaction
    // that made it (an async handler's task ends in the next one).
    await withAgent(stubOf(contextId), () => ({
      handler: (ctx: { message: { parts: { content?: unknown }[] } }) =>
        `echo: ${String(ctx.message.parts[0]?.content ?? "")}`,
    }));
    await blocking(contextId, "warm");
    // The Worker, the object and this test share the isolate: every JSON.stringify of the
    // message is seen here, and so is one by another file's object whose timer fires in the
    // window (a webhook retry, its log line). The fewest of three messages is the message's.
    const stringify = JSON.stringify;
    let values: unknown[] = [];
    let task: Json = {};
    for (let trial = 0; trial < 3; trial++) {
      const seen: unknown[] = [];
      JSON.stringify = ((value: unknown, ...rest: never[]) => {
        seen.push(value);
        return stringify(value, ...rest);
      }) as typeof JSON.stringify;
      try {
        task = await blocking(contextId, `counted ${trial}`);
      } finally {
        JSON.stringify = stringify;
      }
      if (trial === 0 || seen.length < values.length) values = seen;
    }
    expect(task.status).toMatchObject({ state: "TASK_STATE_COMPLETED" });
    const kinds = values.map((v) =>
      v !== null && typeof v === "object" ? String((v as Json).kind ?? "") : "",
    );
    expect(kinds.filter((k) => k.endsWith("-update"))).toEqual([]);
    const empty = values.filter(
      (v) =>
        v !== null && typeof v === "object" && !Array.isArray(v) && Object.keys(v).length === 0,
    );
    expect(empty).toEqual([]);
    // Where the message's serializer calls go; fewer is fine, more needs a reason.
    expect(values.length).toBeLessThanOrEqual(COUNTED_STRINGIFY_CALLS);
  });

  it("B12 N7: a streamed message writes its events, and Last-Event-ID replays them", async () => {
    const contextId = await instantEcho();
    const { taskId, ids } = await streamed(contextId, "streamed");
    expect(ids).toHaveLength(3);
    expect((await storedOf(contextId, taskId)).events).toEqual(ids);
    // Replay after the first event the client saw: the rest, as sent.
    const replay = parseSse(
      await (await subscribe(taskId, { "Last-Event-ID": String(ids[0]) })).text(),
    );
    expect(replay.map((e) => e.id)).toEqual(ids.slice(1));
  });

  it("N7: a retried blocking message streamed again starts from its final event's id, as when its events were written", async () => {
    const contextId = await instantEcho();
    const message = userMessage("once", { contextId });
    await rpc("SendMessage", { message });
    const events = parseSse(await (await streamMessage(message)).text());
    const task = ((events[0] as { data: Json }).data.result as { task: Json }).task;
    expect(events).toHaveLength(1);
    const stored = await storedOf(contextId, task.id as string);
    expect(stored.events).toEqual([]);
    expect(events[0]?.id).toBe(stored.ceiling);
  });

  it("B12 N7: a task with a subscriber writes its events, and Last-Event-ID replays them", async () => {
    const contextId = await instantEcho();
    const task = await blocking(contextId, "slow", {}, { returnImmediately: true });
    const response = await subscribe(task.id as string);
    const { events, reader } = await readEvents(response, 1);
    expect(((events[0] as { data: Json }).data.result as Json).task).toBeDefined();
    let rest = "";
    const decoder = new TextDecoder();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      rest += decoder.decode(value, { stream: true });
    }
    const live = parseSse(rest).map((e) => e.id as number);
    await waitForState(task.id as string, "TASK_STATE_COMPLETED");
    const stored = await storedOf(contextId, task.id as string);
    // working (written at the end of the turn that made it), the artifact, completed.
    expect(stored.events).toHaveLength(3);
    expect(stored.events.slice(1)).toEqual(live);
    const replay = parseSse(
      await (await subscribe(task.id as string, { "Last-Event-ID": String(stored.floor) })).text(),
    );
    expect(replay.map((e) => e.id)).toEqual(stored.events.slice(1));
  });

  it("B12: a task with a webhook config writes its events and delivers them", async () => {
    const contextId = await instantEcho();
    const got: Json[] = [];
    await runInDurableObject(stubOf(contextId), (instance) => {
      const dispatcher = (instance as unknown as { dispatcher: object }).dispatcher;
      Object.defineProperty(dispatcher, "fetchFn", {
        configurable: true,
        value: async (_input: RequestInfo | URL, init?: RequestInit) => {
          got.push(JSON.parse(String(init?.body)) as Json);
          return new Response(null, { status: 200 });
        },
      });
    });
    const task = await blocking(
      contextId,
      "hooked",
      {},
      { taskPushNotificationConfig: { url: "https://hooks.example.com/unread" } },
    );
    const stored = await storedOf(contextId, task.id as string);
    expect(stored.events).toEqual([stored.floor, stored.floor + 1, stored.floor + 2]);
    const deadline = Date.now() + 5000;
    while (got.length < 4 && Date.now() < deadline) await sleep(50);
    // The snapshot at registration, then working, the artifact and completed.
    expect(got.length).toBe(4);
  });
});
