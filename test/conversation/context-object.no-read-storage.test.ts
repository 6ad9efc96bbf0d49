import { env, evictDurableObject, listDurableObjectIds, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { DEFAULT_LIMITS } from "../../src/agent/limits";
import type { ContextRpc } from "../../src/conversation/context-object";
import { LIMITS } from "../../src/protocol/limits";
import { Message } from "../../src/protocol/message";
import { contextObjectName, indexObjectName, MAX_TASK_ID_LENGTH } from "../../src/storage/ids";
import { defineAgent } from "../../src/worker/app/define-agent";
import { BASE, listUntil, rest, rpc, send, sleep, userMessage } from "../support/helpers";
import { orphanTaskRow } from "../support/task-fixture";
import { ALICE, authedAgent, BOB, call, rpcAs, signingKey } from "../worker/auth-support";

type Json = Record<string, unknown>;

/** Objects of both namespaces that the platform keeps (each has a database file). */
async function storedObjects(): Promise<string[]> {
  const ids = [
    ...(await listDurableObjectIds(env.EDGELINK_CONTEXT)),
    ...(await listDurableObjectIds(env.EDGELINK_INDEX)),
  ];
  return ids.map((id) => id.toString()).sort();
}

/**
 * Objects that appeared since `before`. Index shards that hold rows are left out: earlier
 * test files' conversations flush their index rows up to a second later (or at their 10 s
 * backstop alarm), which can create a shard while this file runs; a shard a read created
 * would hold nothing.
 */
async function objectsAddedSince(before: string[]): Promise<string[]> {
  const known = new Set(before);
  const added: string[] = [];
  for (const id of await listDurableObjectIds(env.EDGELINK_CONTEXT)) {
    if (!known.has(id.toString())) added.push(id.toString());
  }
  for (const id of await listDurableObjectIds(env.EDGELINK_INDEX)) {
    if (known.has(id.toString())) continue;
    if ((await tablesIn(env.EDGELINK_INDEX.get(id))) === 0) added.push(id.toString());
  }
  return added;
}

/** Tables in an object's SQLite (0 for an object that was never written). */
function tablesIn(stub: DurableObjectStub): Promise<number> {
  return runInDurableObject(stub, (_instance, state) =>
    Number(state.storage.sql.exec("SELECT count(*) AS n FROM sqlite_master").one().n),
  );
}

const contextTables = (contextId: string, tenant = "") =>
  tablesIn(
    env.EDGELINK_CONTEXT.get(env.EDGELINK_CONTEXT.idFromName(contextObjectName(tenant, contextId))),
  );

/** Tables in every index shard of a tenant's anonymous caller. */
async function indexTables(tenant: string): Promise<number> {
  const shards = DEFAULT_LIMITS.indexShards;
  let n = 0;
  for (let shard = 0; shard < shards; shard++) {
    const name = indexObjectName(tenant, "", shard, shards);
    n += await tablesIn(env.EDGELINK_INDEX.get(env.EDGELINK_INDEX.idFromName(name)));
  }
  return n;
}

/** A response's JSON-RPC error code, whether it came as JSON or as a one-event stream. */
async function rpcErrorCode(response: Response): Promise<number | undefined> {
  const text = await response.text();
  const json = text.startsWith("{") ? text : (text.match(/^data: (.*)$/m)?.[1] ?? "{}");
  return (JSON.parse(json) as { error?: { code: number } }).error?.code;
}

async function rawRpc(method: string, params: Json): Promise<Response> {
  const { SELF } = await import("cloudflare:test");
  return SELF.fetch(`${BASE}/`, {
    method: "POST",
    headers: { "Content-Type": "application/json", "A2A-Version": "1.0" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
}

/** Every operation naming a task id, on both bindings. */
function taskAttempts(id: string): {
  rest: [string, string, Json | undefined][];
  rpc: [string, Json][];
} {
  const continuing = userMessage("let me in", { taskId: id });
  return {
    rest: [
      ["GET", `/tasks/${id}`, undefined],
      ["POST", `/tasks/${id}:cancel`, {}],
      ["GET", `/tasks/${id}:subscribe`, undefined],
      ["POST", `/tasks/${id}:subscribe`, {}],
      ["GET", `/tasks/${id}/pushNotificationConfigs`, undefined],
      ["POST", `/tasks/${id}/pushNotificationConfigs`, { url: "https://hooks.example.com/x" }],
      ["GET", `/tasks/${id}/pushNotificationConfigs/any`, undefined],
      ["DELETE", `/tasks/${id}/pushNotificationConfigs/any`, undefined],
      ["GET", `/tasks/${id}/deadLetters`, undefined],
      ["POST", `/tasks/${id}/deadLetters:redeliver`, {}],
      ["POST", "/message:send", { message: continuing }],
      ["POST", "/message:stream", { message: continuing }],
    ],
    rpc: [
      ["GetTask", { id }],
      ["CancelTask", { id }],
      ["SubscribeToTask", { id }],
      ["ListTaskPushNotificationConfigs", { taskId: id }],
      ["CreateTaskPushNotificationConfig", { taskId: id, url: "https://hooks.example.com/x" }],
      ["GetTaskPushNotificationConfig", { taskId: id, id: "any" }],
      ["DeleteTaskPushNotificationConfig", { taskId: id, id: "any" }],
      ["ListDeadPushDeliveries", { id }],
      ["RedeliverPushDeliveries", { id }],
      ["SendMessage", { message: continuing }],
      ["SendStreamingMessage", { message: continuing }],
    ],
  };
}

/** An agent that opts in to context ids its clients choose (A2A §3.4.1). */
const lenient = defineAgent({
  card: { name: "Client ids", description: "Accepts context ids its clients choose" },
  clientContextIds: true,
});

function flip(id: string, at: number): string {
  const c = id[at] === "A" ? "B" : "A";
  return `${id.slice(0, at)}${c}${id.slice(at + 1)}`;
}

describe("a read never creates storage", () => {
  it("forged, altered and foreign task ids are refused in the Worker on every route of both bindings: no object reached", async () => {
    const real = (await send("before")).id as string;
    // Its index row goes out within limits.indexFlushMs: let it land (creating the index
    // object, a write) before counting the objects that exist.
    await listUntil({ pageSize: 100 }, ({ tasks }) => tasks.some((t) => t.id === real));
    const unknown = `never-written-${crypto.randomUUID()}`;
    const old = oldTaskIds(unknown);
    const randomBytes = crypto.getRandomValues(new Uint8Array(60));
    const forgedSealed = btoa(String.fromCharCode(...randomBytes))
      .replaceAll("+", "-")
      .replaceAll("/", "_")
      .replace(/=+$/, "");
    const forged = [
      forgedSealed,
      flip(real, 5), // the nonce altered
      flip(real, real.length - 3), // the tag altered
      flip(real, 20), // the sealed context altered
      real.slice(0, -4), // truncated
      `${old.unsigned}.AAAAAAAAAAAAAAAAAAAAAA`, // a development build's signed 3-part format, forged
      old.unsigned, // a development build's unsigned 2-part format
      "A".repeat(MAX_TASK_ID_LENGTH + 4),
      "not-a-task",
    ];
    const before = await storedObjects();
    for (const id of forged) {
      const { rest: routes, rpc: calls } = taskAttempts(id);
      for (const [method, path, body] of routes) {
        const answer = await rest(method, path, body).catch(() => ({ status: 0 }));
        expect([404, 400], `${method} ${path.slice(0, 60)}`).toContain(answer.status);
      }
      for (const [method, params] of calls) {
        const code = await rpcErrorCode(await rawRpc(method, params));
        expect([-32001, -32602], `${method} ${id.slice(0, 40)}`).toContain(code);
      }
    }
    // Not one object was reached: the platform keeps no new file in either namespace.
    expect(await objectsAddedSince(before)).toEqual([]);
    // The real task is still there.
    expect(((await rpc("GetTask", { id: real })).body.result as Json).id).toBe(real);
  });

  it("context ids of the issued shape that do not verify are refused in the Worker, naming the field", async () => {
    const forged = `c.${"A".repeat(16)}${crypto.randomUUID().replaceAll("-", "").slice(0, 16)}`;
    const before = await storedObjects();
    const history = await rest("GET", `/contexts/${forged}/history`);
    expect(history.status).toBe(404);
    expect(JSON.stringify(history.body)).toContain("not a context id this agent issued");
    expect((await rest("POST", `/contexts/${forged}/history:compact`, {})).status).toBe(404);
    const listed = await rest("GET", `/tasks?contextId=${forged}`);
    expect(listed.status).toBe(200);
    expect(listed.body.tasks).toEqual([]);
    expect((await rpc("GetContextHistory", { contextId: forged })).body.error).toMatchObject({
      code: -32050,
    });
    const compact = await rpc("CompactContextHistory", { contextId: forged, strategy: "recent" });
    expect(compact.body.error).toMatchObject({ code: -32050 });
    expect((await rpc("ListTasks", { contextId: forged })).body.result).toMatchObject({
      tasks: [],
    });
    for (const method of ["SendMessage", "SendStreamingMessage"]) {
      const response = await rawRpc(method, { message: userMessage("hi", { contextId: forged }) });
      const error = ((await response.json()) as { error: { code: number; data: unknown } }).error;
      expect(error.code).toBe(-32602);
      expect(JSON.stringify(error.data)).toContain("params.message.contextId");
    }
    const sent = await rest("POST", "/message:send", {
      message: userMessage("hi", { contextId: forged }),
    });
    expect(sent.status).toBe(400);
    expect(JSON.stringify(sent.body)).toContain('"field":"message.contextId"');
    expect(await objectsAddedSince(before)).toEqual([]);
  });

  it("an over-long context id is refused in the Worker on every context route, naming the field", async () => {
    const long = "x".repeat(257);
    const before = await storedObjects();
    for (const [method, path] of [
      ["GET", `/contexts/${long}/history`],
      ["POST", `/contexts/${long}/history:compact`],
      ["GET", `/tasks?contextId=${long}`],
    ] as const) {
      const answer = await rest(method, path, method === "POST" ? {} : undefined);
      expect(answer.status, path.slice(0, 30)).toBe(400);
      expect(JSON.stringify(answer.body)).toContain("contextId");
    }
    for (const method of ["GetContextHistory", "CompactContextHistory", "ListTasks"]) {
      expect((await rpc(method, { contextId: long })).body.error, method).toMatchObject({
        code: -32602,
      });
    }
    const sent = await rpc("SendMessage", { message: userMessage("hi", { contextId: long }) });
    expect(sent.body.error).toMatchObject({ code: -32602 });
    expect(await objectsAddedSince(before)).toEqual([]);
  });

  it("a context Edgelink issued is opaque, signed, and reads back; a flipped character is refused", async () => {
    const task = await send("start a conversation");
    const contextId = task.contextId as string;
    expect(contextId).toMatch(/^c\.[A-Za-z0-9_-]{32}$/);
    const again = await send("and continue it", { contextId });
    expect(again.contextId).toBe(contextId);
    const history = await rest("GET", `/contexts/${contextId}/history`);
    expect(history.status).toBe(200);
    const text = JSON.stringify(history.body.items);
    expect(text).toContain("start a conversation");
    expect(text).toContain("and continue it");
    const before = await storedObjects();
    const flipped = flip(contextId, 10);
    expect((await rest("GET", `/contexts/${flipped}/history`)).status).toBe(404);
    expect(await objectsAddedSince(before)).toEqual([]);
  });

  it("another principal's task and context ids are refused in the Worker (not found), reaching no object", async () => {
    const worker = authedAgent(await signingKey());
    const sent = await rpcAs(worker, ALICE, "SendMessage", { message: userMessage("mine") });
    const contextId = ((sent.body.result as Json).task as Json).contextId as string;
    expect(contextId).toMatch(/^c\./);
    const taskId = ((sent.body.result as Json).task as Json).id as string;
    const before = await storedObjects();
    // Alice's task id does not open for Bob: refused before any object (his or hers).
    const task = await call(worker, "GET", `/tasks/${taskId}`, { headers: BOB });
    expect(task.status).toBe(404);
    expect((await rpcAs(worker, BOB, "GetTask", { id: taskId })).body.error).toMatchObject({
      code: -32001,
    });
    const history = await call(worker, "GET", `/contexts/${contextId}/history`, { headers: BOB });
    expect(history.status).toBe(404);
    const compact = await rpcAs(worker, BOB, "CompactContextHistory", { contextId });
    expect(compact.body.error).toMatchObject({ code: -32050 });
    const listed = await rpcAs(worker, BOB, "ListTasks", { contextId });
    expect((listed.body.result as Json).tasks).toEqual([]);
    const post = await rpcAs(worker, BOB, "SendMessage", {
      message: userMessage("into alice's", { contextId }),
    });
    expect(post.body.error).toMatchObject({ code: -32602 });
    expect(await objectsAddedSince(before)).toEqual([]);
    // Alice reads her own.
    const own = await call(worker, "GET", `/contexts/${contextId}/history`, { headers: ALICE });
    expect(own.status).toBe(200);
  });

  it("with the default, a read of an unknown client-chosen context id reaches no object (ListTasks filtered by it: an empty page); a send naming one is InvalidParams naming params.message.contextId", async () => {
    const chosen = `client-chosen-${crypto.randomUUID()}`;
    const before = await storedObjects();
    for (const [method, path] of [
      ["GET", `/contexts/${chosen}/history`],
      ["POST", `/contexts/${chosen}/history:compact`],
    ] as const) {
      const answer = await rest(method, path, method === "POST" ? {} : undefined);
      expect(answer.status, path).toBe(400);
      expect(JSON.stringify(answer.body), path).toContain("contextId");
    }
    for (const method of ["GetContextHistory", "CompactContextHistory"]) {
      const { body } = await rpc(method, { contextId: chosen });
      expect(body.error, method).toMatchObject({ code: -32602 });
    }
    const listed = await rest("GET", `/tasks?contextId=${chosen}`);
    expect(listed.status).toBe(200);
    expect(listed.body).toMatchObject({ tasks: [], nextPageToken: "", totalSize: 0 });
    const rpcListed = await rpc("ListTasks", { contextId: chosen });
    expect(rpcListed.body.result).toMatchObject({ tasks: [], nextPageToken: "", totalSize: 0 });
    for (const method of ["SendMessage", "SendStreamingMessage"]) {
      const response = await rawRpc(method, { message: userMessage("hi", { contextId: chosen }) });
      const error = ((await response.json()) as { error: { code: number; data: unknown } }).error;
      expect(error.code, method).toBe(-32602);
      expect(JSON.stringify(error.data), method).toContain("params.message.contextId");
    }
    const sent = await rest("POST", "/message:send", {
      message: userMessage("hi", { contextId: chosen }),
    });
    expect(sent.status).toBe(400);
    expect(JSON.stringify(sent.body)).toContain('"field":"message.contextId"');
    // No object was started for the id, not even an empty file: the Worker refused it.
    expect(await objectsAddedSince(before)).toEqual([]);
    expect(await contextTables(chosen)).toBe(0);
  });

  it("with clientContextIds: true, unknown client-chosen context ids reach their object, which writes nothing: no table, no row", async () => {
    // Each read answers as its object does for a conversation it never had (accepted, so
    // not the Worker's 400): not found, or an empty page.
    const status = async (path: string, body?: Json) =>
      (await call(lenient, body ? "POST" : "GET", path, { body })).status;
    const rpcAnswer = async (method: string, id: string) => {
      const { body } = await rpcAs(lenient, {}, method, { contextId: id });
      return (body.error as Json | undefined)?.code ?? (body.result as Json).tasks;
    };
    const reads: [string, (id: string) => Promise<unknown>, unknown][] = [
      ["REST history", (id) => status(`/contexts/${encodeURIComponent(id)}/history`), 404],
      [
        "REST compact",
        (id) => status(`/contexts/${encodeURIComponent(id)}/history:compact`, {}),
        404,
      ],
      ["REST list", (id) => status(`/tasks?contextId=${encodeURIComponent(id)}`), 200],
      ["RPC history", (id) => rpcAnswer("GetContextHistory", id), -32050],
      ["RPC compact", (id) => rpcAnswer("CompactContextHistory", id), -32050],
      ["RPC list", (id) => rpcAnswer("ListTasks", id), []],
    ];
    for (const [name, read, answer] of reads) {
      const id = `client-chosen-${crypto.randomUUID()}`;
      const before = await storedObjects();
      expect(await read(id), name).toEqual(answer);
      // The platform (workerd) keeps an empty database file for an object it started,
      // even one that ran no statement: at most that one, and nothing in it.
      expect((await objectsAddedSince(before)).length, name).toBeLessThanOrEqual(1);
      expect(await contextTables(id), name).toBe(0);
    }
  });

  it("ListTasks of a tenant with no task yet creates no index schema", async () => {
    const tenant = `fresh-${crypto.randomUUID()}`;
    const listed = await rest("GET", `/${tenant}/tasks`);
    expect(listed.status).toBe(200);
    expect(listed.body.tasks).toEqual([]);
    expect((await rpc("ListTasks", { tenant })).body.result).toMatchObject({ tasks: [] });
    expect(await indexTables(tenant)).toBe(0);
    // The first task in that tenant writes it.
    await rest("POST", `/${tenant}/message:send`, { message: userMessage("hello") });
    // (within limits.indexFlushMs: the index call is off the answer's path)
    const deadline = Date.now() + 5000;
    while ((await indexTables(tenant)) === 0 && Date.now() < deadline) await sleep(50);
    expect(await indexTables(tenant)).toBeGreaterThan(0);
  });

  it("the first write creates the schema", async () => {
    const contextId = (await send("hello there")).contextId as string;
    expect(await contextTables(contextId)).toBeGreaterThan(3);
  });
});

describe("clientContextIds: false (the default), set explicitly", () => {
  const strict = defineAgent({
    card: { name: "Strict ids", description: "Issues every context id itself" },
    clientContextIds: false,
  });

  it("refuses a client-chosen contextId on send and on every read, in the Worker; issued ones work", async () => {
    const before = await storedObjects();
    const chosen = `mine-${crypto.randomUUID()}`;
    const sent = await rpcAs(strict, {}, "SendMessage", {
      message: userMessage("hi", { contextId: chosen }),
    });
    expect(sent.body.error).toMatchObject({ code: -32602 });
    expect(JSON.stringify(sent.body.error)).toContain("params.message.contextId");
    const restSent = await call(strict, "POST", "/message:send", {
      body: { message: userMessage("hi", { contextId: chosen }) },
    });
    expect(restSent.status).toBe(400);
    for (const [method, path] of [
      ["GET", `/contexts/${chosen}/history`],
      ["POST", `/contexts/${chosen}/history:compact`],
    ] as const) {
      const response = await call(strict, method, path, {
        body: method === "POST" ? {} : undefined,
      });
      expect(response.status, path).toBe(400);
      expect(await response.text()).toContain("contextId");
    }
    for (const method of ["GetContextHistory", "CompactContextHistory"]) {
      const { body } = await rpcAs(strict, {}, method, { contextId: chosen });
      expect(body.error, method).toMatchObject({ code: -32602 });
    }
    // A list filtered by it is a question with an empty answer, not a refusal.
    const listed = await call(strict, "GET", `/tasks?contextId=${chosen}`);
    expect(listed.status).toBe(200);
    expect(await listed.json()).toMatchObject({ tasks: [], totalSize: 0 });
    const rpcListed = await rpcAs(strict, {}, "ListTasks", { contextId: chosen });
    expect(rpcListed.body.result).toMatchObject({ tasks: [], totalSize: 0 });
    expect(await objectsAddedSince(before)).toEqual([]);

    // Without a contextId the agent issues one, and the conversation continues under it.
    const first = await rpcAs(strict, {}, "SendMessage", { message: userMessage("start") });
    const task = (first.body.result as Json).task as Json;
    expect(task.contextId).toMatch(/^c\./);
    const second = await rpcAs(strict, {}, "SendMessage", {
      message: userMessage("go on", { contextId: task.contextId }),
    });
    expect(((second.body.result as Json).task as Json).contextId).toBe(task.contextId);
    const history = await rpcAs(strict, {}, "GetContextHistory", { contextId: task.contextId });
    expect(JSON.stringify(history.body.result)).toContain("go on");
  });
});

/** Base64url of a string's UTF-8 bytes (or of bytes), unpadded. */
function base64url(data: string | Uint8Array): string {
  const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
  return btoa(String.fromCharCode(...bytes))
    .replaceAll("+", "-")
    .replaceAll("/", "_")
    .replace(/=+$/, "");
}

/**
 * Task ids of the formats a development build issued before task ids were sealed, made here as
 * it made them: `<base64url(context)>.<random>` (unsigned), and that with a MAC
 * (HMAC-SHA-256 keyed by the id secret itself, over tenant, owner and the id, 16 bytes).
 */
async function oldFormatIds(contextId: string) {
  const { unsigned } = oldTaskIds(contextId);
  const key = await crypto.subtle.importKey(
    "raw",
    new TextEncoder().encode((env as unknown as { EDGELINK_ID_KEY: string }).EDGELINK_ID_KEY),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  const mac = await crypto.subtle.sign(
    "HMAC",
    key,
    new TextEncoder().encode(`\u0000\u0000${unsigned}`),
  );
  return { unsigned, signed: `${unsigned}.${base64url(new Uint8Array(mac).subarray(0, 16))}` };
}

function oldTaskIds(contextId: string) {
  return { unsigned: `${base64url(contextId)}.${crypto.randomUUID().replaceAll("-", "")}` };
}

describe("one task id format: ids of a development build's formats are not read", () => {
  /**
   * A task stored under a given id in its conversation's object, as the development builds
   * stored them (today's object would add its key to any id it is given).
   */
  async function storeTask(contextId: string, taskId: string): Promise<string> {
    const stub = env.EDGELINK_CONTEXT.get(
      env.EDGELINK_CONTEXT.idFromName(contextObjectName("", contextId)),
    ) as unknown as ContextRpc;
    // A first message makes the conversation (its schema), then the old row goes in.
    const message = Message.parse({ role: "user", parts: [{ type: "text", content: "old" }] });
    const scope = { tenant: "", contextId, owner: "", newTaskId: "sealed" };
    const result = await stub.sendMessage(scope, { message, returnImmediately: false }, "1.0");
    if (!result.ok) throw new Error(JSON.stringify(result.error));
    await runInDurableObject(stub as unknown as DurableObjectStub, (_i, state) =>
      orphanTaskRow(state.storage.sql, taskId, contextId),
    );
    // Woken again, the object reads its rows (and its clock) as they now are.
    await evictDurableObject(stub as unknown as DurableObjectStub);
    return taskId;
  }

  it("a validly signed 3-part id and an unsigned 2-part one answer not found, though their task is stored", async () => {
    const contextId = `old-${crypto.randomUUID()}`;
    const { signed, unsigned } = await oldFormatIds(contextId);
    expect(await storeTask(contextId, signed)).toBe(signed);
    expect(await storeTask(contextId, unsigned)).toBe(unsigned);
    for (const id of [signed, unsigned]) {
      expect((await rest("GET", `/tasks/${id}`)).status).toBe(404);
      expect((await rpc("GetTask", { id })).body.error).toMatchObject({ code: -32001 });
      const more = await rpc("SendMessage", { message: userMessage("more", { taskId: id }) });
      expect(more.body.error).toMatchObject({ code: -32001 });
    }
    // New tasks of that conversation get sealed ids, which are read.
    const fresh = await rpcAs(lenient, {}, "SendMessage", {
      message: userMessage("new", { contextId }),
    });
    const freshId = ((fresh.body.result as Json).task as Json).id as string;
    // The sealed part, then the task's key.
    expect(freshId).toMatch(/^[A-Za-z0-9_-]+\.[1-9][0-9]*$/);
    expect((await rpcAs(lenient, {}, "GetTask", { id: freshId })).body.result).toMatchObject({
      id: freshId,
    });
  });
});

describe("task id length", () => {
  it("the longest context id a client may choose still gives a task id within the limit, which routes", async () => {
    const contextId = "✓".repeat(256); // 256 UTF-16 units, 768 UTF-8 bytes: the worst case
    const sent = await rpcAs(lenient, {}, "SendMessage", {
      message: userMessage("long", { contextId }),
    });
    const id = ((sent.body.result as Json).task as Json).id as string;
    expect(id.length).toBeLessThanOrEqual(LIMITS.taskIdLength);
    expect(id.length).toBeGreaterThan(1000);
    const got = await rpcAs(lenient, {}, "GetTask", { id });
    expect((got.body.result as Json).contextId).toBe(contextId);
    expect((await call(lenient, "GET", `/tasks/${encodeURIComponent(id)}`)).status).toBe(200);
    // A context id Edgelink issued gives a short one.
    expect(((await send("short")).id as string).length).toBeLessThan(90);
  });
});
