import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { resolveAgent } from "../../../src/agent/definition";
import { HistoryStore } from "../../../src/conversation/history/history-store";
import { PushDispatcher } from "../../../src/conversation/push/push-dispatcher";
import { PushStore } from "../../../src/conversation/push/push-store";
import { TaskStore } from "../../../src/conversation/tasks/task-store";
import { Artifacts } from "../../../src/protocol/artifact";
import { Messages } from "../../../src/protocol/message";
import { Parts } from "../../../src/protocol/part";
import { contextObjectName } from "../../../src/storage/ids";
import { CONTEXT_SCHEMA } from "../../../src/storage/schema";
import { ensureSchema } from "../../../src/storage/schema-version";
import { taskFixture } from "../../support/task-fixture";

type Json = Record<string, unknown>;
const HOOK = "https://hooks.example.com/a2a";
const LATER = 7 * 60 * 60_000; // past any backoff delay (at most 6 h)

function stubOf(name: string) {
  const ns = env.EDGELINK_CONTEXT;
  return ns.get(ns.idFromName(contextObjectName("", name)));
}

/**
 * A webhook receiver at the HTTP level: answers from a script, keeps what it got. Its
 * failures ask for a retry in an hour, so no retry falls due within one `run` (a jittered
 * delay can be a few ms) and each round of the test is one attempt per config.
 */
function receiver(statuses: number[]) {
  const got: { id: string | null; body: string }[] = [];
  const fetchFn = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const request = new Request(input, init);
    got.push({ id: request.headers.get("x-a2a-event-id"), body: await request.text() });
    const status = statuses.shift() ?? 200;
    return new Response(null, { status, headers: status >= 500 ? { "Retry-After": "3600" } : {} });
  }) as typeof fetch;
  return { got, fetchFn };
}

/** A working task with one webhook config, in a fresh object's own tables. */
function setUp(state: DurableObjectState, unhealthyAfter: number) {
  ensureSchema(state.storage, CONTEXT_SCHEMA); // white-box: the schema a first write makes
  const push = new PushStore(state.storage.sql);
  // Artifacts up to 16 Mi: a snapshot may pass the webhook's 8 Mi with its history too.
  const store = new TaskStore(state.storage, new HistoryStore(state.storage), push, {
    taskArtifactChars: 16 * 1024 * 1024,
  });
  store.create(taskFixture("t1", "c1"));
  push.saveConfig({ id: "cfg", taskId: "t1", url: HOOK, protocolVersion: "1.0" });
  store.transition("t1", "working");
  const agent = resolveAgent({ card: { name: "p", description: "" }, push: { unhealthyAfter } });
  const dispatcher = (fetchFn: typeof fetch) =>
    new PushDispatcher(
      push,
      store,
      agent,
      {},
      () => "https://agent.example.com",
      (id) => store.read(id) as never,
      fetchFn,
    );
  const step = (text: string) => store.statusMessage("t1", Messages.agent(text));
  const pending = () =>
    state.storage.sql
      .exec<{ event_seq: number | null; skipped: number }>(
        "SELECT event_seq, skipped FROM push_deliveries WHERE state = 'pending' ORDER BY seq",
      )
      .toArray()
      .map((r) => ({ ...r }));
  return { push, store, dispatcher, step, pending };
}

/** What a delivery body says: a status update's text, or a snapshot's status and count. */
function said(body: string): string {
  const json = JSON.parse(body) as Json;
  const text = (m: unknown) => ((m as Json | null)?.parts as Json[] | undefined)?.[0]?.text;
  if (json.statusUpdate) {
    const status = (json.statusUpdate as Json).status as Json;
    return `update ${status.state} ${text(status.message) ?? ""}`.trim();
  }
  const task = json.task as Json;
  const status = task.status as Json;
  const count = (task.metadata as Json | undefined)?.pushCoalescedEvents;
  return `task ${status.state} ${text(status.message) ?? ""} (coalesced ${count})`;
}

