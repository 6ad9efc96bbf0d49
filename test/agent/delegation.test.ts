import { env, runInDurableObject, SELF } from "cloudflare:test";
import { beforeEach, describe, expect, it, vi } from "vitest";
import type { A2AClient } from "../../src/client/a2a-client";
import { connect } from "../../src/client/connect";
import { contextObjectName } from "../../src/storage/ids";
import { type Env, harness } from "../harness/agents/worker";
import { parseSse, sleep, userMessage } from "../support/helpers";

type Json = Record<string, unknown>;
const workerEnv = env as unknown as Env;
const PARENT = "http://parent.test";

async function rpc(method: string, params: Json): Promise<Json> {
  const response = await SELF.fetch(`${PARENT}/`, {
    method: "POST",
    headers: { "Content-Type": "application/json", "A2A-Version": "1.0" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  return (await response.json()) as Json;
}

async function sendToParent(text: string, returnImmediately = false): Promise<Json> {
  const body = await rpc("SendMessage", {
    message: userMessage(text),
    configuration: { returnImmediately },
  });
  if (!body.result) throw new Error(JSON.stringify(body.error));
  return (body.result as { task: Json }).task;
}

async function streamFromParent(text: string): Promise<Json[]> {
  const response = await SELF.fetch(`${PARENT}/`, {
    method: "POST",
    headers: { "Content-Type": "application/json", "A2A-Version": "1.0" },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "SendStreamingMessage",
      params: { message: userMessage(text) },
    }),
  });
  return parseSse(await response.text()).map((e) => (e.data as { result: Json }).result);
}

async function parentTask(id: string): Promise<Json> {
  return (await rpc("GetTask", { id })).result as Json;
}

async function waitForParent(id: string, state: string, timeoutMs = 10_000): Promise<Json> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const task = await parentTask(id);
    if ((task.status as Json).state === state) return task;
    if (Date.now() > deadline) {
      throw new Error(`parent ${id} is ${JSON.stringify(task.status)}, never reached ${state}`);
    }
    await sleep(40);
  }
}

const textOf = (task: Json) =>
  ((task.artifacts ?? []) as { parts: { text?: string }[] }[])
    .flatMap((a) => a.parts.map((p) => p.text ?? ""))
    .join("");

function parentStub(contextId: string) {
  const ns = workerEnv.PARENT_CONTEXT;
  return ns.get(ns.idFromName(contextObjectName("", contextId)));
}

type ChildRow = {
  key: string;
  target: string;
  child_task_id: string | null;
  child_context_id: string | null;
  last_event_id: string | null;
  state: string;
};

async function childRows(contextId: string): Promise<ChildRow[]> {
  return runInDurableObject(parentStub(contextId), (_instance, state) =>
    state.storage.sql.exec<ChildRow>("SELECT * FROM children ORDER BY rowid").toArray(),
  );
}

/** The demo agent, through the same service binding the parent uses. */
function demo(): Promise<A2AClient> {
  return connect("https://demo.binding/", {
    fetch: (input, init) => workerEnv.DEMO.fetch(input as RequestInfo, init),
  });
}

beforeEach(() => {
  harness.parent = null;
  harness.parentRuns = 0;
});

