import {
  env,
  evictDurableObject,
  runDurableObjectAlarm,
  runInDurableObject,
  SELF,
} from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { resolveAgent } from "../../../src/agent/definition";
import { HistoryStore } from "../../../src/conversation/history/history-store";
import { PushDispatcher } from "../../../src/conversation/push/push-dispatcher";
import { PushStore } from "../../../src/conversation/push/push-store";
import { EventHub } from "../../../src/conversation/runs/event-hub";
import { DROPPED_COMMENT, openTaskStream } from "../../../src/conversation/runs/task-stream";
import { TaskStore } from "../../../src/conversation/tasks/task-store";
import { A2AError } from "../../../src/protocol/errors";
import { Messages } from "../../../src/protocol/message";
import { Parts } from "../../../src/protocol/part";
import type { StreamFormat } from "../../../src/protocol/wire/stream";
import { contextObjectName, idKeys, issuedContextId } from "../../../src/storage/ids";
import { CHUNK_CHARS, MAX_ROW_BYTES } from "../../../src/storage/row-limit";
import { CONTEXT_SCHEMA } from "../../../src/storage/schema";
import { ensureSchema } from "../../../src/storage/schema-version";
import { withLimits as setLimits, withAgent } from "../../support/agent-override";
import {
  BASE,
  indexShardStub,
  parseSse,
  rest,
  rpc,
  send,
  userMessage,
} from "../../support/helpers";
import { loggingStatements } from "../../support/sql-plans";
import { taskFixture } from "../../support/task-fixture";

type Json = Record<string, unknown>;

function stubOf(contextId: string) {
  const ns = env.EDGELINK_CONTEXT;
  return ns.get(ns.idFromName(contextObjectName("", contextId)));
}

/** Statements and transactions one object runs while `fn` runs (every sql.exec logged). */
async function statementsOf(contextId: string, fn: () => Promise<unknown>): Promise<string[]> {
  return (await loggingStatements(stubOf(contextId), fn)).log;
}

const statements = (log: string[]) => log.filter((q) => q !== "<transaction>");
const reads = (log: string[]) => statements(log).filter((q) => /^SELECT/i.test(q));
/** The one read a follow-up message makes: whether its messageId was sent before. */
const RETRY_LOOKUP = "SELECT * FROM history_items WHERE id = ?";

/**
 * A new conversation whose index flush (and its backstop alarm) stays out of the test's
 * way: the statements counted are the message's own, not a flush's or an alarm's that
 * happened to fall in the same moment.
 */
async function quietContext(): Promise<string> {
  // Issued as the agent issues one (it refuses client-chosen ids), before the first message.
  const contextId = await issuedContextId(await idKeys(env, BASE), { tenant: "", owner: "" });
  await withLimits(contextId, { indexFlushMs: 600_000 });
  return contextId;
}

