import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import {
  artifactText,
  BASE,
  listUntil,
  rpc,
  send,
  userMessage,
  waitForState,
} from "../../support/helpers";

type Json = Record<string, unknown>;
const state = (task: Json) => (task.status as Json).state;
const errorOf = (body: Json) => body.error as { code: number; message: string; data: Json[] };

describe("SendMessage", () => {
  it("blocking send returns the completed task with its streamed artifact (D4)", async () => {
    const task = await send("streams are fun");
    expect(state(task)).toBe("TASK_STATE_COMPLETED");
    expect(artifactText(task, "echo")).toBe("You said: streams are fun");
    const history = task.history as Json[];
    expect(history[0]?.role).toBe("ROLE_USER");
    const changes = (task.metadata as Json)["edgelink/stateHistory"] as Json[];
    expect(changes.map((c) => c.newState)).toEqual(["working", "completed"]);
  });

  it("returnImmediately returns a working task that completes later", async () => {
    const task = await send("count 1", {}, { returnImmediately: true });
    expect(state(task)).toBe("TASK_STATE_WORKING");
    const done = await waitForState(task.id as string, "TASK_STATE_COMPLETED");
    expect(artifactText(done, "result")).toBe("Counted to 1.");
  });

  it("blocking send returns at an interrupted state, and a reply with taskId resumes the task", async () => {
    const asked = await send("hello");
    expect(state(asked)).toBe("TASK_STATE_INPUT_REQUIRED");
    const question = (asked.status as Json).message as Json;
    expect((question.parts as Json[])[0]?.text).toBe("Hi! What's your name?");

    const done = await send("Ada", { taskId: asked.id, contextId: asked.contextId });
    expect(done.id).toBe(asked.id);
    expect(done.contextId).toBe(asked.contextId);
    expect(state(done)).toBe("TASK_STATE_COMPLETED");
    expect(artifactText(done, "greeting")).toBe("Nice to meet you, Ada!");
    expect((done.history as Json[]).length).toBe(3);
  });

  it("a contextId groups tasks; a taskId alone infers its context", async () => {
    const first = await send("one");
    const second = await send("two", { contextId: first.contextId });
    expect(second.contextId).toBe(first.contextId);
    expect(second.id).not.toBe(first.id);
  });

  it("a message to a terminal task gets UnsupportedOperation (-32004) and changes nothing (B4)", async () => {
    const task = await send("done already");
    const { body } = await rpc("SendMessage", {
      message: userMessage("again", { taskId: task.id }),
    });
    expect(errorOf(body).code).toBe(-32004);
    expect(errorOf(body).message).toMatch(/completed/);
    const { body: after } = await rpc("GetTask", { id: task.id });
    expect(((after.result as Json).history as Json[]).length).toBe(1);
  });

  it("rejects a contextId that does not match the task's (-32602 naming the field)", async () => {
    const task = await send("hello");
    const { body } = await rpc("SendMessage", {
      message: userMessage("Bob", { taskId: task.id, contextId: "some-other-context" }),
    });
    expect(errorOf(body).code).toBe(-32602);
    const badRequest = errorOf(body).data.find((d) => String(d["@type"]).endsWith("BadRequest"));
    expect(JSON.stringify(badRequest)).toContain("params.message.contextId");
    expect(state((await rpc("GetTask", { id: task.id })).body.result as Json)).toBe(
      "TASK_STATE_INPUT_REQUIRED",
    );
  });

  it("an unknown taskId is TaskNotFound (-32001) with ErrorInfo", async () => {
    const { body } = await rpc("SendMessage", { message: userMessage("x", { taskId: "nope" }) });
    expect(errorOf(body).code).toBe(-32001);
    expect(errorOf(body).data[0]).toMatchObject({
      "@type": "type.googleapis.com/google.rpc.ErrorInfo",
      reason: "TASK_NOT_FOUND",
      domain: "a2a-protocol.org",
    });
  });

  it("a handler exception fails the task with the error message (B10)", async () => {
    const task = await send("fail");
    expect(state(task)).toBe("TASK_STATE_FAILED");
    expect((task.metadata as Json).error).toBe("You asked me to fail, so I did.");
  });

  it("runs tool_call parts with the registered tools (B10, C5)", async () => {
    const task = await send("", {
      parts: [
        {
          data: { toolName: "add", args: { a: 2, b: 40 }, callId: "c1" },
          metadata: { "edgelink/part": "tool_call" },
        },
      ],
    });
    expect(state(task)).toBe("TASK_STATE_COMPLETED");
    const artifacts = task.artifacts as { parts: Json[] }[];
    const part = artifacts[0]?.parts[0] as Json;
    expect(part.metadata).toMatchObject({ "edgelink/part": "tool_output" });
    expect(part.data).toEqual({ callId: "c1", result: 42, error: null });
  });

  it("an unknown tool yields a failed tool_output and a failed task (C5, C6)", async () => {
    const task = await send("", {
      parts: [{ data: { toolName: "nope", args: {} }, metadata: { "edgelink/part": "tool_call" } }],
    });
    expect(state(task)).toBe("TASK_STATE_FAILED");
    expect(String((task.metadata as Json).error)).toContain("Unknown tool: nope");
  });
});

