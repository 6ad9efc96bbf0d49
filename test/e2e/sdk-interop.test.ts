/**
 * End-to-end interop: the official A2A JS SDK client (@a2a-js/sdk 1.3, A2A v1.0) against
 * the demo agent served by a real local Worker (wrangler + workerd + Durable Objects),
 * over both v1.0 bindings the card advertises: JSON-RPC and HTTP+JSON.
 *
 * Catalogue IDs: /work/shared/spec/features.md.
 */

import { type Message, Role, type StreamResponse, type Task, TaskState } from "@a2a-js/sdk";
import type { Client } from "@a2a-js/sdk/client";
import {
  type A2AError,
  isJsonRpcError,
  isRestError,
  TaskNotCancelableError,
  TaskNotFoundError,
  UnsupportedOperationError,
} from "@a2a-js/sdk/errors";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  artifactNamed,
  asTask,
  type Binding,
  collect,
  describeEvent,
  pollUntil,
  rejectionOf,
  roles,
  sdkClient,
  sendRequest,
  sleep,
  stateHistory,
  stateName,
  statusText,
  textOf,
  textRequest,
} from "./support/sdk";
import { type DemoAgent, startDemoAgent } from "./support/worker";

let agent: DemoAgent;

beforeAll(async () => {
  agent = await startDemoAgent();
});

afterAll(async () => {
  await agent?.stop();
});

/** Wire facts of an SDK error: JSON-RPC error code, or HTTP status for HTTP+JSON. */
function expectWireError(
  error: unknown,
  binding: Binding,
  expected: { rpcCode: number; httpStatus: number },
): void {
  if (binding === "JSONRPC") {
    expect(isJsonRpcError(error), String(error)).toBe(true);
    expect((error as A2AError & { envelopeCode: number }).envelopeCode).toBe(expected.rpcCode);
  } else {
    expect(isRestError(error), String(error)).toBe(true);
    expect((error as A2AError & { statusCode: number }).statusCode).toBe(expected.httpStatus);
  }
}

const expectState = (task: Task, state: TaskState) =>
  expect(stateName(task.status?.state), JSON.stringify(task.status)).toBe(stateName(state));

const BINDINGS: { binding: Binding; tag: string }[] = [
  { binding: "JSONRPC", tag: "jsonrpc" },
  { binding: "HTTP+JSON", tag: "rest" },
];

