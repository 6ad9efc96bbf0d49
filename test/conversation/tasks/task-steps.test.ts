import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { ContextRpc } from "../../../src/conversation/context-object";
import { HistoryStore } from "../../../src/conversation/history/history-store";
import {
  MAX_DELEGATIONS_SHOWN,
  MAX_PUSH_ATTEMPTS_SHOWN,
  TaskSteps,
} from "../../../src/conversation/tasks/task-steps";
import { TaskStore } from "../../../src/conversation/tasks/task-store";
import { Messages } from "../../../src/protocol/message";
import { contextObjectName } from "../../../src/storage/ids";
import { CONTEXT_SCHEMA } from "../../../src/storage/schema";
import { ensureSchema } from "../../../src/storage/schema-version";
import { sleep, userMessage } from "../../support/helpers";
import {
  ALICE,
  authedAgent,
  BOB,
  call,
  rpcAs,
  signingKey,
  type Worker,
} from "../../worker/auth-support";

type Json = Record<string, unknown>;
const HOOK = "https://hooks.example.com/steps";
/** The owner the API key scheme gives alice (see `ownerOf`), in her tenant. */
const ALICE_OWNER = JSON.stringify(["apiKey", "", "alice"]);

const stubOf = (contextId: string) => {
  const ns = env.EDGELINK_CONTEXT;
  return ns.get(ns.idFromName(contextObjectName("acme", contextId, ALICE_OWNER)));
};

/** A webhook receiver installed on a live context object's dispatcher (white-box). */
async function receiveWebhooks(contextId: string): Promise<{ url: string; body: string }[]> {
  const got: { url: string; body: string }[] = [];
  await runInDurableObject(stubOf(contextId), (instance) => {
    const dispatcher = (instance as unknown as { dispatcher: object }).dispatcher;
    Object.defineProperty(dispatcher, "fetchFn", {
      configurable: true,
      value: async (input: RequestInfo | URL, init?: RequestInit) => {
        const request = new Request(input, init);
        got.push({ url: request.url, body: await request.text() });
        return new Response(null, { status: 200 });
      },
    });
  });
  return got;
}

async function until(done: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 400 && !done(); i++) await sleep(25);
  if (!done()) throw new Error(`never happened: ${what}`);
}

/**
 * Alice's task on `worker`, answered, with one webhook given inline and delivered: the
 * task, what the receiver got, and the receiver.
 */
async function pushedTask(worker: Worker) {
  const send = async (text: string, extra: Json = {}, configuration?: Json) => {
    const { body } = await rpcAs(worker, ALICE, "SendMessage", {
      message: userMessage(text, extra),
      ...(configuration ? { configuration } : {}),
    });
    if (!body.result) throw new Error(JSON.stringify(body.error));
    return (body.result as { task: Json }).task;
  };
  const first = await send("warm up");
  const contextId = first.contextId as string;
  const got = await receiveWebhooks(contextId);
  const task = await send(
    "steps please",
    { contextId },
    { taskPushNotificationConfig: { id: "first", url: `${HOOK}/first`, token: "tok" } },
  );
  await until(() => got.some((g) => g.body.includes("TASK_STATE_COMPLETED")), "completed pushed");
  return { task, contextId, got };
}

const stepsOf = async (worker: Worker, taskId: string, headers: Record<string, string> = ALICE) => {
  const response = await call(
    worker,
    "GET",
    `/inspector/tasks/${encodeURIComponent(taskId)}/steps`,
    {
      headers,
    },
  );
  return { status: response.status, body: (await response.json()) as Json };
};

const stepRows = (contextId: string) =>
  runInDurableObject(
    stubOf(contextId),
    (_i, state) =>
      state.storage.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM task_steps").one().n,
  );