describe("GetTask and ListTasks", () => {
  it("historyLength 0 omits history, n keeps the newest n (§3.2.4)", async () => {
    const asked = await send("hello");
    await send("Grace", { taskId: asked.id });
    const none = (await rpc("GetTask", { id: asked.id, historyLength: 0 })).body.result as Json;
    expect(none.history).toBeUndefined();
    const one = (await rpc("GetTask", { id: asked.id, historyLength: 1 })).body.result as Json;
    expect((one.history as Json[]).map((m) => (m.parts as Json[])[0]?.text)).toEqual(["Grace"]);
    const all = (await rpc("GetTask", { id: asked.id })).body.result as Json;
    expect((all.history as Json[]).length).toBe(3);
  });

  it("lists a context's tasks newest first, paginated with a cursor", async () => {
    const a = await send("first");
    const b = await send("second", { contextId: a.contextId });
    const c = await send("third", { contextId: a.contextId });
    const page1 = (await rpc("ListTasks", { contextId: a.contextId, pageSize: 2 })).body
      .result as Json;
    expect((page1.tasks as Json[]).map((t) => t.id)).toEqual([c.id, b.id]);
    expect(page1.totalSize).toBe(3);
    expect(page1.pageSize).toBe(2);
    expect(page1.nextPageToken).not.toBe("");
    expect((page1.tasks as Json[])[0]?.artifacts).toBeUndefined();
    const page2 = (
      await rpc("ListTasks", {
        contextId: a.contextId,
        pageSize: 2,
        pageToken: page1.nextPageToken,
        includeArtifacts: true,
      })
    ).body.result as Json;
    expect((page2.tasks as Json[]).map((t) => t.id)).toEqual([a.id]);
    expect(page2.nextPageToken).toBe("");
    expect(artifactText((page2.tasks as Json[])[0] as Json)).toBe("You said: first");
  });

  it("lists across contexts through the tenant index, filtered by status", async () => {
    const done = await send("across one");
    const asked = await send("hello");
    // The index lags by up to limits.indexFlushMs: a client listing what it just wrote waits.
    const completed = await listUntil({ status: "TASK_STATE_COMPLETED", pageSize: 100 }, (r) =>
      r.tasks.some((t) => t.id === done.id),
    );
    expect(completed.tasks.map((t) => t.id)).not.toContain(asked.id);
    const waiting = await listUntil({ status: "TASK_STATE_INPUT_REQUIRED" }, (r) =>
      r.tasks.some((t) => t.id === asked.id),
    );
    expect(
      waiting.tasks.every((t) => (t.status as Json).state === "TASK_STATE_INPUT_REQUIRED"),
    ).toBe(true);
  });

  it("rejects a bad page token and an out-of-range pageSize (-32602)", async () => {
    expect(errorOf((await rpc("ListTasks", { pageToken: "garbage!" })).body).code).toBe(-32602);
    const big = errorOf((await rpc("ListTasks", { pageSize: 1000 })).body);
    expect(big.code).toBe(-32602);
    expect(big.message).toContain("params.pageSize");
  });
});

describe("CancelTask", () => {
  it("cancels a running task; nothing the handler writes afterwards lands (B9)", async () => {
    const task = await send("count 30", {}, { returnImmediately: true });
    const canceled = (await rpc("CancelTask", { id: task.id })).body.result as Json;
    expect(state(canceled)).toBe("TASK_STATE_CANCELED");
    // The handler would post a status every second; a stopped handler posts none.
    await new Promise((r) => setTimeout(r, 1300));
    const later = (await rpc("GetTask", { id: task.id })).body.result as Json;
    expect(state(later)).toBe("TASK_STATE_CANCELED");
    expect((later.history as Json[]).length).toBe(1);
  });

  it("a second cancel is TaskNotCancelable (-32002); an unknown id is TaskNotFound", async () => {
    const task = await send("hello");
    expect(state((await rpc("CancelTask", { id: task.id })).body.result as Json)).toBe(
      "TASK_STATE_CANCELED",
    );
    expect(errorOf((await rpc("CancelTask", { id: task.id })).body).code).toBe(-32002);
    expect(errorOf((await rpc("CancelTask", { id: "missing" })).body).code).toBe(-32001);
  });
});

