import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { HistoryStore } from "../../../src/conversation/history/history-store";
import { TaskStore } from "../../../src/conversation/tasks/task-store";
import { contextObjectName } from "../../../src/storage/ids";
import { CONTEXT_LISTING_KEEP, CONTEXT_SCHEMA } from "../../../src/storage/schema";
import { ensureSchema } from "../../../src/storage/schema-version";
import { rpc, sleep, userMessage } from "../../support/helpers";
import { taskFixture } from "../../support/task-fixture";

type Json = Record<string, unknown>;

/**
 * SendMessage in a tenant (`params.tenant`; "" is the default one). Test files share
 * storage, so a listing across conversations needs a tenant no other file writes to.
 */
async function sendIn(tenant: string, text: string, extra: Json = {}): Promise<Json> {
  const { body } = await rpc("SendMessage", {
    ...(tenant ? { tenant } : {}),
    message: userMessage(text, extra),
  });
  if (!body.result) throw new Error(`SendMessage failed: ${JSON.stringify(body.error)}`);
  return (body.result as { task: Json }).task;
}

/** Tasks waiting for input in one conversation, each of which an answer will update. */
async function waitingTasks(n: number, tenant = ""): Promise<{ contextId: string; ids: string[] }> {
  const first = await sendIn(tenant, "hello");
  const contextId = first.contextId as string;
  const ids = [first.id as string];
  for (let i = 1; i < n; i++) {
    await sleep(2); // distinct status timestamps, as tasks made apart have
    ids.push((await sendIn(tenant, "hello", { contextId })).id as string);
  }
  return { contextId, ids };
}

async function list(params: Json): Promise<{ ids: string[]; next: string }> {
  const { body } = await rpc("ListTasks", params);
  if (!body.result) throw new Error(JSON.stringify(body.error));
  const result = body.result as { tasks: Json[]; nextPageToken: string };
  return { ids: result.tasks.map((t) => t.id as string), next: result.nextPageToken };
}

/** Answers waiting tasks at once (each moves to the top of the update order). */
const answer = (tenant: string, contextId: string, ...taskIds: string[]) =>
  Promise.all(taskIds.map((taskId) => sendIn(tenant, "Ada", { contextId, taskId })));

/**
 * Lists until the newest tasks include `top` (at once for a conversation; the tenant index
 * may take its flush window to hear of a change), so the changes are in place between
 * the page reads.
 */
async function settled(params: Json, top: string[], within: number): Promise<string[]> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const { ids } = await list({ ...params, pageSize: 100 });
    if (top.every((id) => ids.slice(0, within).includes(id))) return ids;
    if (Date.now() > deadline) throw new Error(`ListTasks never showed ${top} first`);
    await sleep(50);
  }
}

/**
 * Pages through a listing while tasks change between reads: after the first page two
 * not-yet-listed tasks and a listed one are answered and a new task starts; after the
 * second, the last task is answered. Every page is read as the first page saw the list.
 */
async function pageWhileUpdating(params: Json, contextId: string, ids: string[]) {
  const whole = await settled(params, ids, ids.length);
  const page1 = await list({ ...params, pageSize: 3 });
  const moved = [whole[3], whole[5], whole[0]] as string[];
  const tenant = (params.tenant as string | undefined) ?? "";
  await Promise.all([answer(tenant, contextId, ...moved), sendIn(tenant, "hello", { contextId })]);
  await settled(params, moved, 4);
  const page2 = await list({ ...params, pageSize: 3, pageToken: page1.next });
  await answer(tenant, contextId, whole[6] as string);
  await settled(params, [whole[6] as string], 1);
  const page3 = await list({ ...params, pageSize: 3, pageToken: page2.next });
  return { whole, pages: [page1.ids, page2.ids, page3.ids], last: page3.next };
}

