import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { LIMITS } from "../../../src/protocol/limits";
import { BASE, rest, rpc, send, userMessage } from "../../support/helpers";

/**
 * A task id is the Worker's sealed part, a `.` and the task's row key, added by the object.
 * The key is not sealed: the object finds the row by it and keeps it only if the row's id
 * is the whole id presented. Every id altered around that key must be a task not found
 * (or, past the length limit, a refusal naming the field), never a 5xx, on every route
 * that names a task.
 */

type Json = Record<string, unknown>;

const HOOK = { url: "https://hooks.example.com/task-ids", id: "cfg" };

/** Two tasks of one conversation, and the first of another of two; their ids and keys. */
async function tasks() {
  const a = await send("first");
  const contextId = a.contextId as string;
  const b = await send("second", { contextId });
  const c = await send("elsewhere");
  // The other conversation holds a row at b's key too (its second task).
  await send("elsewhere again", { contextId: c.contextId });
  const split = (t: Json) => {
    const id = t.id as string;
    const at = id.indexOf(".");
    return { id, sealed: id.slice(0, at), key: id.slice(at + 1) };
  };
  return { a: split(a), b: split(b), c: split(c), contextId };
}

function forgeries(t: Awaited<ReturnType<typeof tasks>>): [string, string][] {
  const { a, b, c } = t;
  expect(b.key).not.toBe(c.key);
  return [
    ["another task's key in the same conversation", `${a.sealed}.${b.key}`],
    ["the key removed", a.sealed],
    ["a key added after the key", `${a.id}.${a.key}`],
    ["a suffix that is not a number", `${a.sealed}.abc`],
    ["a negative key", `${a.sealed}.-${a.key}`],
    ["a leading zero", `${a.sealed}.0${a.key}`],
    ["a key too long", `${a.sealed}.${"9".repeat(16)}`],
    ["an empty key", `${a.sealed}.`],
    // b's key names a row in c's conversation too, whose id is another.
    ["another conversation's id with this one's key", `${c.sealed}.${b.key}`],
  ];
}

const NOT_FOUND_RPC = -32001;

describe("task ids carry their row's key: altered ones find nothing", () => {
  it("B12: ids the Worker issues end with the task's key, and answer GetTask over both bindings", async () => {
    const { a, b, contextId } = await tasks();
    expect(a.id).toMatch(/^[A-Za-z0-9_-]+\.[1-9][0-9]*$/);
    expect(Number(b.key)).toBeGreaterThan(Number(a.key));
    const got = await rpc("GetTask", { id: a.id });
    expect((got.body.result as Json).id).toBe(a.id);
    expect((got.body.result as Json).contextId).toBe(contextId);
    const viaRest = await rest("GET", `/tasks/${a.id}`);
    expect(viaRest.status).toBe(200);
    expect(viaRest.body.id).toBe(a.id);
    // A follow-up names the task by that id and continues it.
    const follow = await rpc("SendMessage", {
      message: userMessage("again", { taskId: a.id, contextId }),
    });
    expect(JSON.stringify(follow.body.error ?? {})).not.toContain("not found");
  });

  it("B12: each altered id is TaskNotFound on GetTask, CancelTask, SendMessage, SubscribeToTask and the push config routes (JSON-RPC)", async () => {
    const t = await tasks();
    for (const [why, id] of forgeries(t)) {
      const calls: [string, unknown][] = [
        ["GetTask", { id }],
        ["CancelTask", { id }],
        ["SendMessage", { message: userMessage("forged", { taskId: id }) }],
        ["SubscribeToTask", { id }],
        ["ListTaskPushNotificationConfigs", { taskId: id }],
        ["GetTaskPushNotificationConfig", { taskId: id, id: "cfg" }],
        ["CreateTaskPushNotificationConfig", { taskId: id, ...HOOK }],
        ["DeleteTaskPushNotificationConfig", { taskId: id, id: "cfg" }],
      ];
      for (const [method, params] of calls) {
        const { status, body } = await rpc(method, params);
        const error = body.error as Json | undefined;
        expect(status, `${method}: ${why}`).toBeLessThan(500);
        expect(error?.code, `${method}: ${why}: ${JSON.stringify(body)}`).toBe(NOT_FOUND_RPC);
      }
    }
    // Nothing was changed through them: both real tasks answer as before.
    for (const id of [t.a.id, t.b.id]) {
      const got = await rpc("GetTask", { id });
      expect((got.body.result as Json).id).toBe(id);
    }
  });

  it("B12: each altered id is 404 TASK_NOT_FOUND on the HTTP+JSON routes", async () => {
    const t = await tasks();
    for (const [why, id] of forgeries(t)) {
      const path = `/tasks/${encodeURIComponent(id)}`;
      const calls: [string, string, unknown?][] = [
        ["GET", path],
        ["POST", `${path}:cancel`, {}],
        ["GET", `${path}:subscribe`],
        ["GET", `${path}/pushNotificationConfigs`],
        ["POST", `${path}/pushNotificationConfigs`, HOOK],
        ["GET", `${path}/pushNotificationConfigs/cfg`],
        ["DELETE", `${path}/pushNotificationConfigs/cfg`],
        ["POST", "/message:send", { message: userMessage("forged", { taskId: id }) }],
      ];
      for (const [method, route, body] of calls) {
        const answer = await rest(method, route, body);
        expect(answer.status, `${method} ${route}: ${why}`).toBe(404);
        expect(JSON.stringify(answer.body), `${method} ${route}`).toContain("TASK_NOT_FOUND");
      }
    }
  });

  it("B12: an id past the length limit is refused naming the field, not looked up", async () => {
    const { a } = await tasks();
    const long = `${a.sealed}.${"1".repeat(LIMITS.taskIdLength)}`;
    const { status, body } = await rpc("GetTask", { id: long });
    expect(status).toBeLessThan(500);
    const error = body.error as Json;
    expect([-32602, NOT_FOUND_RPC]).toContain(error.code);
    if (error.code === -32602) expect(JSON.stringify(error)).toContain("id");
    const response = await SELF.fetch(`${BASE}/tasks/${long}`, {
      headers: { "A2A-Version": "1.0" },
    });
    expect([400, 404, 414]).toContain(response.status);
  });
});