describe("durable core: a lean hot path", () => {
  it("a follow-up message writes its rows and reads only its retry lookup back (<= 11 statements)", async () => {
    const contextId = await quietContext();
    await send("warm", { contextId });
    const log = await statementsOf(contextId, () => send("ok", { contextId }));
    // The demo agent streams "You said: ok" as 3 chunks, the last 2 appended (2 statements
    // each, counted by the next test). The rest: task, message, working event | artifact
    // header, part, event | completed: row, event; and the acknowledgement of "warm"'s
    // index row, sent with its answer (1 statement riding along, no transaction of its
    // own). One read: is this messageId a retry (a primary-key lookup of the history row
    // it would be stored as)? The answer's own index call reads nothing: its rows are
    // known in memory.
    expect(statements(log).length - 2 * 2, log.join("\n")).toBeLessThanOrEqual(11);
    expect(log.filter((q) => q.startsWith("UPDATE tasks SET index_pending = 0"))).toHaveLength(1);
    expect(reads(log)).toEqual([RETRY_LOOKUP]);
  });

  it("a streamed chunk appended to an artifact costs 2 statements and no read", async () => {
    const contextId = await quietContext();
    await send("warm", { contextId });
    const one = statements(await statementsOf(contextId, () => send("one", { contextId })));
    const five = await statementsOf(contextId, () => send("a b c d e", { contextId }));
    // Four more chunks than "one": two statements each (the part row and its event).
    expect(statements(five).length - one.length).toBe(8);
    expect(reads(five)).toEqual([RETRY_LOOKUP]);
  });

  it("SendMessage answers what GetTask reads back from SQLite, also after a restart", async () => {
    const task = await send("same from memory and from disk");
    const contextId = task.contextId as string;
    const read = async () => (await rpc("GetTask", { id: task.id })).body.result as Json;
    expect(await read()).toEqual(task);
    await evictDurableObject(stubOf(contextId));
    expect(await read()).toEqual(task);
  });

  it("a multi-turn task (input-required, then answered) reads back as it was answered", async () => {
    const asked = await send("hello");
    expect((asked.status as Json).state).toBe("TASK_STATE_INPUT_REQUIRED");
    const answered = await send("Ada", { contextId: asked.contextId, taskId: asked.id });
    await evictDurableObject(stubOf(asked.contextId as string));
    const { body } = await rpc("GetTask", { id: asked.id });
    expect(body.result).toEqual(answered);
    const changes = (answered.metadata as Json)["edgelink/stateHistory"] as Json[];
    expect(changes.map((c) => c.newState)).toEqual([
      "working",
      "input-required",
      "working",
      "completed",
    ]);
  });
});

describe("durable core: event ids (issue 10)", () => {
  it("an event id is never reused: not after its task was pruned, a restart, or a rolled-back write", async () => {
    const seqs = await runInDurableObject(stubOf("event-seq"), (_i, state) => {
      ensureSchema(state.storage, CONTEXT_SCHEMA); // white-box: the schema a first write makes
      const fresh = () => new TaskStore(state.storage, new HistoryStore(state.storage));
      let store = fresh();
      const logged: number[] = [];
      const track = (events: { seq: number }[]) => {
        for (const e of events) logged.push(e.seq);
      };
      track(store.create(taskFixture("e1"), true));
      track(store.transition("e1", "completed"));
      // The newest events go with their task.
      const pruned = store.prune(0, "9999-12-31T00:00:00.000Z");
      store = fresh(); // a restart: nothing known in memory
      track(store.create(taskFixture("e2"), true));
      // A transaction that fails after logging an event rolls it back, and its seq with it.
      try {
        store.atomic(() => {
          track(store.transition("e2", "input-required"));
          throw new Error("boom");
        });
      } catch {}
      track(store.transition("e2", "completed"));
      const stored = state.storage.sql
        .exec<{ seq: number }>("SELECT seq FROM events ORDER BY seq")
        .toArray()
        .map((r) => r.seq);
      return { pruned, logged, stored };
    });
    expect(seqs.pruned).toBe(1);
    expect(seqs.logged).toEqual([1, 2, 3, 4, 4]);
    expect(seqs.stored).toEqual([3, 4]);
  });
});