describe("ListTasks pages a snapshot (issue 10)", () => {
  it("in a conversation: tasks updated between page reads are neither skipped nor repeated", async () => {
    const { contextId, ids } = await waitingTasks(7);
    const { whole, pages, last } = await pageWhileUpdating({ contextId }, contextId, ids);
    expect(new Set(whole)).toEqual(new Set(ids));
    expect(pages.flat()).toEqual(whole);
    expect(pages.map((p) => p.length)).toEqual([3, 3, 1]);
    expect(last).toBe("");
    // A new listing sees the changes: the answered tasks first, the new one among them.
    expect((await list({ contextId, pageSize: 100 })).ids).toHaveLength(8);
  });

  it("across conversations (the tenant index): tasks updated between page reads are neither skipped nor repeated", async () => {
    const since = new Date().toISOString();
    await sleep(2);
    const tenant = `list-pages-${crypto.randomUUID()}`;
    const { contextId, ids } = await waitingTasks(7, tenant);
    const { whole, pages } = await pageWhileUpdating(
      { tenant, statusTimestampAfter: since },
      contextId,
      ids,
    );
    expect(new Set(whole)).toEqual(new Set(ids));
    expect(pages.flat()).toEqual(whole);
  });

  it("a change records the task's old place only while a page token may hold it (issue 10)", async () => {
    const stub = env.EDGELINK_CONTEXT.get(env.EDGELINK_CONTEXT.idFromName("list-moves-lazy"));
    const moves = await runInDurableObject(stub, async (_i, state) => {
      ensureSchema(state.storage, CONTEXT_SCHEMA); // white-box: the schema a first write makes
      const count = () =>
        state.storage.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM list_moves").one().n;
      const fresh = () => new TaskStore(state.storage, new HistoryStore(state.storage));
      let store = fresh();
      const counts: number[] = [];
      for (const id of ["m1", "m2", "m3"]) store.create(taskFixture(id), true);
      await sleep(2);
      // No page read since the tasks were written: no token holds them, nothing recorded.
      store.transition("m1", "input-required");
      counts.push(count());
      // A first page: its token's snapshot holds m2 and m3, whose changes now record moves.
      const page1 = store.page({ pageSize: 1 });
      await sleep(2);
      store.transition("m2", "input-required");
      counts.push(count());
      // m2 changed after the snapshot: its next change is in no snapshot, nothing recorded.
      await sleep(2);
      store.transition("m2", "working");
      counts.push(count());
      // After a restart the store cannot know which tokens exist: every row is in one.
      store = fresh();
      await sleep(2);
      store.transition("m1", "working");
      counts.push(count());
      // The token of before still pages as its first page saw the list.
      const rest = store.page({ pageSize: 5, pageToken: page1.nextPageToken }).rows;
      return { counts, ids: [...page1.rows, ...rest].map((r) => r.id) };
    });
    expect(moves.counts).toEqual([0, 1, 1, 2]);
    expect(moves.ids).toEqual(["m1", "m3", "m2"]);
  });

  it("a page token older than the moves kept has expired: InvalidParams naming pageToken", async () => {
    const { contextId } = await waitingTasks(3);
    const page1 = await list({ contextId, pageSize: 1 });
    // As if CONTEXT_LISTING_KEEP tasks had changed since the first page.
    await runInDurableObject(
      env.EDGELINK_CONTEXT.get(env.EDGELINK_CONTEXT.idFromName(contextObjectName("", contextId))),
      (_i, state) => {
        state.storage.sql.exec("UPDATE list_clock SET seq = seq + ?", CONTEXT_LISTING_KEEP + 1);
      },
    );
    const { body } = await rpc("ListTasks", { contextId, pageSize: 1, pageToken: page1.next });
    expect(body.error).toMatchObject({ code: -32602 });
    expect(JSON.stringify(body.error)).toMatch(/pageToken has expired/);
    expect(JSON.stringify(body.error)).toContain("params.pageToken");
  });
});