describe("a task's steps stay out of the task: only the owner's inspector reads them", () => {
  it("with the inspector on, webhook attempts are in the owner's steps; a receiver's snapshot and GetTask carry none; another owner gets not found", async () => {
    const worker = authedAgent(await signingKey(), { inspector: true });
    const { task, contextId, got } = await pushedTask(worker);
    const taskId = task.id as string;

    // A second receiver registered after the first one's attempts: its first delivery is
    // the task as it is now, which says nothing of the other receiver.
    const created = await rpcAs(worker, ALICE, "CreateTaskPushNotificationConfig", {
      taskId,
      id: "second",
      url: `${HOOK}/second`,
    });
    expect(created.body.result).toBeDefined();
    await until(() => got.some((g) => g.url.endsWith("/second")), "second receiver's snapshot");
    const snapshot = got.find((g) => g.url.endsWith("/second"))?.body ?? "";
    expect(snapshot).toContain(taskId);
    for (const { body } of got) {
      expect(body).not.toContain("pushAttempts");
      expect(body).not.toContain("delegations");
      expect(body).not.toContain(`${HOOK}/first`);
    }

    const read = await rpcAs(worker, ALICE, "GetTask", { id: taskId });
    const metadata = ((read.body.result as Json).metadata ?? {}) as Json;
    expect(metadata.pushAttempts).toBeUndefined();
    expect(metadata.delegations).toBeUndefined();
    const listed = await rpcAs(worker, ALICE, "ListTasks", { contextId });
    expect(JSON.stringify(listed.body.result)).not.toContain("pushAttempts");

    // The owner's inspector: each attempt, with its config, timing and answer.
    const own = await stepsOf(worker, taskId);
    expect(own.status).toBe(200);
    expect(own.body.taskId).toBe(taskId);
    expect(own.body.delegations).toEqual([]);
    // The webhook health is the owner's too: read from the push tables when asked.
    expect(own.body.push).toEqual({ unhealthyConfigs: [], skippedEvents: 0, deadLetters: 0 });
    const attempts = own.body.pushAttempts as Json[];
    expect(attempts.map((a) => a.config)).toEqual(expect.arrayContaining(["first", "second"]));
    for (const attempt of attempts) {
      expect(attempt).toEqual({
        config: expect.any(String),
        at: expect.any(Number),
        ms: expect.any(Number),
        status: 200,
        ok: true,
      });
    }

    // Bob (same tenant, another owner) and a forged id: not found, as GetTask answers.
    const bob = await stepsOf(worker, taskId, BOB);
    expect(bob.status).toBe(404);
    expect(JSON.stringify(bob.body)).toContain("TASK_NOT_FOUND");
    expect((await rpcAs(worker, BOB, "GetTask", { id: taskId })).body.error).toMatchObject({
      code: -32001,
    });
    expect((await stepsOf(worker, `${taskId}x`)).status).toBe(404);
    // An id longer than any issued is refused naming it, as GetTask refuses it.
    const long = await stepsOf(worker, "x".repeat(5000));
    expect(long.status).toBe(400);
    expect(JSON.stringify(long.body)).toContain('"field":"id"');
    // The object itself: a task it does not hold, or an object never written, is not found
    // (and the read makes no storage).
    const scope = { tenant: "acme", contextId, owner: ALICE_OWNER };
    const rpcOf = (stub: DurableObjectStub) => stub as unknown as ContextRpc;
    expect(await rpcOf(stubOf(contextId)).getTaskSteps(scope, "t-unknown")).toMatchObject({
      ok: false,
      error: { kind: "TaskNotFound" },
    });
    const never = stubOf(`never-${crypto.randomUUID()}`);
    expect(await rpcOf(never).getTaskSteps(scope, taskId)).toMatchObject({
      ok: false,
      error: { kind: "TaskNotFound" },
    });
    const tables = await runInDurableObject(
      never,
      (_i, state) =>
        state.storage.sql
          .exec<{ n: number }>(
            "SELECT COUNT(*) AS n FROM sqlite_master WHERE name NOT GLOB '_cf_*'",
          )
          .one().n,
    );
    expect(tables).toBe(0);
    // No credential: refused before anything is read.
    expect((await stepsOf(worker, taskId, {})).status).toBe(401);
  });

  it("with the inspector off, the route is not there and the object writes no steps", async () => {
    const worker = authedAgent(await signingKey(), { inspector: false });
    const { task, contextId } = await pushedTask(worker);
    const off = await stepsOf(worker, task.id as string);
    expect(off.status).toBe(404);
    expect(JSON.stringify(off.body)).toContain("METHOD_NOT_FOUND");
    expect(await stepRows(contextId)).toBe(0);
  });
});