describe("webhook health (issue 10)", () => {
  it("after unhealthyAfter failures in a row the queue coalesces into one task snapshot; probes go on; a success restores the config and delivery resumes in order", async () => {
    const result = await runInDurableObject(stubOf("push-health"), async (_i, state) => {
      const { push, store, dispatcher, step, pending } = setUp(state, 2);
      step("s1");
      step("s2");
      step("s3");
      const queued = pending().length;
      const hook = receiver([500, 500, 500, 200, 200, 200]);
      const d = dispatcher(hook.fetchFn);
      let now = Date.now();
      await d.run(now); // the first event fails: 1 in a row
      now += LATER;
      await d.run(now); // fails again: unhealthy, the queue coalesces
      const afterUnhealthy = pending();
      const unhealthyMeta = store.read("t1")?.metadata;
      const unhealthyHealth = push.health("t1");
      step("s4"); // folded into the coalesced delivery, not queued
      step("s5");
      const whileUnhealthy = pending();
      now += LATER;
      await d.run(now); // the probe (the coalesced snapshot) fails; its body is now fixed
      step("s6"); // a new coalesced delivery behind the one being probed
      const behindProbe = pending();
      now += LATER;
      await d.run(now); // the probe succeeds: healthy; the next coalesced one goes at once
      store.transition("t1", "completed", { message: Messages.agent("done") });
      await d.run(now); // healthy: one delivery per event again
      return {
        queued,
        afterUnhealthy,
        unhealthyMeta,
        unhealthyHealth,
        whileUnhealthy,
        behindProbe,
        said: hook.got.map((g) => said(g.body)),
        got: hook.got,
        metadata: store.read("t1")?.metadata,
        health: push.health("t1"),
        left: pending(),
      };
    });
    expect(result.queued).toBe(4);
    // Four events (the one in flight included) became one snapshot delivery.
    expect(result.afterUnhealthy).toEqual([{ event_seq: null, skipped: 4 }]);
    // The health is the owner's to read (the task's steps), never in the task every
    // receiver gets: a config id would tell one receiver of another.
    expect(result.unhealthyHealth).toEqual({ unhealthy: ["cfg"], skipped: 4 });
    expect(JSON.stringify(result.unhealthyMeta ?? {})).not.toMatch(/push|cfg/);
    expect(result.whileUnhealthy).toEqual([{ event_seq: null, skipped: 6 }]);
    expect(result.behindProbe).toEqual([
      { event_seq: null, skipped: 6 },
      { event_seq: null, skipped: 1 },
    ]);
    expect(result.said).toEqual([
      "update TASK_STATE_WORKING",
      "update TASK_STATE_WORKING",
      "task TASK_STATE_WORKING s5 (coalesced 6)",
      "task TASK_STATE_WORKING s5 (coalesced 6)",
      "task TASK_STATE_WORKING s6 (coalesced 1)",
      "update TASK_STATE_COMPLETED done",
    ]);
    // The probe's retry is the same bytes under the same event id.
    expect(result.got[3]?.body).toBe(result.got[2]?.body);
    expect(result.got[3]?.id).toBe(result.got[2]?.id);
    expect(new Set(result.got.map((g) => g.id)).size).toBe(4);
    expect(result.health).toEqual({ unhealthy: [], skipped: 7 });
    expect(JSON.stringify(result.metadata ?? {})).not.toMatch(/push|cfg/);
    expect(result.left).toEqual([]);
  });

  it("failures that are not in a row never make a config unhealthy: every event goes, one by one", async () => {
    const result = await runInDurableObject(stubOf("push-health-flaky"), async (_i, state) => {
      const { store, dispatcher, step, pending } = setUp(state, 2);
      step("s1");
      step("s2");
      const hook = receiver([500, 200, 500, 200, 500, 200]);
      const d = dispatcher(hook.fetchFn);
      let now = Date.now();
      for (let round = 0; round < 6 && pending().length; round++) {
        await d.run(now);
        now += LATER;
      }
      return { said: hook.got.map((g) => said(g.body)), metadata: store.read("t1")?.metadata };
    });
    expect(result.said).toEqual([
      "update TASK_STATE_WORKING",
      "update TASK_STATE_WORKING",
      "update TASK_STATE_WORKING s1",
      "update TASK_STATE_WORKING s1",
      "update TASK_STATE_WORKING s2",
      "update TASK_STATE_WORKING s2",
    ]);
    expect(result.metadata?.pushSkippedEvents).toBeUndefined();
  });

  it("push.unhealthyAfter must be a positive number, named in the error", () => {
    const card = { name: "p", description: "" };
    expect(() => resolveAgent({ card, push: { unhealthyAfter: 0 } })).toThrow(
      /push\.unhealthyAfter must be a positive number/,
    );
  });

  it("a coalesced snapshot that runs out of attempts is dead-lettered with the events it stood for", async () => {
    const result = await runInDurableObject(stubOf("push-health-dead"), async (_i, state) => {
      ensureSchema(state.storage, CONTEXT_SCHEMA);
      const { push, dispatcher, step, pending } = setUp(state, 1);
      step("s1");
      const d = dispatcher(receiver(Array(20).fill(503)).fetchFn);
      let now = Date.now();
      for (let round = 0; round < 20 && pending().length; round++) {
        await d.run(now);
        now += LATER;
      }
      return { dead: push.dead("t1") };
    });
    expect(result.dead).toHaveLength(1);
    expect(result.dead[0]).toMatchObject({ eventSeq: null, skipped: 2 });
  });
  it("a coalesced snapshot too big for one row is frozen across chunk rows: its retry is the same bytes", async () => {
    const result = await runInDurableObject(stubOf("push-health-big"), async (_i, state) => {
      const { dispatcher, step } = setUp(state, 1);
      const hook = receiver([500, 500, 200, 200]);
      const d = dispatcher(hook.fetchFn);
      let now = Date.now();
      await d.run(now); // the first event fails: unhealthy, the queue coalesces
      step("é".repeat(600_000)); // folded into the coalesced delivery
      now += LATER;
      await d.run(now); // the probe fails; its 1.2 MB body is now fixed in chunk rows
      const chunks = state.storage.sql
        .exec<{ n: number }>("SELECT COUNT(*) AS n FROM push_snapshot_chunks")
        .one().n;
      step("after the probe"); // the task moves on before the retry
      now += LATER;
      await d.run(now);
      return { chunks, got: hook.got };
    });
    expect(result.chunks).toBeGreaterThan(1);
    const [probe, retry] = result.got.slice(1, 3);
    expect(said(probe?.body ?? "{}")).toMatch(/^task TASK_STATE_WORKING é+ \(coalesced 2\)$/);
    expect(retry?.body).toBe(probe?.body);
    expect(retry?.id).toBe(probe?.id);
  });

  it("a coalesced snapshot over the 8 Mi-character limit is dead-lettered with the reason, never sent with changing bytes", async () => {
    const result = await runInDurableObject(stubOf("push-health-huge"), async (_i, state) => {
      const { push, store, dispatcher } = setUp(state, 1);
      const hook = receiver([500, 200, 200]);
      const d = dispatcher(hook.fetchFn);
      await d.run(Date.now()); // unhealthy: the working event becomes a coalesced snapshot
      // Five appended parts of 1.8 M ASCII characters each: one task of 9 M characters.
      const parts = [Parts.text("x".repeat(1_800_000))];
      for (let i = 0; i < 5; i++) {
        store.putArtifact("t1", Artifacts.create({ artifactId: "big", parts }), {
          append: i > 0,
          lastChunk: i === 4,
        });
      }
      await d.run(Date.now() + LATER);
      return { dead: push.dead("t1"), sent: hook.got.length };
    });
    expect(result.sent).toBe(1);
    expect(result.dead).toHaveLength(1);
    expect(result.dead[0]?.lastError).toMatch(/over the 8388608 a webhook delivery keeps/);
  });
});