describe("durable core: every row within SQLite's 2 MB limit", () => {
  it("an artifact part too big for one row is refused clearly and nothing is written", async () => {
    const result = await runInDurableObject(stubOf("row-limit"), (_i, state) => {
      ensureSchema(state.storage, CONTEXT_SCHEMA); // white-box: the schema a first write makes
      const store = new TaskStore(state.storage, new HistoryStore(state.storage));
      store.create(taskFixture("big"), true);
      const huge = Parts.text("x".repeat(MAX_ROW_BYTES + 1));
      let error: unknown = null;
      try {
        store.putArtifact(
          "big",
          {
            artifactId: "a1",
            name: null,
            description: null,
            parts: [huge],
            metadata: {},
            kind: "result",
            timestamp: new Date().toISOString(),
            uri: null,
            mediaType: null,
            actionId: null,
          },
          { append: false, lastChunk: true },
        );
      } catch (e) {
        error = e;
      }
      const rows = state.storage.sql
        .exec<{ n: number }>(
          "SELECT COUNT(*) AS n FROM artifact_parts WHERE task_key = (SELECT key FROM tasks WHERE id = 'big')",
        )
        .one().n;
      return {
        kind: error instanceof A2AError ? error.kind : String(error),
        message: error instanceof Error ? error.message : "",
        rows,
        artifacts: store.read("big")?.artifacts.length,
      };
    });
    expect(result.kind).toBe("InvalidParams");
    expect(result.message).toMatch(/artifact part is \d+ bytes, over the \d+-byte limit/);
    expect(result).toMatchObject({ rows: 0, artifacts: 0 });
  });

  it("a status message or metadata too big for the task row is refused, the task unchanged", async () => {
    const result = await runInDurableObject(stubOf("row-limit-2"), (_i, state) => {
      ensureSchema(state.storage, CONTEXT_SCHEMA); // white-box: the schema a first write makes
      const store = new TaskStore(state.storage, new HistoryStore(state.storage));
      store.create(taskFixture("t"), true);
      const errors: string[] = [];
      try {
        store.mergeMetadata("t", { blob: "é".repeat(MAX_ROW_BYTES / 2) });
      } catch (e) {
        errors.push((e as Error).message);
      }
      try {
        store.statusMessage("t", Messages.agent("y".repeat(MAX_ROW_BYTES)));
      } catch (e) {
        errors.push((e as Error).message);
      }
      return { errors, task: store.read("t") };
    });
    expect(result.errors).toHaveLength(2);
    expect(result.errors[0]).toMatch(/task metadata is \d+ bytes/);
    expect(result.task?.metadata).toEqual({});
    expect(result.task?.status.message).toBeNull();
  });
});

describe("durable core: races", () => {
  it("ListTasks right after a restart shows no task under a state it no longer has", async () => {
    const task = await send("count 30", {}, { returnImmediately: true });
    // The index now says working; the object is torn down mid-run.
    await runInDurableObject(stubOf(task.contextId as string), (_i, state) => {
      state.abort("simulated restart");
    }).catch(() => {});
    const { body } = await rpc("ListTasks", { status: "TASK_STATE_WORKING", pageSize: 100 });
    const tasks = (body.result as { tasks: Json[] }).tasks;
    expect(tasks.map((t) => t.id)).not.toContain(task.id);
    for (const t of tasks) expect((t.status as Json).state).toBe("TASK_STATE_WORKING");
  });

  it("two concurrent summary compactions of one conversation write one summary (E8)", async () => {
    const first = await send("first topic");
    const contextId = first.contextId as string;
    for (const word of ["second", "third", "fourth", "fifth"]) await send(word, { contextId });
    // A summarizer that waits like a model call does, so the two calls overlap.
    await withAgent(stubOf(contextId), () => ({
      summarizer: async (transcript: string) => {
        await new Promise((r) => setTimeout(r, 30));
        return `summary of ${transcript.length} chars`;
      },
    }));
    const path = `/contexts/${encodeURIComponent(contextId)}/history`;
    const compact = () =>
      rest("POST", `${path}:compact`, { strategy: "summary", preserveRecent: 2 });
    const results = await Promise.all([compact(), compact()]);
    expect(results.map((r) => r.status)).toEqual([200, 200]);
    const items = (await rest("GET", path)).body.items as { extra: Json; content: string[] }[];
    expect(items.filter((i) => i.extra.summary === true)).toHaveLength(1);
    expect(items.slice(1).map((i) => i.content[0])).toEqual(["fourth", "fifth"]);
  });
});

const withLimits = (contextId: string, limits: Json) => setLimits(stubOf(contextId), limits);

async function readAll(stream: ReadableStream<Uint8Array>): Promise<string> {
  return new Response(stream).text();
}

