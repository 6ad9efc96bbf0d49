import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { resolveAgent } from "../../../src/agent/definition";
import { HistoryStore } from "../../../src/conversation/history/history-store";
import { PushDispatcher } from "../../../src/conversation/push/push-dispatcher";
import { PushStore } from "../../../src/conversation/push/push-store";
import { TaskStore } from "../../../src/conversation/tasks/task-store";
import { type Artifact, Artifacts } from "../../../src/protocol/artifact";
import type { TaskEvent } from "../../../src/protocol/events";
import { Messages } from "../../../src/protocol/message";
import { Parts } from "../../../src/protocol/part";
import { verifyPushNotification } from "../../../src/push/verify";
import { contextObjectName } from "../../../src/storage/ids";
import { CONTEXT_SCHEMA } from "../../../src/storage/schema";
import { ensureSchema } from "../../../src/storage/schema-version";
import { rest, send, sleep } from "../../support/helpers";
import { taskFixture } from "../../support/task-fixture";

type Json = Record<string, unknown>;
const HOOK = "https://hooks.example.com/a2a";
const LATER = 7 * 60 * 60_000; // past any backoff delay (at most 6 h) and any chunk's wait

function stubOf(contextId: string) {
  const ns = env.EDGELINK_CONTEXT;
  return ns.get(ns.idFromName(contextObjectName("", contextId)));
}

interface Got {
  url: string;
  headers: [string, string][];
  id: string | null;
  body: string;
}

/** A webhook receiver at the HTTP level: answers from a script, keeps what it got. */
function receiver(statuses: number[] = []) {
  const got: Got[] = [];
  const fetchFn = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const request = new Request(input, init);
    got.push({
      url: request.url,
      headers: [...request.headers],
      id: request.headers.get("x-a2a-event-id"),
      body: await request.text(),
    });
    const status = statuses.shift() ?? 200;
    return new Response(null, { status, headers: status >= 500 ? { "Retry-After": "3600" } : {} });
  }) as typeof fetch;
  return { got, fetchFn };
}

/** Checks every delivery's signature as a receiver would, and returns the events in order. */
async function verified(got: Got[]): Promise<TaskEvent[]> {
  const jwks = (await rest("GET", "/.well-known/jwks.json")).body;
  const events: TaskEvent[] = [];
  for (const g of got) {
    const request = new Request(g.url, { method: "POST", headers: g.headers, body: g.body });
    const result = await verifyPushNotification(request, { keys: jwks as never, audience: HOOK });
    expect(result.eventId).toBe(g.id);
    events.push(result.event);
  }
  return events;
}

/** What a receiver applying deliveries in order (A2A append semantics) ends with. */
function applied(events: TaskEvent[]): Record<string, { name: string | null; parts: unknown[] }> {
  const artifacts: Record<string, { name: string | null; parts: unknown[] }> = {};
  const put = (a: Artifact) => {
    artifacts[a.artifactId] = { name: a.name, parts: [...a.parts] };
  };
  for (const event of events) {
    if (event.kind === "task") for (const a of event.task.artifacts) put(a);
    if (event.kind !== "artifact-update") continue;
    const known = artifacts[event.artifact.artifactId];
    if (event.append && known) known.parts.push(...event.artifact.parts);
    else put(event.artifact);
  }
  return artifacts;
}

/** Each delivery in a word: `task`, a status update's state, or an artifact's part count. */
function shapes(events: TaskEvent[]): string[] {
  return events.map((e) =>
    e.kind === "status-update"
      ? e.status.state
      : e.kind === "artifact-update"
        ? `artifact ${e.artifact.parts.length}${e.append ? " append" : ""}${e.lastChunk ? " last" : ""}`
        : e.kind,
  );
}