describe("protocol errors", () => {
  it("an unsupported A2A-Version is -32009", async () => {
    const { body } = await rpc("GetTask", { id: "x" }, { version: "9.9" });
    expect(errorOf(body).code).toBe(-32009);
    expect(errorOf(body).message).toContain("9.9");
  });

  it("a v0.3 method under A2A-Version 1.0 is method-not-found with a hint", async () => {
    const { body } = await rpc("message/send", {}, { version: "1.0" });
    expect(errorOf(body).code).toBe(-32601);
    expect(errorOf(body).message).toContain("0.3");
  });

  it("malformed JSON is -32700, a non-request is -32600, batches are -32600", async () => {
    const post = (body: string) =>
      SELF.fetch(`${BASE}/`, {
        method: "POST",
        headers: { "A2A-Version": "1.0", "Content-Type": "application/json" },
        body,
      });
    expect(((await (await post("{nope")).json()) as Json).error).toMatchObject({ code: -32700 });
    expect(((await (await post('{"id":1}')).json()) as Json).error).toMatchObject({
      code: -32600,
    });
    expect(((await (await post("[]")).json()) as Json).error).toMatchObject({ code: -32600 });
    expect(((await (await post('"str"')).json()) as Json).error).toMatchObject({ code: -32600 });
  });

  it("invalid params name the field (-32602)", async () => {
    const { body } = await rpc("SendMessage", {
      message: { messageId: "m", role: "ROLE_USER", parts: [] },
    });
    expect(errorOf(body).code).toBe(-32602);
    expect(errorOf(body).message).toContain("params.message.parts");
    const { body: noRole } = await rpc("SendMessage", {
      message: { messageId: "m", role: "ROLE_KING", parts: [{ text: "x" }] },
    });
    expect(errorOf(noRole).message).toContain("params.message.role");
  });

  it("a body over the limit is refused before parsing with 413", async () => {
    const big = "x".repeat(1024 * 1024 + 10);
    const response = await SELF.fetch(`${BASE}/`, {
      method: "POST",
      headers: { "A2A-Version": "1.0", "Content-Type": "application/json" },
      body: big,
    });
    expect(response.status).toBe(413);
    expect(((await response.json()) as Json).error).toMatchObject({ code: -32600 });
  });

  it("push config methods on an unknown task are TaskNotFound; bad params name the field", async () => {
    for (const [method, params] of [
      ["CreateTaskPushNotificationConfig", { taskId: "nope", url: "https://hooks.example.com/a" }],
      ["GetTaskPushNotificationConfig", { taskId: "nope", id: "c1" }],
      ["ListTaskPushNotificationConfigs", { taskId: "nope" }],
      ["DeleteTaskPushNotificationConfig", { taskId: "nope", id: "c1" }],
    ] as const) {
      expect(errorOf((await rpc(method, params)).body).code).toBe(-32001);
    }
    const task = await send("hook me");
    const bad = await rpc("CreateTaskPushNotificationConfig", { taskId: task.id, url: "ftp://x" });
    expect(errorOf(bad.body).code).toBe(-32602);
    expect(errorOf(bad.body).message).toContain("url");
  });

  it("GetExtendedAgentCard without an extended card is UnsupportedOperation (-32004)", async () => {
    expect(errorOf((await rpc("GetExtendedAgentCard")).body).code).toBe(-32004);
  });

  it("an unknown method is -32601", async () => {
    expect(errorOf((await rpc("DoMagic")).body).code).toBe(-32601);
  });
});

describe("v0.3 clients", () => {
  it("message/send with no A2A-Version speaks v0.3 shapes", async () => {
    const { body } = await rpc(
      "message/send",
      {
        message: {
          kind: "message",
          messageId: "v03-1",
          role: "user",
          parts: [{ kind: "text", text: "old friend" }],
        },
      },
      { version: null },
    );
    const task = body.result as Json;
    expect(task.kind).toBe("task");
    expect((task.status as Json).state).toBe("completed");
    const artifact = (task.artifacts as Json[])[0] as Json;
    expect((artifact.parts as Json[]).map((p) => p.text).join("")).toBe("You said: old friend");
    expect((artifact.parts as Json[])[0]?.kind).toBe("text");

    const got = (await rpc("tasks/get", { id: task.id }, { version: "0.3" })).body.result as Json;
    expect(got.kind).toBe("task");
    expect(got.id).toBe(task.id);
  });

  it("blocking: false returns at once (v0.3 non-blocking)", async () => {
    const { body } = await rpc(
      "message/send",
      {
        message: {
          kind: "message",
          messageId: "v03-2",
          role: "user",
          parts: [{ kind: "text", text: "count 1" }],
        },
        configuration: { blocking: false },
      },
      { version: null },
    );
    expect(((body.result as Json).status as Json).state).toBe("working");
  });
});