describe("durable core: bounded streams", () => {
  it("a subscriber that does not read is dropped with a clear end, not buffered without limit", async () => {
    const text = await runInDurableObject(stubOf("stalled"), async (_i, state) => {
      ensureSchema(state.storage, CONTEXT_SCHEMA); // white-box: the schema a first write makes
      const store = new TaskStore(state.storage, new HistoryStore(state.storage));
      store.create(taskFixture("s1"), true);
      const hub = new EventHub();
      const stream = openTaskStream({
        taskId: "s1",
        format: { version: "1.0", binding: "rest" } as StreamFormat,
        from: { snapshot: true },
        store,
        hub,
        snapshot: () => ({ task: store.read("s1") as never, seq: 0 }),
        keepAliveMs: 60_000,
        bufferBytes: 2048,
        pageSize: 10,
      });
      // 100 chunks of ~200 bytes while nobody reads.
      for (let i = 0; i < 100; i++) {
        const logged = store.putArtifact(
          "s1",
          {
            artifactId: "a",
            name: null,
            description: null,
            parts: [Parts.text(`chunk ${i} ${"x".repeat(150)}`)],
            metadata: {},
            kind: "result",
            timestamp: new Date().toISOString(),
            uri: null,
            mediaType: null,
            actionId: null,
          },
          { append: i > 0, lastChunk: false },
        );
        hub.emit("s1", [logged]);
      }
      const listening = hub.count("s1");
      return { body: await readAll(stream), listening };
    });
    expect(text.listening).toBe(0);
    expect(text.body.endsWith(DROPPED_COMMENT)).toBe(true);
    const frames = parseSse(text.body);
    // The snapshot and the chunks that fit in the buffer, then nothing more.
    expect(frames.length).toBeGreaterThan(2);
    expect(frames.length).toBeLessThan(30);
  });

  it("a resumed stream reads its backlog page by page and misses nothing (Last-Event-ID)", async () => {
    const result = await runInDurableObject(stubOf("backlog"), async (_i, state) => {
      ensureSchema(state.storage, CONTEXT_SCHEMA); // white-box: the schema a first write makes
      const store = new TaskStore(state.storage, new HistoryStore(state.storage));
      store.create(taskFixture("b1"), true);
      for (let i = 0; i < 25; i++) {
        store.statusMessage("b1", Messages.agent(`step ${i}`));
      }
      store.transition("b1", "completed");
      const log: string[] = [];
      const sql = state.storage.sql;
      const exec = sql.exec.bind(sql);
      Object.defineProperty(sql, "exec", {
        configurable: true,
        value: (q: string, ...args: SqlStorageValue[]) => {
          log.push(q);
          return exec(q, ...args);
        },
      });
      try {
        const stream = openTaskStream({
          taskId: "b1",
          format: { version: "1.0", binding: "rest" } as StreamFormat,
          from: { snapshot: false, afterSeq: 0 },
          store,
          hub: new EventHub(),
          snapshot: () => {
            throw new Error("no snapshot on resume");
          },
          keepAliveMs: 60_000,
          bufferBytes: 1024,
          pageSize: 4,
        });
        return {
          body: await readAll(stream),
          pages: log.filter((q) => /FROM events/.test(q)).length,
        };
      } finally {
        delete (sql as unknown as Record<string, unknown>).exec;
      }
    });
    const frames = parseSse(result.body);
    // working, 25 status messages, completed: all of them, in order, then the end.
    expect(frames).toHaveLength(27);
    const ids = frames.map((f) => f.id as number);
    expect([...ids].sort((a, b) => a - b)).toEqual(ids);
    expect(result.pages).toBe(7);
  });

  it("open streams per task are capped; the next is refused clearly", async () => {
    const first = await send("warm");
    const contextId = first.contextId as string;
    await withLimits(contextId, { maxSubscribersPerTask: 1 });
    const open = await SELF.fetch(`${BASE}/`, {
      method: "POST",
      headers: { "Content-Type": "application/json", "A2A-Version": "1.0" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "SendStreamingMessage",
        params: { message: userMessage("count 3", { contextId }) },
      }),
    });
    const reader = (open.body as ReadableStream<Uint8Array>).getReader();
    const firstChunk = new TextDecoder().decode((await reader.read()).value);
    const taskId = (((parseSse(firstChunk)[0] as { data: Json }).data.result as Json).task as Json)
      .id as string;
    const { body } = await rpc("SubscribeToTask", { id: taskId });
    expect(body.error).toMatchObject({
      message: expect.stringMatching(/already has 1 open streams/),
    });
    await reader.cancel();
    await rpc("CancelTask", { id: taskId });
  });
});