describe.each(BINDINGS)("A2A v1.0 SDK client over $binding", ({ binding, tag }) => {
  let client: Client;

  beforeAll(async () => {
    client = await sdkClient(agent.baseUrl, binding);
  });

  const getTask = (id: string, historyLength?: number) =>
    client.getTask({ tenant: "", id, ...(historyLength === undefined ? {} : { historyLength }) });

  it("A2 A3 resolves the v1.0 agent card and selects the requested binding", async () => {
    expect(client.transport.protocolName).toBe(binding);
    expect(client.protocolVersion).toBe("1.0");

    const card = await client.getAgentCard();
    expect(card.name).toBe("Edgelink demo agent");
    expect(card.version).toBe("0.1.0");
    expect(
      card.supportedInterfaces.map((i) => ({
        url: i.url,
        protocolBinding: i.protocolBinding,
        protocolVersion: i.protocolVersion,
      })),
    ).toEqual([
      { url: `${agent.baseUrl}/`, protocolBinding: "JSONRPC", protocolVersion: "1.0" },
      { url: agent.baseUrl, protocolBinding: "HTTP+JSON", protocolVersion: "1.0" },
    ]);
    // A3: the A2A flags say what is really served.
    expect(card.capabilities?.streaming).toBe(true);
    expect(card.capabilities?.pushNotifications).toBe(true);
    expect(card.capabilities?.extendedAgentCard).toBe(false);
    expect(card.skills.map((s) => s.id)).toEqual(["echo", "greet", "recap", "count", "tools"]);
    expect(card.defaultInputModes).toEqual(["text/plain"]);
  });

  it("B3 D4 blocking SendMessage returns the completed task with its echo artifact", async () => {
    const text = `echo this over ${tag}`;
    const task = asTask(await client.sendMessage(textRequest(text)));

    expectState(task, TaskState.TASK_STATE_COMPLETED);
    expect(task.id).not.toBe("");
    expect(task.contextId).not.toBe("");
    expect(task.artifacts).toHaveLength(1);
    expect(task.artifacts[0]?.name).toBe("echo");
    expect(textOf(task.artifacts[0]?.parts)).toBe(`You said: ${text}`);
    expect(task.history).toHaveLength(1);
    expect(task.history[0]?.role).toBe(Role.ROLE_USER);
    expect(textOf(task.history[0]?.parts)).toBe(text);
    expect(task.history[0]?.taskId).toBe(task.id);
    // B6: every transition is recorded, in order.
    expect(stateHistory(task)).toEqual(["working", "completed"]);
  });

  it("B1 returnImmediately answers with a working task; GetTask polls it to completed", async () => {
    const started = asTask(
      await client.sendMessage(textRequest("count 1", { returnImmediately: true })),
    );
    // "count 1" sleeps a second before it finishes, so the answer cannot be terminal.
    expectState(started, TaskState.TASK_STATE_WORKING);
    expect(started.artifacts).toEqual([]);

    const done = await pollUntil(
      () => getTask(started.id),
      (t) => t.status?.state === TaskState.TASK_STATE_COMPLETED,
    );
    expect(done.id).toBe(started.id);
    expect(done.contextId).toBe(started.contextId);
    expect(textOf(artifactNamed(done, "result")?.parts)).toBe("Counted to 1.");
    expect(stateHistory(done)).toEqual(["working", "completed"]);
  });

  it("D4 SendStreamingMessage: the task first, then working, artifact chunks, completed last", async () => {
    const text = `stream me word by word over ${tag}`;
    const events = await collect(
      client.sendMessageStream(textRequest(text), { signal: AbortSignal.timeout(20_000) }),
    );
    const labels = events.map(describeEvent);

    const first = events[0]?.payload;
    expect(first?.$case, labels.join(" | ")).toBe("task");
    if (first?.$case !== "task") return;
    const task = first.value;
    expectState(task, TaskState.TASK_STATE_SUBMITTED);
    expect(textOf(task.history[0]?.parts)).toBe(text);

    const second = events[1]?.payload;
    expect(second?.$case).toBe("statusUpdate");
    if (second?.$case === "statusUpdate") {
      expect(second.value.status?.state).toBe(TaskState.TASK_STATE_WORKING);
    }

    const chunks = events.flatMap((e) =>
      e.payload?.$case === "artifactUpdate" ? [e.payload.value] : [],
    );
    // One chunk per word ("You ", "said: ", ...): more than one, all the same artifact.
    expect(chunks.length).toBe(`You said: ${text}`.split(" ").length);
    expect(new Set(chunks.map((c) => c.artifact?.artifactId)).size).toBe(1);
    expect(chunks.every((c) => c.artifact?.name === "echo")).toBe(true);
    expect(chunks.map((c) => c.append)).toEqual(chunks.map((_, i) => i > 0));
    expect(chunks.map((c) => c.lastChunk)).toEqual(chunks.map((_, i) => i === chunks.length - 1));
    expect(chunks.map((c) => textOf(c.artifact?.parts)).join("")).toBe(`You said: ${text}`);

    const last = events.at(-1)?.payload;
    expect(last?.$case, labels.join(" | ")).toBe("statusUpdate");
    if (last?.$case === "statusUpdate") {
      expect(last.value.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    }
    // Every event belongs to the task announced first.
    for (const e of events.slice(1)) {
      const p = e.payload;
      if (p?.$case === "statusUpdate" || p?.$case === "artifactUpdate") {
        expect(p.value.taskId).toBe(task.id);
        expect(p.value.contextId).toBe(task.contextId);
      }
    }

    // The stored task agrees with what was streamed.
    const stored = await getTask(task.id);
    expectState(stored, TaskState.TASK_STATE_COMPLETED);
    expect(textOf(artifactNamed(stored, "echo")?.parts)).toBe(`You said: ${text}`);
  });

  it("§3.1.1 a direct reply: SendMessage yields a Message, the stream one message event", async () => {
    const result = await client.sendMessage(textRequest("ping"));
    expect("status" in result, JSON.stringify(result)).toBe(false);
    const message = result as Message;
    expect(message.role).toBe(Role.ROLE_AGENT);
    expect(textOf(message.parts)).toBe("pong");
    expect(message.taskId).toBe("");
    expect(message.contextId).not.toBe("");

    const events = await collect(
      client.sendMessageStream(textRequest("ping"), { signal: AbortSignal.timeout(20_000) }),
    );
    expect(events.map(describeEvent)).toEqual(["message:pong"]);
  });

  it("B3 B7 multi-turn: hello → input-required → reply in the same task → completed", async () => {
    const asked = asTask(await client.sendMessage(textRequest("hello")));
    expectState(asked, TaskState.TASK_STATE_INPUT_REQUIRED);
    expect(statusText(asked)).toBe("Hi! What's your name?");
    expect(asked.status?.message?.role).toBe(Role.ROLE_AGENT);

    const name = `Ada-${tag}`;
    const answered = asTask(
      await client.sendMessage(textRequest(name, { taskId: asked.id, contextId: asked.contextId })),
    );
    expect(answered.id).toBe(asked.id);
    expect(answered.contextId).toBe(asked.contextId);
    expectState(answered, TaskState.TASK_STATE_COMPLETED);
    expect(textOf(artifactNamed(answered, "greeting")?.parts)).toBe(`Nice to meet you, ${name}!`);
    expect(roles(answered.history)).toEqual([Role.ROLE_USER, Role.ROLE_AGENT, Role.ROLE_USER]);
    expect(answered.history.map((m) => textOf(m.parts))).toEqual([
      "hello",
      "Hi! What's your name?",
      name,
    ]);
    expect(stateHistory(answered)).toEqual(["working", "input-required", "working", "completed"]);
  });

  it("B3 a reply naming only the taskId lands in the task's own context", async () => {
    const asked = asTask(await client.sendMessage(textRequest("hey")));
    expectState(asked, TaskState.TASK_STATE_INPUT_REQUIRED);
    const answered = asTask(await client.sendMessage(textRequest("Grace", { taskId: asked.id })));
    expect(answered.contextId).toBe(asked.contextId);
    expectState(answered, TaskState.TASK_STATE_COMPLETED);
    expect(textOf(artifactNamed(answered, "greeting")?.parts)).toBe("Nice to meet you, Grace!");
  });

  it("GetTask honours historyLength (§3.2.4): unset = the default (all, up to limits.taskHistory), N = newest N, 0 = none", async () => {
    const task = asTask(await client.sendMessage(textRequest("hello")));
    expectState(task, TaskState.TASK_STATE_INPUT_REQUIRED);

    const full = await getTask(task.id);
    expect(full.history.map((m) => textOf(m.parts))).toEqual(["hello", "Hi! What's your name?"]);

    const newest = await getTask(task.id, 1);
    expect(newest.history).toHaveLength(1);
    expect(newest.history[0]?.role).toBe(Role.ROLE_AGENT);
    expect(textOf(newest.history[0]?.parts)).toBe("Hi! What's your name?");

    const none = await getTask(task.id, 0);
    expect(none.history).toEqual([]);
    expect(none.id).toBe(task.id);
    expectState(none, TaskState.TASK_STATE_INPUT_REQUIRED);

    // SendMessage's configuration.historyLength trims its answer the same way.
    const trimmed = asTask(await client.sendMessage(textRequest("hello", { historyLength: 1 })));
    expectState(trimmed, TaskState.TASK_STATE_INPUT_REQUIRED);
    expect(trimmed.history.map((m) => textOf(m.parts))).toEqual(["Hi! What's your name?"]);
  });

  it("tenants isolate tasks (§11.3): found under their tenant, TaskNotFound elsewhere", async () => {
    const tenant = `acme-${tag}`;
    const task = asTask(await client.sendMessage(textRequest(`tenant ${tag}`, { tenant })));
    expectState(task, TaskState.TASK_STATE_COMPLETED);

    const found = await client.getTask({ tenant, id: task.id });
    expect(found.id).toBe(task.id);
    expect(textOf(artifactNamed(found, "echo")?.parts)).toBe(`You said: tenant ${tag}`);

    // Read-your-writes: the task its answer named is listed at once across conversations.
    const listed = await client.listTasks({
      tenant,
      contextId: "",
      status: TaskState.TASK_STATE_UNSPECIFIED,
      pageToken: "",
      statusTimestampAfter: undefined,
    });
    expect(listed.tasks.map((t) => t.id)).toEqual([task.id]);

    const elsewhere = await rejectionOf(() => getTask(task.id));
    expect(elsewhere).toBeInstanceOf(TaskNotFoundError);
    const otherTenant = await rejectionOf(() =>
      client.getTask({ tenant: `other-${tag}`, id: task.id }),
    );
    expect(otherTenant).toBeInstanceOf(TaskNotFoundError);
  });

  it("ListTasks filters by contextId and pages with pageSize 1 (§3.1.4)", async () => {
    // The first message starts a conversation; the second continues the id it was issued.
    const a = asTask(await client.sendMessage(textRequest(`first ${tag}`)));
    const contextId = a.contextId;
    expect(contextId).toMatch(/^c\./);
    const b = asTask(await client.sendMessage(textRequest(`second ${tag}`, { contextId })));
    expect(b.contextId).toBe(contextId);

    const all = await client.listTasks({
      tenant: "",
      contextId,
      status: TaskState.TASK_STATE_UNSPECIFIED,
      pageToken: "",
      statusTimestampAfter: undefined,
    });
    expect(all.tasks.map((t) => t.id).sort()).toEqual([a.id, b.id].sort());
    expect(all.totalSize).toBe(2);
    expect(all.nextPageToken).toBe("");
    expect(all.tasks.every((t) => t.contextId === contextId)).toBe(true);
    expect(all.tasks.every((t) => t.history.length === 1)).toBe(true);
    // Artifacts are left out unless asked for.
    expect(all.tasks.every((t) => t.artifacts.length === 0)).toBe(true);

    // historyLength 0 drops the history; statusTimestampAfter keeps only the later task
    // (b finished at least a few ms after a, so 1 ms before b's timestamp separates them).
    const justBeforeB = new Date(Date.parse(b.status?.timestamp ?? "") - 1).toISOString();
    expect(Date.parse(a.status?.timestamp ?? "")).toBeLessThan(Date.parse(justBeforeB));
    const recent = await client.listTasks({
      tenant: "",
      contextId,
      status: TaskState.TASK_STATE_UNSPECIFIED,
      pageToken: "",
      historyLength: 0,
      statusTimestampAfter: justBeforeB,
    });
    expect(recent.tasks.map((t) => t.id)).toEqual([b.id]);
    expect(recent.tasks[0]?.history).toEqual([]);

    const page1 = await client.listTasks({
      tenant: "",
      contextId,
      status: TaskState.TASK_STATE_UNSPECIFIED,
      pageSize: 1,
      pageToken: "",
      statusTimestampAfter: undefined,
    });
    expect(page1.tasks).toHaveLength(1);
    expect(page1.pageSize).toBe(1);
    expect(page1.totalSize).toBe(2);
    expect(page1.nextPageToken).not.toBe("");

    const page2 = await client.listTasks({
      tenant: "",
      contextId,
      status: TaskState.TASK_STATE_UNSPECIFIED,
      pageSize: 1,
      pageToken: page1.nextPageToken,
      statusTimestampAfter: undefined,
      includeArtifacts: true,
    });
    expect(page2.tasks).toHaveLength(1);
    expect(page2.nextPageToken).toBe("");
    const paged = [page1.tasks[0]?.id, page2.tasks[0]?.id];
    expect(paged.sort()).toEqual([a.id, b.id].sort());
    // includeArtifacts: true brings them back.
    const withArtifacts = page2.tasks[0];
    expect(withArtifacts?.artifacts).toHaveLength(1);
    expect(textOf(withArtifacts?.artifacts[0]?.parts)).toMatch(/^You said: (first|second) /);
  });

  it("ListTasks statusTimestampAfter is inclusive (a2a.proto: greater than or equal)", async () => {
    const task = asTask(await client.sendMessage(textRequest(`timestamp ${tag}`)));
    const listed = await client.listTasks({
      tenant: "",
      contextId: task.contextId,
      status: TaskState.TASK_STATE_UNSPECIFIED,
      pageToken: "",
      statusTimestampAfter: task.status?.timestamp,
    });
    expect(listed.tasks.map((t) => t.id)).toEqual([task.id]);
  });

  it("ListTasks without a contextId spans conversations and filters by state", async () => {
    const a = asTask(await client.sendMessage(textRequest(`list-a ${tag}`)));
    const b = asTask(await client.sendMessage(textRequest("hi")));
    expect(a.contextId).not.toBe(b.contextId);
    expectState(b, TaskState.TASK_STATE_INPUT_REQUIRED);

    const base = {
      tenant: "",
      contextId: "",
      pageToken: "",
      pageSize: 100,
      statusTimestampAfter: undefined,
    };
    // Listed at once: each task was in the index before its answer came.
    const everything = await client.listTasks({
      ...base,
      status: TaskState.TASK_STATE_UNSPECIFIED,
    });
    const ids = everything.tasks.map((t) => t.id);
    expect(ids).toContain(a.id);
    expect(ids).toContain(b.id);
    expect(everything.totalSize).toBeGreaterThanOrEqual(2);

    const waiting = await client.listTasks({
      ...base,
      status: TaskState.TASK_STATE_INPUT_REQUIRED,
    });
    const waitingIds = waiting.tasks.map((t) => t.id);
    expect(waitingIds).toContain(b.id);
    expect(waitingIds).not.toContain(a.id);
    expect(
      waiting.tasks.every((t) => t.status?.state === TaskState.TASK_STATE_INPUT_REQUIRED),
    ).toBe(true);
  });

  it("B9 CancelTask stops a running task for good; a second cancel is TaskNotCancelable", async () => {
    const started = asTask(
      await client.sendMessage(textRequest("count 30", { returnImmediately: true })),
    );
    expectState(started, TaskState.TASK_STATE_WORKING);
    // Wait until it is really counting ("1…", "2…", ... once a second).
    await pollUntil(
      () => getTask(started.id),
      (t) => /^\d+…$/.test(statusText(t)),
    );

    const reason = `stop counting (${tag})`;
    const canceled = await client.cancelTask({ tenant: "", id: started.id, metadata: { reason } });
    expect(canceled.id).toBe(started.id);
    expectState(canceled, TaskState.TASK_STATE_CANCELED);
    if (binding === "JSONRPC") {
      // B7: a non-empty reason is kept in the task metadata.
      expect(canceled.metadata?.cancelReason).toBe(reason);
    }
    // (The SDK's HTTP+JSON transport POSTs /tasks/{id}:cancel without a body, so the reason
    // never leaves the client; wire-compat.test.ts covers the reason over raw HTTP+JSON.)

    // Nothing more happens to it: over the next 1.5 s (it counted once a second) the task,
    // its status timestamp, history and artifacts stay exactly as the cancel left them.
    await sleep(1_500);
    const later = await getTask(started.id);
    expectState(later, TaskState.TASK_STATE_CANCELED);
    expect(later.status?.timestamp).toBe(canceled.status?.timestamp);
    expect(later.artifacts).toEqual([]);
    expect(later.history).toHaveLength(canceled.history.length);
    expect(stateHistory(later)).toEqual(["working", "canceled"]);

    const again = await rejectionOf(() =>
      client.cancelTask({ tenant: "", id: started.id, metadata: undefined }),
    );
    expect(again).toBeInstanceOf(TaskNotCancelableError);
    expectWireError(again, binding, { rpcCode: -32002, httpStatus: 400 });
  });

  it("B9 cancel works independently of an open stream, which ends canceled", async () => {
    const stream = client.sendMessageStream(textRequest("count 30"), {
      signal: AbortSignal.timeout(20_000),
    });
    const events: StreamResponse[] = [];
    let taskId = "";
    for await (const event of stream) {
      events.push(event);
      const p = event.payload;
      if (p?.$case === "task") taskId = p.value.id;
      if (p?.$case === "statusUpdate" && textOf(p.value.status?.message?.parts) === "1…") {
        const canceled = await client.cancelTask({ tenant: "", id: taskId, metadata: undefined });
        expectState(canceled, TaskState.TASK_STATE_CANCELED);
      }
    }
    const labels = events.map(describeEvent);
    expect(labels[0]).toBe("task:TASK_STATE_SUBMITTED");
    expect(labels).toContain("status:TASK_STATE_WORKING:1…");
    expect(labels.at(-1)).toBe("status:TASK_STATE_CANCELED:");
    expect(labels).not.toContain("status:TASK_STATE_WORKING:3…");
  });

  it("SubscribeToTask on a running count 3 receives its updates until completed", async () => {
    const started = asTask(
      await client.sendMessage(textRequest("count 3", { returnImmediately: true })),
    );
    expectState(started, TaskState.TASK_STATE_WORKING);

    const events = await collect(
      client.resubscribeTask(
        { tenant: "", id: started.id },
        { signal: AbortSignal.timeout(20_000) },
      ),
    );
    const labels = events.map(describeEvent);

    const first = events[0]?.payload;
    expect(first?.$case, labels.join(" | ")).toBe("task");
    if (first?.$case !== "task") return;
    expect(first.value.id).toBe(started.id);
    expectState(first.value, TaskState.TASK_STATE_WORKING);
    // The snapshot carries the count so far ("" if it subscribed within the first second,
    // as it normally does); the live updates carry the rest, each number exactly once.
    const live = events.flatMap((e) =>
      e.payload?.$case === "statusUpdate" &&
      e.payload.value.status?.state === TaskState.TASK_STATE_WORKING
        ? [textOf(e.payload.value.status.message?.parts)]
        : [],
    );
    const seen = [statusText(first.value), ...live].filter((t) => t !== "");
    expect(seen, labels.join(" | ")).toEqual(["1…", "2…", "3…"]);
    expect(labels).toContain('artifact:result:"Counted to 3."');
    expect(labels.at(-1)).toBe("status:TASK_STATE_COMPLETED:");
  });

  it("B4 SubscribeToTask on a finished task is UnsupportedOperation", async () => {
    const done = asTask(await client.sendMessage(textRequest(`finished ${tag}`)));
    expectState(done, TaskState.TASK_STATE_COMPLETED);
    const error = await rejectionOf(() =>
      collect(client.resubscribeTask({ tenant: "", id: done.id })),
    );
    expect(error).toBeInstanceOf(UnsupportedOperationError);
    expectWireError(error, binding, { rpcCode: -32004, httpStatus: 400 });
  });

  it("B9 GetTask and CancelTask of unknown tasks are TaskNotFound", async () => {
    // Not an id this server issues at all.
    const bogus = await rejectionOf(() => getTask("no-such-task"));
    expect(bogus).toBeInstanceOf(TaskNotFoundError);
    expectWireError(bogus, binding, { rpcCode: -32001, httpStatus: 404 });

    // Well-formed (a real task's id, one character altered) but never issued.
    const real = asTask(await client.sendMessage(textRequest(`anchor ${tag}`)));
    const forged = `${real.id.slice(0, 8)}${real.id[8] === "A" ? "B" : "A"}${real.id.slice(9)}`;
    const missing = await rejectionOf(() => getTask(forged));
    expect(missing).toBeInstanceOf(TaskNotFoundError);
    expectWireError(missing, binding, { rpcCode: -32001, httpStatus: 404 });

    const cancel = await rejectionOf(() =>
      client.cancelTask({ tenant: "", id: forged, metadata: undefined }),
    );
    expect(cancel).toBeInstanceOf(TaskNotFoundError);
  });

  it("B4 a message to a completed task is UnsupportedOperation", async () => {
    const done = asTask(await client.sendMessage(textRequest(`done ${tag}`)));
    expectState(done, TaskState.TASK_STATE_COMPLETED);

    const error = await rejectionOf(() =>
      client.sendMessage(textRequest("one more thing", { taskId: done.id })),
    );
    expect(error).toBeInstanceOf(UnsupportedOperationError);
    expectWireError(error, binding, { rpcCode: -32004, httpStatus: 400 });

    // And the task is untouched.
    const after = await getTask(done.id);
    expectState(after, TaskState.TASK_STATE_COMPLETED);
    expect(after.history).toHaveLength(1);
  });

  it("B10 C5 C6 a tool_call part runs the tool; its tool_output comes back as an artifact", async () => {
    const task = asTask(
      await client.sendMessage(
        sendRequest([
          {
            data: { toolName: "add", args: { a: 2, b: 3 }, callId: "c1" },
            metadata: { "edgelink/part": "tool_call" },
          },
        ]),
      ),
    );
    expectState(task, TaskState.TASK_STATE_COMPLETED);
    const result = artifactNamed(task, "result");
    expect(result?.parts).toHaveLength(1);
    const part = result?.parts[0];
    expect(part?.content?.$case).toBe("data");
    expect(part?.content?.value).toEqual({ callId: "c1", result: 5, error: null });
    expect(part?.metadata?.["edgelink/part"]).toBe("tool_output");

    // The tool_call part itself survives the round trip in the history.
    const sent = task.history[0]?.parts[0];
    expect(sent?.content?.value).toEqual({ toolName: "add", args: { a: 2, b: 3 }, callId: "c1" });
    expect(sent?.metadata?.["edgelink/part"]).toBe("tool_call");
  });

  it("B10 C5 an unknown tool yields a failed tool_output and fails the task", async () => {
    const task = asTask(
      await client.sendMessage(
        sendRequest([
          {
            data: { toolName: "multiply", args: { a: 2, b: 3 }, callId: "c2" },
            metadata: { "edgelink/part": "tool_call" },
          },
        ]),
      ),
    );
    expectState(task, TaskState.TASK_STATE_FAILED);
    const output = artifactNamed(task, "result")?.parts[0];
    expect(output?.content?.value).toEqual({
      callId: "c2",
      result: null,
      error: "Unknown tool: multiply",
    });
    expect(statusText(task)).toBe("Tool multiply failed: Unknown tool: multiply");
  });

  it("B10 an exception in the handler fails the task with its message", async () => {
    const task = asTask(await client.sendMessage(textRequest("fail")));
    expectState(task, TaskState.TASK_STATE_FAILED);
    expect(statusText(task)).toBe("You asked me to fail, so I did.");
    expect(task.status?.message?.role).toBe(Role.ROLE_AGENT);
    expect(stateHistory(task)).toEqual(["working", "failed"]);
  });
});