/** A working task with one webhook config, in a fresh object's own tables. */
function setUp(state: DurableObjectState, options: { each?: boolean; holdMs?: number } = {}) {
  ensureSchema(state.storage, CONTEXT_SCHEMA); // white-box: the schema a first write makes
  const push = new PushStore(state.storage.sql, {
    artifactChunks: options.each ? "each" : undefined,
    holdMs: options.holdMs,
  });
  const store = new TaskStore(state.storage, new HistoryStore(state.storage), push);
  store.create(taskFixture("t1", "c1"));
  push.saveConfig({ id: "cfg", taskId: "t1", url: HOOK, protocolVersion: "1.0" });
  store.transition("t1", "working");
  const agent = resolveAgent({ card: { name: "p", description: "" }, push: {} });
  const dispatcher = (fetchFn: typeof fetch, on = push) =>
    new PushDispatcher(
      on,
      store,
      agent,
      {},
      () => "https://agent.example.com",
      (id) => store.read(id) as never,
      fetchFn,
    );
  let first = true;
  const chunk = (text: string, last = false) => {
    store.putArtifact(
      "t1",
      Artifacts.create({
        artifactId: "answer",
        name: first ? "answer" : null,
        parts: [Parts.text(text)],
      }),
      { append: !first, lastChunk: last },
    );
    first = false;
  };
  const pending = () =>
    state.storage.sql
      .exec<{ n: number }>("SELECT COUNT(*) AS n FROM push_deliveries WHERE state = 'pending'")
      .one().n;
  return { push, store, dispatcher, chunk, pending };
}

/**
 * The demo agent answers `text` word by word into one artifact (with an inline webhook);
 * returns what the webhook got once the task completed, and the task.
 */
async function answer(text: string, each: boolean) {
  const first = await send("warm up");
  const contextId = first.contextId as string;
  const hook = receiver();
  await runInDurableObject(stubOf(contextId), (instance) => {
    // White-box: this object's webhook goes to the test's receiver, and in the mode asked.
    const o = instance as unknown as { dispatcher: Json; pushStore: Json };
    Object.defineProperty(o.dispatcher, "fetchFn", { value: hook.fetchFn });
    Object.defineProperty(o.pushStore, "coalesces", { value: !each });
    // A loaded machine may take over a second for the 12 words: the last chunk ends the wait.
    Object.defineProperty(o.pushStore, "holdMs", { value: 60_000 });
  });
  const task = await send(
    text,
    { contextId },
    { taskPushNotificationConfig: { url: HOOK, token: "tok" } },
  );
  const done = () => hook.got.some((g) => g.body.includes("TASK_STATE_COMPLETED"));
  for (let i = 0; i < 200 && !done(); i++) await sleep(25);
  await sleep(100); // nothing comes after the final status
  return { got: hook.got, task };
}