/** A task with a webhook config, its deliveries queued, and a dispatcher over `fetchFn`. */
function pushSetUp(state: DurableObjectState, env: Json = {}) {
  ensureSchema(state.storage, CONTEXT_SCHEMA); // white-box: the schema a first write makes
  const push = new PushStore(state.storage.sql);
  const store = new TaskStore(state.storage, new HistoryStore(state.storage), push);
  store.create(taskFixture("p1"), false, true);
  push.saveConfig({
    id: "cfg",
    taskId: "p1",
    url: "https://hooks.example.com/a2a",
    protocolVersion: "1.0",
    token: "tok",
  });
  const agent = resolveAgent({ card: { name: "p", description: "" }, push: {} });
  const dispatcher = (fetchFn: typeof fetch) =>
    new PushDispatcher(
      push,
      store,
      agent,
      env,
      () => "https://agent.example.com",
      (id) => store.read(id) as never,
      fetchFn,
    );
  return { push, store, dispatcher };
}

function receiver(statuses: number[]) {
  const got: string[] = [];
  const fetchFn = (async (_input: RequestInfo | URL, init?: RequestInit) => {
    got.push(String(init?.body));
    return new Response(null, { status: statuses.shift() ?? 200 });
  }) as typeof fetch;
  return { got, fetchFn };
}

