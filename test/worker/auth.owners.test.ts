import { beforeAll, describe, expect, it } from "vitest";
import { userMessage } from "../support/helpers";
import {
  ALICE,
  authedAgent,
  BOB,
  call,
  EVE,
  type Key,
  rpcAs,
  signingKey,
  token,
  type Worker,
} from "./auth-support";

type Json = Record<string, unknown>;
type Headers = Record<string, string>;

let worker: Worker;
let key: Key;
let task: Json;
const HOOK = "https://hooks.example.com/a2a";

async function sendAs(headers: Headers, text: string): Promise<Json> {
  const { body } = await rpcAs(worker, headers, "SendMessage", {
    message: userMessage(text),
    configuration: { returnImmediately: true },
  });
  if (!body.result) throw new Error(JSON.stringify(body.error));
  return (body.result as { task: Json }).task;
}

beforeAll(async () => {
  key = await signingKey();
  worker = authedAgent(key);
  task = await sendAs(ALICE, "count 30");
  const created = await rpcAs(worker, ALICE, "CreateTaskPushNotificationConfig", {
    taskId: task.id,
    url: HOOK,
  });
  expect(created.body.result).toBeDefined();
  // The tenant index hears of the task within limits.indexFlushMs: wait for it, so that
  // "another principal's ListTasks does not show it" below is not true merely by lag.
  const deadline = Date.now() + 5000;
  while (Date.now() < deadline) {
    const listed = await rpcAs(worker, ALICE, "ListTasks", {});
    if (JSON.stringify(listed.body.result).includes(task.id as string)) break;
    await new Promise((r) => setTimeout(r, 50));
  }
});

/** Every operation on Alice's task or context, as JSON-RPC calls. */
function rpcAttempts(): [string, Json][] {
  const id = task.id as string;
  const contextId = task.contextId as string;
  return [
    ["GetTask", { id }],
    ["CancelTask", { id }],
    ["SubscribeToTask", { id }],
    ["CreateTaskPushNotificationConfig", { taskId: id, url: HOOK }],
    ["GetTaskPushNotificationConfig", { taskId: id, id: "any" }],
    ["ListTaskPushNotificationConfigs", { taskId: id }],
    ["DeleteTaskPushNotificationConfig", { taskId: id, id: "any" }],
    ["ListDeadPushDeliveries", { id }],
    ["RedeliverPushDeliveries", { id }],
    ["GetContextHistory", { contextId }],
    ["CompactContextHistory", { contextId, strategy: "recent", maxMessages: 2 }],
    ["SendMessage", { message: userMessage("let me in", { taskId: id }) }],
    ["SendMessage", { message: userMessage("let me in", { taskId: id, contextId }) }],
  ];
}

/** Every operation on Alice's task or context, as HTTP+JSON requests. */
function restAttempts(): [string, string, Json | undefined][] {
  const id = task.id as string;
  const contextId = task.contextId as string;
  return [
    ["GET", `/tasks/${id}`, undefined],
    ["POST", `/tasks/${id}:cancel`, {}],
    ["GET", `/tasks/${id}:subscribe`, undefined],
    ["POST", `/tasks/${id}:subscribe`, {}],
    ["POST", `/tasks/${id}/pushNotificationConfigs`, { url: HOOK }],
    ["GET", `/tasks/${id}/pushNotificationConfigs`, undefined],
    ["GET", `/tasks/${id}/pushNotificationConfigs/any`, undefined],
    ["DELETE", `/tasks/${id}/pushNotificationConfigs/any`, undefined],
    ["GET", `/tasks/${id}/deadLetters`, undefined],
    ["POST", `/tasks/${id}/deadLetters:redeliver`, {}],
    ["GET", `/contexts/${contextId}/history`, undefined],
    ["POST", `/contexts/${contextId}/history:compact`, { strategy: "recent", maxMessages: 2 }],
    ["POST", "/message:send", { message: userMessage("let me in", { taskId: id }) }],
    ["POST", "/message:stream", { message: userMessage("let me in", { taskId: id }) }],
  ];
}