describe("coalesced artifact chunks to a webhook (issue 27)", () => {
  it("a 12-word streamed answer makes one artifact delivery, not 12; the receiver builds the same artifact, signed, in order", async () => {
    const words = "one two three four five six seven eight nine ten"; // "You said: " adds 2
    const coalesced = await answer(words, false);
    const each = await answer(words, true);
    const byChunk = await verified(each.got);
    const together = await verified(coalesced.got);

    // Per chunk: the snapshot, the status changes and 12 chunks.
    const states = shapes(byChunk).filter((s) => !s.startsWith("artifact"));
    expect(shapes(byChunk).filter((s) => s.startsWith("artifact"))).toHaveLength(12);
    expect(each.got).toHaveLength(states.length + 12);
    // Coalesced: the same snapshot and status changes, in the same places, and 1 artifact.
    expect(shapes(together)).toEqual([...states.slice(0, -1), "artifact 12 last", "completed"]);
    expect(coalesced.got).toHaveLength(states.length + 1);

    const built = applied(together);
    // Artifact ids differ (two tasks); everything else is the same.
    expect(Object.values(built)).toEqual(Object.values(applied(byChunk)));
    const artifact = Object.values(built)[0];
    expect(artifact?.name).toBe("echo");
    expect(artifact?.parts.map((p) => (p as { content: string }).content).join("")).toBe(
      `You said: ${words}`,
    );
    const stored = (coalesced.task.artifacts as Json[])[0] as Json;
    expect((stored.parts as Json[]).map((p) => p.text).join("")).toBe(`You said: ${words}`);
    for (const { got, task } of [coalesced, each]) {
      const ids = got.map((g) => g.id);
      expect(new Set(ids).size).toBe(ids.length);
      for (const id of ids) expect(id?.startsWith(`${task.id}~`)).toBe(true);
      for (const g of got) {
        expect(new Headers(g.headers).get("x-a2a-notification-token")).toBe("tok");
      }
    }
  });

  it("never past a status update: chunks before it and after it go in two deliveries, in order", async () => {
    const result = await runInDurableObject(stubOf("chunks-status"), async (_i, state) => {
      const { store, dispatcher, chunk, pending } = setUp(state);
      chunk("a ");
      chunk("b ");
      store.statusMessage("t1", Messages.agent("halfway"));
      chunk("c ");
      chunk("d", true);
      store.transition("t1", "completed");
      const hook = receiver();
      const next = await dispatcher(hook.fetchFn).run(Date.now());
      return { got: hook.got, next, left: pending() };
    });
    const events = await verified(result.got);
    expect(shapes(events)).toEqual([
      "working",
      "artifact 2",
      "working",
      "artifact 2 append last",
      "completed",
    ]);
    expect(applied(events).answer?.parts).toEqual(["a ", "b ", "c ", "d"].map(Parts.text));
    expect(result.next).toBeNull();
    expect(result.left).toBe(0);
  });

  it("a chunk not marked last waits for what follows it, at most its hold; the last chunk sends it at once", async () => {
    const result = await runInDurableObject(stubOf("chunks-hold"), async (_i, state) => {
      const { push, dispatcher, chunk } = setUp(state, { holdMs: 60_000 });
      const hook = receiver();
      const d = dispatcher(hook.fetchFn);
      const start = Date.now();
      await d.run(start); // the working status goes
      chunk("a ");
      chunk("b ");
      await d.run(Date.now()); // the chunks wait
      const waiting = { sent: hook.got.length, due: (push.nextDue() ?? 0) - start };
      await d.run(Date.now() + 61_000); // the hold is over: what is there goes
      const afterHold = hook.got.length;
      chunk("c ");
      chunk("d", true); // the last chunk: everything goes now
      await d.run(Date.now());
      return { waiting, afterHold, got: hook.got };
    });
    expect(result.waiting.sent).toBe(1);
    expect(result.waiting.due).toBeGreaterThanOrEqual(60_000);
    expect(result.afterHold).toBe(2);
    expect(shapes(await verified(result.got))).toEqual([
      "working",
      "artifact 2",
      "artifact 2 append last",
    ]);
  });

  it("a failing receiver, then recovering, gets everything in order; an attempted delivery keeps its body, across a restart", async () => {
    const result = await runInDurableObject(stubOf("chunks-retry"), async (_i, state) => {
      const { store, dispatcher, chunk, pending } = setUp(state);
      const hook = receiver([200, 500, 500]);
      const d = dispatcher(hook.fetchFn);
      await d.run(Date.now()); // working
      chunk("a ");
      chunk("b ");
      await d.run(Date.now() + LATER); // past the chunks' hold: they go together, and fail
      chunk("c "); // behind the one in flight, not in it
      chunk("d", true);
      store.transition("t1", "completed");
      await d.run(Date.now() + 2 * LATER); // fails again
      // A new instance after a restart has only the storage.
      const fresh = new PushStore(state.storage.sql);
      for (let round = 3; round < 8 && pending(); round++) {
        await dispatcher(hook.fetchFn, fresh).run(Date.now() + round * LATER);
      }
      return { got: hook.got, left: pending() };
    });
    const [working, tried, retried, again, rest, completed] = result.got;
    expect(result.got).toHaveLength(6);
    expect(retried?.body).toBe(tried?.body);
    expect(again?.body).toBe(tried?.body);
    expect(new Set([tried?.id, retried?.id, again?.id]).size).toBe(1);
    const events = await verified([working, tried, rest, completed] as Got[]);
    expect(shapes(events)).toEqual([
      "working",
      "artifact 2",
      "artifact 2 append last",
      "completed",
    ]);
    expect(applied(events).answer?.parts).toEqual(["a ", "b ", "c ", "d"].map(Parts.text));
    expect(result.left).toBe(0);
  });

  it("chunks attempted before (one by one, then a deploy coalescing them) keep their bodies; dead letters put back too", async () => {
    const retried = await runInDurableObject(stubOf("chunks-switch"), async (_i, state) => {
      const { dispatcher, chunk } = setUp(state, { each: true });
      chunk("a ");
      chunk("b ", true);
      const hook = receiver([200, 500]);
      await dispatcher(hook.fetchFn).run(Date.now()); // working; "a " fails, "b " waits
      const coalescing = new PushStore(state.storage.sql);
      await dispatcher(hook.fetchFn, coalescing).run(Date.now() + LATER);
      return hook.got;
    });
    const redelivered = await runInDurableObject(stubOf("chunks-dead"), async (_i, state) => {
      const { push, dispatcher, chunk } = setUp(state, { each: true });
      chunk("a ");
      chunk("b ", true);
      const hook = receiver([200, 400, 400]); // permanent: both chunks dead-lettered
      await dispatcher(hook.fetchFn).run(Date.now());
      push.redeliver("t1", Date.now());
      const coalescing = new PushStore(state.storage.sql);
      await dispatcher(hook.fetchFn, coalescing).run(Date.now());
      return hook.got;
    });
    expect(shapes(await verified(retried))).toEqual([
      "working",
      "artifact 1",
      "artifact 1",
      "artifact 1 append last",
    ]);
    expect(retried[2]?.body).toBe(retried[1]?.body);
    expect(shapes(await verified(redelivered))).toEqual([
      "working",
      "artifact 1",
      "artifact 1 append last",
      "artifact 1",
      "artifact 1 append last",
    ]);
  });

  it("one delivery takes along about a million characters of chunks; the rest go in the next", async () => {
    const result = await runInDurableObject(stubOf("chunks-big"), async (_i, state) => {
      const { dispatcher, chunk } = setUp(state);
      chunk("a".repeat(400_000));
      chunk("b".repeat(400_000));
      chunk("c".repeat(400_000));
      chunk("d", true);
      const hook = receiver();
      await dispatcher(hook.fetchFn).run(Date.now());
      return { got: hook.got };
    });
    const events = await verified(result.got);
    expect(shapes(events)).toEqual(["working", "artifact 2", "artifact 2 append last"]);
    expect(result.got.every((g) => g.body.length < 1024 * 1024)).toBe(true);
  });

  it('push.artifactChunks "each" sends one delivery per chunk, at once', async () => {
    const result = await runInDurableObject(stubOf("chunks-each"), async (_i, state) => {
      const { dispatcher, chunk } = setUp(state, { each: true });
      chunk("a ");
      chunk("b ");
      chunk("c", true);
      const hook = receiver();
      await dispatcher(hook.fetchFn).run(Date.now());
      return { got: hook.got };
    });
    expect(shapes(await verified(result.got))).toEqual([
      "working",
      "artifact 1",
      "artifact 1 append",
      "artifact 1 append last",
    ]);
  });

  it("push.artifactChunks accepts only coalesced or each, named in the error", () => {
    const card = { name: "p", description: "" };
    expect(() => resolveAgent({ card, push: { artifactChunks: "sometimes" as never } })).toThrow(
      /push\.artifactChunks must be "coalesced" or "each"/,
    );
    expect(resolveAgent({ card, push: { artifactChunks: "each" } }).push).toMatchObject({
      artifactChunks: "each",
    });
  });
});