describe("durable core: bounded push", () => {
  it("a config's first delivery carries the task as it was when registered, on every retry", async () => {
    const bodies = await runInDurableObject(stubOf("push-frozen"), async (_i, state) => {
      const { push, store, dispatcher } = pushSetUp(state);
      push.enqueue("p1", null, Date.now(), "cfg", JSON.stringify(store.read("p1")));
      // The task moves on before the first attempt, and between the attempts.
      store.transition("p1", "working");
      const { got, fetchFn } = receiver([503, 200, 200]);
      const d = dispatcher(fetchFn);
      await d.run();
      store.transition("p1", "completed");
      await d.run(Date.now() + 7 * 60 * 60_000);
      return got;
    });
    const snapshots = bodies.filter((b) => b.includes('"task"'));
    expect(snapshots).toHaveLength(2);
    expect(snapshots[0]).toBe(snapshots[1]);
    expect(snapshots[0]).toContain("TASK_STATE_SUBMITTED");
  });

  it("a first snapshot too big for one row is frozen across chunk rows, sent whole and identical on every retry, and its chunks go with its delivery", async () => {
    const result = await runInDurableObject(stubOf("push-frozen-big"), async (_i, state) => {
      const { push, store, dispatcher } = pushSetUp(state);
      // Two-byte characters: the JSON is 1.2 MB, three chunk rows' worth.
      store.statusMessage("p1", Messages.agent("é".repeat(600_000)));
      const frozen = JSON.stringify(store.read("p1"));
      push.enqueue("p1", null, Date.now(), "cfg", frozen);
      const chunkRows = () =>
        state.storage.sql
          .exec<{ n: number }>("SELECT COUNT(*) AS n FROM push_snapshot_chunks")
          .one().n;
      const stored = chunkRows();
      store.transition("p1", "working");
      const { got, fetchFn } = receiver([200, 503, 200, 200, 200]);
      const d = dispatcher(fetchFn);
      await d.run();
      store.statusMessage("p1", Messages.agent("changed before the retry"));
      await d.run(Date.now() + 7 * 60 * 60_000);
      return { frozen, stored, got, left: chunkRows() };
    });
    expect(result.stored).toBe(Math.ceil(result.frozen.length / CHUNK_CHARS) - 1);
    expect(result.stored).toBeGreaterThan(1);
    const snapshots = result.got.filter((b) => b.includes('"task"'));
    expect(snapshots).toHaveLength(2);
    expect(snapshots[1]).toBe(snapshots[0]);
    const sent = (JSON.parse(snapshots[0] as string) as { task: Json }).task;
    const status = sent.status as { message: { parts: { text: string }[] } };
    expect(status.message.parts[0]?.text).toBe("é".repeat(600_000));
    expect(result.left).toBe(0);
  });

  it("delivered rows are removed; dead letters are read a page at a time", async () => {
    const result = await runInDurableObject(stubOf("push-prune"), async (_i, state) => {
      const { push, store, dispatcher } = pushSetUp(state);
      store.transition("p1", "working");
      await dispatcher(receiver([200]).fetchFn).run();
      const left = state.storage.sql
        .exec<{ n: number }>("SELECT COUNT(*) AS n FROM push_deliveries")
        .one().n;
      for (let i = 0; i < 5; i++) store.statusMessage("p1", Messages.agent(`m${i}`));
      await dispatcher(receiver([400, 400, 400, 400, 400]).fetchFn).run();
      const first = push.dead("p1", { limit: 2 });
      const second = push.dead("p1", { after: first.at(-1)?.seq, limit: 2 });
      const third = push.dead("p1", { after: second.at(-1)?.seq, limit: 2 });
      return { left, pages: [first.length, second.length, third.length] };
    });
    expect(result.left).toBe(0);
    expect(result.pages).toEqual([2, 2, 1]);
  });

  it("a bad PUSH_SIGNING_KEYS dead-letters with a clear error instead of retrying forever", async () => {
    const result = await runInDurableObject(stubOf("push-badkey"), async (_i, state) => {
      const { push, store, dispatcher } = pushSetUp(state, { PUSH_SIGNING_KEYS: "not a JWK" });
      store.transition("p1", "working");
      const { got, fetchFn } = receiver([200]);
      const next = await dispatcher(fetchFn).run();
      return { next, sent: got.length, dead: push.dead("p1").map((d) => d.lastError) };
    });
    expect(result.sent).toBe(0);
    expect(result.next).toBeNull();
    expect(result.dead).toHaveLength(1);
    expect(result.dead[0]).toMatch(/^PUSH_SIGNING_KEYS is not usable: /);
  });

  it("push configs per task are capped (limits.maxPushConfigsPerTask)", async () => {
    const task = await send("hook me many times");
    await withLimits(task.contextId as string, { maxPushConfigsPerTask: 2 });
    const create = (n: number) =>
      rpc("CreateTaskPushNotificationConfig", {
        taskId: task.id,
        id: `c${n}`,
        url: `https://hooks.example.com/${n}`,
      });
    expect((await create(1)).body.result).toBeDefined();
    expect((await create(2)).body.result).toBeDefined();
    const third = await create(3);
    expect(third.body.error).toMatchObject({
      code: -32602,
      message: expect.stringMatching(/already has 2 push notification configs, the limit/),
    });
    // Replacing an existing config is not a new one.
    expect((await create(2)).body.result).toBeDefined();
  });
});