async function expectAliceUntouched(): Promise<void> {
  const got = await rpcAs(worker, ALICE, "GetTask", { id: task.id });
  const result = got.body.result as { status: { state: string }; history: Json[] };
  expect(result.status.state).toBe("TASK_STATE_WORKING");
  expect(JSON.stringify(result.history)).not.toContain("let me in");
  const configs = await rpcAs(worker, ALICE, "ListTaskPushNotificationConfigs", {
    taskId: task.id,
  });
  expect((configs.body.result as { configs: Json[] }).configs).toHaveLength(1);
}

describe("owners: a task belongs to the principal that created it (JSON-RPC)", () => {
  for (const [who, headers] of [
    ["another principal of the same tenant", BOB],
    ["a principal of another tenant", EVE],
  ] as const) {
    it(`${who} cannot get, cancel, subscribe, touch push configs, dead letters, history, compact or continue it`, async () => {
      for (const [method, params] of rpcAttempts()) {
        const { body } = await rpcAs(worker, headers, method, params);
        const error = body.error as { code: number } | undefined;
        expect(error, `${method} ${JSON.stringify(params)}`).toBeDefined();
        // Not found, never "forbidden": the spec says not to reveal what exists (§3.3.2).
        expect([-32001, -32050], method).toContain(error?.code);
      }
      const listed = await rpcAs(worker, headers, "ListTasks", {});
      expect(JSON.stringify(listed.body.result)).not.toContain(task.id as string);
      const byContext = await rpcAs(worker, headers, "ListTasks", { contextId: task.contextId });
      expect((byContext.body.result as { tasks: Json[] }).tasks).toEqual([]);
      await expectAliceUntouched();
    });
  }

  it("a JWT for the same subject and tenant as the API key is another owner: 404", async () => {
    const jwt = { Authorization: `Bearer ${await token(key, { sub: "alice", tenant: "acme" })}` };
    const { body } = await rpcAs(worker, jwt, "GetTask", { id: task.id });
    expect((body.error as { code: number }).code).toBe(-32001);
    const listed = await rpcAs(worker, ALICE, "ListTasks", {});
    expect(JSON.stringify(listed.body.result)).toContain(task.id as string);
  });
});

describe("owners (HTTP+JSON)", () => {
  it("another principal gets 404 on every operation; the task is unchanged", async () => {
    for (const headers of [BOB, EVE]) {
      for (const [method, path, body] of restAttempts()) {
        const response = await call(worker, method, path, {
          body,
          headers: { ...headers, "Last-Event-ID": "1" },
        });
        expect(response.status, `${method} ${path}`).toBe(404);
        await response.body?.cancel();
      }
      const list = await call(worker, "GET", "/tasks", { headers });
      expect(await list.text()).not.toContain(task.id as string);
    }
    await expectAliceUntouched();
  });
});

describe("tenants come from the principal", () => {
  it("a /{tenant} prefix or params.tenant that differs is refused with 403", async () => {
    const prefixed = await call(worker, "GET", `/evil/tasks/${task.id}`, { headers: ALICE });
    expect(prefixed.status).toBe(403);
    expect(((await prefixed.json()) as Json).error).toMatchObject({ status: "PERMISSION_DENIED" });
    const param = await rpcAs(worker, ALICE, "GetTask", { id: task.id, tenant: "evil" });
    expect(param.status).toBe(403);
    expect(param.body.error).toMatchObject({ code: -32011 });
    // Naming one's own tenant is fine.
    const own = await call(worker, "GET", `/acme/tasks/${task.id}`, { headers: ALICE });
    expect(own.status).toBe(200);
    const ownParam = await rpcAs(worker, ALICE, "GetTask", { id: task.id, tenant: "acme" });
    expect((ownParam.body.result as Json).id).toBe(task.id);
  });

  it("Eve naming Alice's tenant is refused before any object is reached", async () => {
    const response = await call(worker, "GET", `/acme/tasks/${task.id}`, { headers: EVE });
    expect(response.status).toBe(403);
  });
});