describe("ctx.delegate to another Worker through a service binding", () => {
  it("creates a child task on the other agent and returns its answer; the child is recorded", async () => {
    harness.parent = async (ctx) => {
      const child = ctx.delegate(ctx.env.DEMO, "echo this please");
      return `The demo agent said: ${await child.answer()}`;
    };
    const task = await sendToParent("go");
    expect((task.status as Json).state).toBe("TASK_STATE_COMPLETED");
    expect(textOf(task)).toBe("The demo agent said: You said: echo this please");

    const [row] = await childRows(task.contextId as string);
    expect(row).toMatchObject({ key: "1", target: "binding:DEMO", state: "completed" });
    expect(row?.last_event_id).toMatch(/^\d+$/);
    const child = await (await demo()).getTask(row?.child_task_id as string);
    expect(child.status.state).toBe("completed");
    expect(child.contextId).toBe(row?.child_context_id);
  });

  it("the parent's steps (the inspector's, not its metadata) show each delegation for the waterfall: target, child task id, state, start and duration", async () => {
    harness.parent = async (ctx) => {
      const first = ctx.delegate(ctx.env.DEMO, "one");
      await first.answer();
      const second = ctx.delegate(ctx.env.DEMO, "two");
      return `${await second.answer()}`;
    };
    const before = Date.now();
    const task = await sendToParent("go twice");
    expect((task.status as Json).state).toBe("TASK_STATE_COMPLETED");
    // The task a client reads names no other agent.
    const metadata = ((await parentTask(task.id as string)).metadata ?? {}) as Json;
    expect(metadata.delegations).toBeUndefined();
    const steps = await SELF.fetch(`${PARENT}/inspector/tasks/${task.id}/steps`);
    expect(steps.status).toBe(200);
    const delegations = ((await steps.json()) as Json).delegations as Json[];
    const rows = await childRows(task.contextId as string);
    expect(delegations).toEqual(
      rows.map((row) => ({
        key: row.key,
        target: "binding:DEMO",
        childTaskId: row.child_task_id,
        state: "completed",
        at: expect.any(Number),
        ms: expect.any(Number),
      })),
    );
    expect(delegations).toHaveLength(2);
    const [one, two] = delegations as { at: number; ms: number }[];
    expect(one?.at).toBeGreaterThanOrEqual(before);
    expect(two?.at).toBeGreaterThanOrEqual((one?.at ?? 0) + (one?.ms ?? 0));
  });

  it("the handle's events are the child's, in order, each with its event id", async () => {
    let seen: string[] = [];
    harness.parent = async (ctx) => {
      seen = [];
      for await (const event of ctx.delegate(ctx.env.DEMO, "count 2")) {
        seen.push(event.kind === "status-update" ? `status:${event.status.state}` : event.kind);
        expect(event.eventId).toMatch(/^\d+$/);
      }
      return "done";
    };
    await sendToParent("go");
    expect(seen[0]).toBe("task");
    expect(seen.at(-1)).toBe("status:completed");
    expect(seen.filter((s) => s === "status:working").length).toBeGreaterThanOrEqual(2);
  });

  it("forward() streams the child's status messages and artifacts into the parent's task", async () => {
    harness.parent = async (ctx) => {
      await ctx.delegate(ctx.env.DEMO, "count 2").forward();
    };
    const events = await streamFromParent("go");
    const statuses = events.flatMap((e) =>
      e.statusUpdate ? [(e.statusUpdate as { status: Json }).status] : [],
    );
    const progress = statuses.flatMap((s) =>
      s.message ? [((s.message as Json).parts as { text: string }[])[0]?.text] : [],
    );
    expect(progress).toEqual(["1…", "2…"]);
    expect(statuses.at(-1)?.state).toBe("TASK_STATE_COMPLETED");
    const artifacts = events.flatMap((e) =>
      e.artifactUpdate ? [(e.artifactUpdate as { artifact: Json }).artifact] : [],
    );
    expect(artifacts.map((a) => (a.parts as { text: string }[])[0]?.text)).toEqual([
      "Counted to 2.",
    ]);
    expect(artifacts[0]?.artifactId).toMatch(/^1\//);
  });

  it("a restart of the parent's object mid-child resumes following the child (Last-Event-ID): it completes, nothing duplicated", async () => {
    const words = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu";
    harness.parent = async (ctx) => {
      const task = await ctx.delegate(ctx.env.DEMO, words).forward();
      ctx.status(`child ended ${task.status.state}`);
    };
    const started = await sendToParent("go", true);
    const id = started.id as string;
    const contextId = started.contextId as string;
    // Wait until some of the child's words were forwarded, then restart the parent's object.
    const deadline = Date.now() + 5000;
    while (textOf(await parentTask(id)).split(" ").length < 4 && Date.now() < deadline) {
      await sleep(20);
    }
    const before = await childRows(contextId);
    expect(before[0]?.state).toBe("working");
    await runInDurableObject(parentStub(contextId), (_instance, state) => {
      state.abort("simulated restart");
    }).catch(() => {});

    const done = await waitForParent(id, "TASK_STATE_COMPLETED");
    expect(harness.parentRuns).toBe(2);
    expect(textOf(done)).toBe(`You said: ${words}`);
    // One artifact, chunks appended once each.
    expect((done.artifacts as unknown[]).length).toBe(1);

    const after = await childRows(contextId);
    expect(after).toHaveLength(1);
    expect(after[0]?.child_task_id).toBe(before[0]?.child_task_id);
    expect(after[0]?.state).toBe("completed");
    expect(Number(after[0]?.last_event_id)).toBeGreaterThan(Number(before[0]?.last_event_id));
    // The demo agent got one task in that conversation, not two.
    const client = await demo();
    const pages: string[] = [];
    for await (const page of client.listTasks({ contextId: after[0]?.child_context_id ?? "" })) {
      pages.push(...page.tasks.map((t) => t.id));
    }
    expect(pages).toEqual([after[0]?.child_task_id]);
  });

  it("canceling the parent cancels its child on the other agent", async () => {
    harness.parent = async (ctx) => {
      await ctx.delegate(ctx.env.DEMO, "count 30").forward();
    };
    const started = await sendToParent("go", true);
    const contextId = started.contextId as string;
    let rows: ChildRow[] = [];
    for (let i = 0; i < 100 && !rows[0]?.child_task_id; i++) {
      await sleep(20);
      rows = await childRows(contextId).catch(() => []);
    }
    const childId = rows[0]?.child_task_id as string;
    const canceled = await rpc("CancelTask", { id: started.id });
    expect(((canceled.result as Json).status as Json).state).toBe("TASK_STATE_CANCELED");
    const client = await demo();
    let state = "";
    for (let i = 0; i < 100 && state !== "canceled"; i++) {
      state = (await client.getTask(childId)).status.state;
      if (state !== "canceled") await sleep(20);
    }
    expect(state).toBe("canceled");
  });

  it("a service binding that is not one of the Worker's bindings is refused with a clear error", async () => {
    harness.parent = async (ctx) => {
      const stranger = { fetch: (input: RequestInfo) => ctx.env.DEMO.fetch(input) };
      await ctx.delegate(stranger as unknown as Fetcher, "hi").answer();
    };
    const task = await sendToParent("go");
    expect((task.status as Json).state).toBe("TASK_STATE_FAILED");
  });
});

describe("tasks made through a service binding, listed by an anonymous caller", () => {
  /** A call of the demo agent through the binding, as a calling Worker makes it. */
  const viaBinding = async (path: string, init: RequestInit = {}) => {
    const response = await workerEnv.DEMO.fetch(`https://demo.binding${path}`, {
      ...init,
      headers: { "content-type": "application/json", "a2a-version": "1.0" },
    });
    return (await response.json()) as Json;
  };
  const rpcViaBinding = (method: string, params: Json) =>
    viaBinding("/", {
      method: "POST",
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
    });
  /** Every task id an anonymous ListTasks shows, page by page, over one binding. */
  const listed = async (binding: "JSONRPC" | "HTTP+JSON") => {
    const ids: string[] = [];
    let pageToken = "";
    do {
      const page =
        binding === "JSONRPC"
          ? ((await rpcViaBinding("ListTasks", { pageSize: 100, pageToken })).result as Json)
          : await viaBinding(`/tasks?pageSize=100${pageToken ? `&pageToken=${pageToken}` : ""}`);
      ids.push(...(page.tasks as Json[]).map((t) => t.id as string));
      pageToken = page.nextPageToken as string;
    } while (pageToken);
    return ids;
  };

  it("a task sent over JSON-RPC or HTTP+JSON, and a delegated child, are each listed on both bindings", async () => {
    const rpcTask = (
      (await rpcViaBinding("SendMessage", { message: userMessage("via rpc") })).result as Json
    ).task as Json;
    const restTask = (
      await viaBinding("/message:send", {
        method: "POST",
        body: JSON.stringify({ message: userMessage("via rest") }),
      })
    ).task as Json;
    harness.parent = async (ctx) => ctx.delegate(ctx.env.DEMO, "via delegation").answer();
    const parent = await sendToParent("go");
    const [child] = await childRows(parent.contextId as string);
    const made = [rpcTask.id, restTask.id, child?.child_task_id];
    expect(made.every((id) => typeof id === "string" && id !== "")).toBe(true);
    // The delegated child is streamed: its row reaches the index within limits.indexFlushMs.
    for (const binding of ["JSONRPC", "HTTP+JSON"] as const) {
      await vi.waitFor(
        async () => {
          const ids = await listed(binding);
          expect(
            made.filter((id) => !ids.includes(id as string)),
            binding,
          ).toEqual([]);
        },
        { timeout: 10_000, interval: 100 },
      );
    }
  });
});