describe("TaskSteps: bounded lists, one row per task, gone with its task", () => {
  const task = (id: string) => ({
    id,
    contextId: "c1",
    status: { state: "submitted" as const, message: null, timestamp: new Date().toISOString() },
    history: [Messages.user("hi")],
    artifacts: [],
    metadata: {},
    stateHistory: [],
    createdAt: new Date().toISOString(),
    flowState: {},
  });

  it("keeps the latest delegations and attempts, writes nothing while off or for a task it does not hold, and drops a task's row with the task", async () => {
    const ns = env.EDGELINK_CONTEXT;
    const stub = ns.get(ns.idFromName(`task-steps-${crypto.randomUUID()}`));
    const result = await runInDurableObject(stub, (_i, state) => {
      ensureSchema(state.storage, CONTEXT_SCHEMA); // white-box: the schema a first write makes
      const sql = state.storage.sql;
      const store = new TaskStore(state.storage, new HistoryStore(state.storage), null);
      store.create(task("t1"));
      store.create(task("t2"));
      let on: boolean | null = false;
      const steps = new TaskSteps(sql, () => on);
      const rows = () => sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM task_steps").one().n;

      steps.noteDelegation("t1", { key: "1", target: "https://other.example" });
      steps.noteAttempt("t1", { config: "c", at: 1, ms: 2, status: 200, ok: true });
      const whileOff = rows();
      // Left to the localhost default, the latest request decides.
      on = null;
      steps.seen({ tenant: "", contextId: "c1", inspector: true });
      steps.noteDelegation("t1", { key: "0", target: "binding:DEMO" }, 1000);
      steps.seen({ tenant: "", contextId: "c1" });
      steps.noteDelegation("t1", { key: "x", target: "binding:DEMO" }, 1000);
      const afterDefault = steps.read("t1").delegations.length;

      on = true;
      for (let i = 1; i <= MAX_DELEGATIONS_SHOWN + 3; i++) {
        steps.noteDelegation("t1", { key: String(i), target: "binding:DEMO" }, 1000 + i);
      }
      steps.noteDelegation("t1", { key: "10", childTaskId: "child-10", state: "completed" }, 2000);
      for (let i = 0; i < MAX_PUSH_ATTEMPTS_SHOWN + 3; i++) {
        steps.noteAttempt("t1", { config: "c", at: i, ms: 1, status: null, ok: false });
      }
      steps.noteAttempt("gone", { config: "c", at: 1, ms: 1, ok: true });
      steps.noteAttempt("t2", { config: "c", at: 1, ms: 1, ok: true });
      const t1 = steps.read("t1");
      const before = rows();
      sql.exec("DELETE FROM tasks WHERE id = 't2'");
      return { whileOff, afterDefault, t1, before, after: rows(), unknown: steps.read("gone") };
    });
    expect(result.whileOff).toBe(0);
    expect(result.afterDefault).toBe(1);
    expect(result.t1.delegations).toHaveLength(MAX_DELEGATIONS_SHOWN);
    expect(result.t1.delegations.at(-1)).toMatchObject({ key: String(MAX_DELEGATIONS_SHOWN + 3) });
    expect(result.t1.delegations.find((d) => d.key === "10")).toEqual({
      key: "10",
      at: 1010,
      target: "binding:DEMO",
      childTaskId: "child-10",
      state: "completed",
      ms: 990,
    });
    expect(result.t1.pushAttempts).toHaveLength(MAX_PUSH_ATTEMPTS_SHOWN);
    expect(result.t1.pushAttempts[0]).toEqual({ config: "c", at: 3, ms: 1, ok: false });
    expect(result.before).toBe(2);
    expect(result.after).toBe(1);
    expect(result.unknown).toEqual({
      taskId: "gone",
      delegations: [],
      pushAttempts: [],
      approvals: [],
    });
  });
});
