import { env, runInDurableObject, SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { resolveAgent } from "../../../src/agent/definition";
import { HistoryStore } from "../../../src/conversation/history/history-store";
import { PushDispatcher } from "../../../src/conversation/push/push-dispatcher";
import { PushStore } from "../../../src/conversation/push/push-store";
import { TaskStore } from "../../../src/conversation/tasks/task-store";
import { Messages } from "../../../src/protocol/message";
import { verifyPushNotification } from "../../../src/push/verify";
import { contextObjectName } from "../../../src/storage/ids";
import { CONTEXT_SCHEMA } from "../../../src/storage/schema";
import { ensureSchema } from "../../../src/storage/schema-version";
import { rest, rpc, send, userMessage } from "../../support/helpers";

type Json = Record<string, unknown>;
const HOOK = "https://hooks.example.com/a2a";

function stubOf(name: string) {
  const ns = env.EDGELINK_CONTEXT;
  return ns.get(ns.idFromName(contextObjectName("", name)));
}

/** A webhook receiver that answers from a script and records what it got. */
function receiver(statuses: number[]) {
  const got: Request[] = [];
  const fetchFn = (async (input: RequestInfo | URL, init?: RequestInit) => {
    got.push(new Request(input, init));
    return new Response(null, { status: statuses.shift() ?? 200 });
  }) as typeof fetch;
  return { got, fetchFn };
}

/** A task with two events queued for one webhook, in a fresh object's own tables. */
function setUp(state: DurableObjectState, maxAttempts = 12) {
  const push = new PushStore(state.storage.sql);
  const store = new TaskStore(state.storage, new HistoryStore(state.storage), push);
  const task = {
    id: "t1",
    contextId: "c1",
    status: { state: "submitted" as const, message: null, timestamp: new Date().toISOString() },
    history: [Messages.user("hi")],
    artifacts: [],
    metadata: {},
    stateHistory: [],
    createdAt: new Date().toISOString(),
    flowState: {},
  };
  store.create(task);
  push.saveConfig({ id: "cfg", taskId: "t1", url: HOOK, protocolVersion: "1.0", token: "tok" });
  store.transition("t1", "working");
  store.transition("t1", "completed", { message: Messages.agent("done") });
  const agent = resolveAgent({ card: { name: "p", description: "" }, push: { maxAttempts } });
  const dispatcher = (fetchFn: typeof fetch) =>
    new PushDispatcher(
      push,
      store,
      agent,
      {},
      () => "https://agent.example.com",
      (id) => {
        const read = store.read(id);
        if (!read) throw new Error("no task");
        return read;
      },
      fetchFn,
    );
  return { push, store, dispatcher };
}

describe("webhook delivery (issue 5)", () => {
  it("queues one delivery per event in the event's own transaction, and sends them in order", async () => {
    const result = await runInDurableObject(stubOf("push-order"), async (_i, state) => {
      ensureSchema(state.storage, CONTEXT_SCHEMA); // white-box: the schema a first write makes
      const { push, dispatcher } = setUp(state);
      const queued = push.heads().length;
      const { got, fetchFn } = receiver([200, 200]);
      const next = await dispatcher(fetchFn).run();
      const bodies = await Promise.all(got.map((r) => r.clone().json()));
      return { queued, next, bodies, headers: got.map((r) => Object.fromEntries(r.headers)) };
    });
    expect(result.queued).toBe(1);
    expect(result.next).toBeNull();
    expect(result.bodies.map((b) => ((b as Json).statusUpdate as Json).status)).toMatchObject([
      { state: "TASK_STATE_WORKING" },
      { state: "TASK_STATE_COMPLETED" },
    ]);
    const h = result.headers[0] as Record<string, string>;
    expect(h["content-type"]).toBe("application/a2a+json");
    expect(h["x-a2a-notification-token"]).toBe("tok");
    expect(h["x-a2a-event-id"]).toMatch(/^t1~\d+$/);
    expect(h["x-a2a-signature"]?.split(".")).toHaveLength(3);
  });

  it("a failing receiver holds back later events, then gets each once, in order", async () => {
    const result = await runInDurableObject(stubOf("push-retry"), async (_i, state) => {
      ensureSchema(state.storage, CONTEXT_SCHEMA); // white-box: the schema a first write makes
      const { push, dispatcher } = setUp(state);
      const { got, fetchFn } = receiver([500, 503, 500, 200, 200]);
      const d = dispatcher(fetchFn);
      let now = Date.now();
      for (let round = 0; round < 6 && push.nextDue() !== null; round++) {
        await d.run(now);
        now += 7 * 60 * 60_000; // past any backoff (max delay 6 h)
      }
      const states = await Promise.all(
        got.map(async (r) => (((await r.clone().json()) as Json).statusUpdate as Json).status),
      );
      const ids = got.map((r) => r.headers.get("x-a2a-event-id"));
      return { states, ids, pending: push.nextDue() };
    });
    expect(result.pending).toBeNull();
    expect(result.states.map((s) => (s as Json).state)).toEqual([
      "TASK_STATE_WORKING",
      "TASK_STATE_WORKING",
      "TASK_STATE_WORKING",
      "TASK_STATE_WORKING",
      "TASK_STATE_COMPLETED",
    ]);
    // Retries of one event carry the same event id (receivers drop duplicates by it).
    expect(new Set(result.ids.slice(0, 4)).size).toBe(1);
    expect(result.ids[4]).not.toBe(result.ids[0]);
  });

  it("past its attempts a delivery is dead-lettered, the next event goes on, and it can be redelivered", async () => {
    const result = await runInDurableObject(stubOf("push-dead"), async (_i, state) => {
      ensureSchema(state.storage, CONTEXT_SCHEMA); // white-box: the schema a first write makes
      const { push, store, dispatcher } = setUp(state, 2);
      const d = dispatcher(receiver([500, 500, 200]).fetchFn);
      let now = Date.now();
      for (let round = 0; round < 4 && push.nextDue() !== null; round++) {
        await d.run(now);
        now += 7 * 60 * 60_000;
      }
      const dead = push.dead("t1");
      const taskState = store.state("t1");
      const metadata = store.read("t1")?.metadata;
      const again = push.redeliver("t1", Date.now());
      const retry = receiver([200]);
      await dispatcher(retry.fetchFn).run();
      return {
        dead,
        taskState,
        metadata,
        again,
        redelivered: retry.got.length,
        after: push.dead("t1"),
      };
    });
    expect(result.dead).toHaveLength(1);
    expect(result.dead[0]).toMatchObject({
      attempts: 2,
      lastError: expect.stringContaining("500"),
    });
    expect(result.taskState).toBe("completed");
    // Counted by the dead-letter API (the owner's), not in the task every receiver gets.
    expect(result.metadata?.pushDeadLetters).toBeUndefined();
    expect(result.again).toBe(1);
    expect(result.redelivered).toBe(1);
    expect(result.after).toEqual([]);
  });

  it("a restart between attempts loses nothing: a new object resumes the outbox, same event ids", async () => {
    const result = await runInDurableObject(stubOf("push-restart"), async (_i, state) => {
      ensureSchema(state.storage, CONTEXT_SCHEMA); // white-box: the schema a first write makes
      const first = setUp(state);
      const failing = receiver([500]);
      await first.dispatcher(failing.fetchFn).run();
      const failedId = failing.got[0]?.headers.get("x-a2a-event-id");
      // What a fresh instance after a restart has: only the storage.
      const push = new PushStore(state.storage.sql);
      const store = new TaskStore(state.storage, new HistoryStore(state.storage), push);
      const agent = resolveAgent({ card: { name: "p", description: "" }, push: {} });
      const later = receiver([200, 200]);
      const fresh = new PushDispatcher(
        push,
        store,
        agent,
        {},
        () => "https://agent.example.com",
        (id) => store.read(id) as never,
        later.fetchFn,
      );
      await fresh.run(Date.now() + 7 * 60 * 60_000);
      return {
        failedId,
        ids: later.got.map((r) => r.headers.get("x-a2a-event-id")),
        pending: push.nextDue(),
      };
    });
    expect(result.ids).toHaveLength(2);
    expect(result.ids[0]).toBe(result.failedId);
    expect(result.pending).toBeNull();
  });

  it("a 410 Gone disables the config: dead-lettered at once, nothing more sent to it", async () => {
    const result = await runInDurableObject(stubOf("push-gone"), async (_i, state) => {
      ensureSchema(state.storage, CONTEXT_SCHEMA); // white-box: the schema a first write makes
      const { push, dispatcher } = setUp(state);
      const { got, fetchFn } = receiver([410, 200]);
      const next = await dispatcher(fetchFn).run();
      return {
        dead: push.dead("t1").map((d) => d.lastError),
        sent: got.length,
        config: push.config("t1", "cfg"),
        next,
      };
    });
    expect(result.sent).toBe(1);
    expect(result.config).toBeNull();
    expect(result.next).toBeNull();
    expect(result.dead).toHaveLength(2);
    expect(result.dead[1]).toMatch(/410.*config removed/);
  });

  it("deliveries verify with the receiver helper against the agent's JWKS", async () => {
    const req = await runInDurableObject(stubOf("push-verify"), async (_i, state) => {
      ensureSchema(state.storage, CONTEXT_SCHEMA); // white-box: the schema a first write makes
      const { dispatcher } = setUp(state);
      const { got, fetchFn } = receiver([200, 200]);
      await dispatcher(fetchFn).run();
      const first = got[0] as Request;
      return { url: first.url, headers: [...first.headers], body: await first.text() };
    });
    const jwks = await rest("GET", "/.well-known/jwks.json");
    expect((jwks.body.keys as Json[])[0]).toMatchObject({ kty: "EC", alg: "ES256", use: "sig" });
    const request = new Request(req.url, { method: "POST", headers: req.headers, body: req.body });
    const verified = await verifyPushNotification(request, {
      keys: jwks.body as never,
      audience: HOOK,
    });
    expect(verified.taskId).toBe("t1");
    expect(verified.event.kind).toBe("status-update");
    const tampered = new Request(req.url, {
      method: "POST",
      headers: req.headers,
      body: req.body.replace("WORKING", "FAILED"),
    });
    await expect(
      verifyPushNotification(tampered, { keys: jwks.body as never, audience: HOOK }),
    ).rejects.toThrow();
  });
});

describe("push config API", () => {
  it("creates, reads, lists and deletes configs over HTTP+JSON; refused URLs store nothing", async () => {
    const task = await send("hook", {}, { returnImmediately: true });
    const base = `/tasks/${task.id}/pushNotificationConfigs`;
    const created = await rest("POST", base, {
      url: HOOK,
      token: "t0k",
      authentication: { scheme: "Bearer", credentials: "s3cret" },
    });
    expect(created.status).toBe(200);
    // Token and credentials are secrets shared with the webhook: never read back.
    const secret = {
      token: "********",
      authentication: { scheme: "Bearer", credentials: "********" },
    };
    expect(created.body).toMatchObject({ taskId: task.id, url: HOOK, ...secret });
    const id = created.body.id as string;
    const read = await rest("GET", `${base}/${id}`);
    expect(read.body).toMatchObject({ id, url: HOOK, ...secret });
    const listed = await rest("GET", base);
    expect((listed.body.configs as Json[]).map((c) => c.id)).toEqual([id]);
    expect(JSON.stringify(listed.body)).not.toMatch(/t0k|s3cret/);

    const refused = await rest("POST", base, { url: "https://10.0.0.1/hook" });
    expect(refused.status).toBe(400);
    expect(JSON.stringify(refused.body)).toContain("url");
    expect(((await rest("GET", base)).body.configs as Json[]).length).toBe(1);

    expect((await rest("DELETE", `${base}/${id}`)).status).toBe(200);
    expect((await rest("DELETE", `${base}/${id}`)).status).toBe(200);
    expect((await rest("GET", `${base}/${id}`)).status).toBe(404);
  });

  it("lists and redelivers dead letters (JSON-RPC and HTTP+JSON)", async () => {
    const task = await send("no dead letters yet");
    const listed = await rest("GET", `/tasks/${task.id}/deadLetters`);
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual({ deliveries: [] });
    const again = await rest("POST", `/tasks/${task.id}/deadLetters:redeliver`);
    expect(again.body).toEqual({ redelivered: 0 });
    const viaRpc = await rpc("ListDeadPushDeliveries", { id: task.id });
    expect(viaRpc.body.result).toEqual({ deliveries: [] });
    expect((await rest("GET", "/tasks/nope/deadLetters")).status).toBe(404);
  });

  it("an inline http://localhost webhook over JSON-RPC: taken when the agent is served from localhost, refused elsewhere", async () => {
    const sendAt = async (origin: string) => {
      const response = await SELF.fetch(`${origin}/`, {
        method: "POST",
        headers: { "Content-Type": "application/json", "A2A-Version": "1.0" },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "SendMessage",
          params: {
            message: userMessage(`hook at ${origin}`),
            configuration: { taskPushNotificationConfig: { url: "http://localhost:8788/hook" } },
          },
        }),
      });
      return (await response.json()) as Json;
    };
    const local = await sendAt("http://localhost:8787");
    expect(local.error).toBeUndefined();
    expect((local.result as Json).task).toBeDefined();
    const remote = await sendAt("http://agent.test");
    expect((remote.error as Json).code).toBe(-32602);
    expect(JSON.stringify(remote.error)).toContain("taskPushNotificationConfig");
  });

  it("accepts a config inline in SendMessage (v1 taskPushNotificationConfig)", async () => {
    const sent = await rest("POST", "/message:send", {
      message: userMessage("inline hook"),
      configuration: { taskPushNotificationConfig: { url: HOOK } },
    });
    const taskId = (sent.body.task as Json).id as string;
    const listed = await rest("GET", `/tasks/${taskId}/pushNotificationConfigs`);
    expect((listed.body.configs as Json[])[0]).toMatchObject({ taskId, url: HOOK });
    const bad = await rest("POST", "/message:send", {
      message: userMessage("bad hook"),
      configuration: { taskPushNotificationConfig: { url: "http://example.com/x" } },
    });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toContain('"configuration.taskPushNotificationConfig');
    expect(JSON.stringify(bad.body)).not.toContain("params.");
  });
});