describe("durable core: retention", () => {
  it("retention's next due time follows tasks as they finish, without reading the table again", async () => {
    const due = await runInDurableObject(stubOf("retention-due"), (_i, state) => {
      ensureSchema(state.storage, CONTEXT_SCHEMA); // white-box: the schema a first write makes
      const store = new TaskStore(state.storage, new HistoryStore(state.storage));
      const day = 86_400_000;
      const before = store.retention.due(2, day); // read once: nothing finished
      for (const id of ["r1", "r2", "r3"]) {
        store.create(taskFixture(id), true);
        store.transition(id, "completed");
      }
      const overLimit = store.retention.due(2, day);
      const underLimit = store.retention.due(5, day);
      // Read after the answers: "due now" is the clock when asked, and a loaded run's clock
      // moved a millisecond between an earlier read and the question.
      return { before, overLimit, underLimit, now: Date.now() };
    });
    expect(due.before).toBeNull();
    // Three finished, two kept: due now.
    expect(due.overLimit).toBeLessThanOrEqual(due.now);
    // Under the limit: due when the oldest finished task is a day old.
    expect(due.underLimit).toBeGreaterThan(due.now + 86_400_000 - 60_000);
  });

  it("the alarm prunes finished tasks beyond the limit; storage shrinks, recent tasks stay whole", async () => {
    const first = await send("task 0");
    const contextId = first.contextId as string;
    const ids = [first.id as string];
    for (let i = 1; i < 8; i++) ids.push((await send(`task ${i}`, { contextId })).id as string);
    await withLimits(contextId, { retainFinishedTasks: 3 });
    const measure = () =>
      runInDurableObject(stubOf(contextId), (_i, state) => {
        const sql = state.storage.sql;
        const n = (q: string) => sql.exec<{ n: number }>(q).one().n;
        return {
          tasks: n("SELECT COUNT(*) AS n FROM tasks"),
          events: n("SELECT COUNT(*) AS n FROM events"),
          parts: n("SELECT COUNT(*) AS n FROM artifact_parts"),
          bytes: n(
            `SELECT (SELECT COALESCE(SUM(LENGTH(body)), 0) FROM events)
                  + (SELECT COALESCE(SUM(LENGTH(body)), 0) FROM artifact_parts)
                  + (SELECT COALESCE(SUM(LENGTH(header)), 0) FROM artifacts)
                  + (SELECT COALESCE(SUM(LENGTH(state_history) + LENGTH(metadata)), 0) FROM tasks) AS n`,
          ),
          history: n("SELECT COUNT(*) AS n FROM history_items"),
        };
      });
    const before = await measure();
    expect(await runDurableObjectAlarm(stubOf(contextId))).toBe(true);
    const after = await measure();
    expect(before.tasks).toBe(8);
    expect(after.tasks).toBe(3);
    expect(after.events).toBe((before.events / 8) * 3);
    expect(after.parts).toBe((before.parts / 8) * 3);
    expect(after.bytes).toBeLessThan(before.bytes / 2);
    // The conversation itself is not retention's to cut.
    expect(after.history).toBe(before.history);
    // Pruned: not found. Kept: whole, and listed with stable pages.
    expect((await rpc("GetTask", { id: ids[0] })).body.error).toMatchObject({ code: -32001 });
    const kept = (await rpc("GetTask", { id: ids[7] })).body.result as Json;
    expect((kept.artifacts as unknown[]).length).toBe(1);
    const page1 = (await rpc("ListTasks", { contextId, pageSize: 2 })).body.result as Json;
    const page2 = (
      await rpc("ListTasks", { contextId, pageSize: 2, pageToken: page1.nextPageToken })
    ).body.result as Json;
    const listed = [...(page1.tasks as Json[]), ...(page2.tasks as Json[])].map((t) => t.id);
    expect(listed).toEqual([ids[7], ids[6], ids[5]]);
    // The tenant index forgot them too.
    const index = indexShardStub(contextId);
    const indexed = await runInDurableObject(index, (_i, state) =>
      state.storage.sql
        .exec<{ task_id: string }>("SELECT task_id FROM task_index WHERE context_id = ?", contextId)
        .toArray()
        .map((r) => r.task_id),
    );
    expect(indexed.sort()).toEqual([ids[5], ids[6], ids[7]].sort());
  });
});
