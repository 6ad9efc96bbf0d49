import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { DEFAULT_LIMITS, resolveLimits } from "../../src/agent/limits";
import type { IndexRow } from "../../src/index/index-object";
import { type IndexScope, listIndex, listOrder } from "../../src/index/index-shards";
import { A2AError } from "../../src/protocol/errors";
import {
  contextObjectName,
  encodeCursor,
  idKeys,
  indexObjectName,
  indexShardOf,
  issuedContextId,
} from "../../src/storage/ids";
import type { PageQuery } from "../../src/storage/paging";
import { INDEX_LISTING_KEEP } from "../../src/storage/schema";
import { withLimits as setLimits } from "../support/agent-override";
import { BASE, rpc, sleep, userMessage } from "../support/helpers";

type Json = Record<string, unknown>;
type Upsert = { upsert(rows: IndexRow[]): Promise<void> };

const SHARDS = DEFAULT_LIMITS.indexShards;
const newTenant = () => `shards-${crypto.randomUUID()}`;

const shardStub = (scope: IndexScope, shard: number) =>
  env.EDGELINK_INDEX.get(
    env.EDGELINK_INDEX.idFromName(indexObjectName(scope.tenant, scope.owner, shard, scope.shards)),
  );

/** Context ids (`ctx-<n>`) whose rows go to `shard` of `shards`. */
function contextsIn(shard: number, shards: number, count: number): string[] {
  const found: string[] = [];
  for (let n = 0; found.length < count; n++) {
    if (indexShardOf(`ctx-${n}`, shards) === shard) found.push(`ctx-${n}`);
  }
  return found;
}

/** Writes rows straight into the shards their contexts hash to, as outbox flushes do. */
async function put(scope: IndexScope, rows: IndexRow[]): Promise<void> {
  const byShard = new Map<number, IndexRow[]>();
  for (const r of rows) {
    const shard = indexShardOf(r.contextId, scope.shards);
    byShard.set(shard, [...(byShard.get(shard) ?? []), r]);
  }
  await Promise.all(
    [...byShard].map(([shard, list]) =>
      (shardStub(scope, shard) as unknown as Upsert).upsert(list),
    ),
  );
}

const at = (second: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, second)).toISOString();
const row = (taskId: string, contextId: string, second: number, state = "working"): IndexRow => ({
  taskId,
  contextId,
  state,
  createdAt: at(0),
  updatedAt: at(second),
});

async function pageAll(scope: IndexScope, q: Omit<PageQuery, "pageToken">) {
  const ids: string[] = [];
  let token: string | undefined;
  do {
    const page = await listIndex(env.EDGELINK_INDEX, scope, { ...q, pageToken: token });
    ids.push(...page.rows.map((r) => r.taskId));
    token = page.nextPageToken || undefined;
  } while (token);
  return ids;
}

/** Tables in each shard's SQLite (0: never written). */
const tablesPerShard = (scope: IndexScope) =>
  Promise.all(
    Array.from({ length: scope.shards }, (_, shard) =>
      runInDurableObject(shardStub(scope, shard), (_i, state) =>
        Number(state.storage.sql.exec("SELECT count(*) AS n FROM sqlite_master").one().n),
      ),
    ),
  );

describe("sharded tenant index: routing (issue 10)", () => {
  it("a context's shard is a fixed function of its id: pinned values, all shards used", () => {
    // Pinned: a change to the hash would send a conversation's later rows to another shard.
    expect(["c.a", "ctx-0", "ctx-1", "é", ""].map((id) => indexShardOf(id, 4))).toEqual([
      3, 3, 0, 1, 1,
    ]);
    expect(indexShardOf("c.a", 64)).toBe(indexShardOf("c.a", 64));
    const counts = new Array(8).fill(0);
    for (let i = 0; i < 4000; i++) counts[indexShardOf(crypto.randomUUID(), 8)]++;
    // Uniform within a wide margin (expected 500 each).
    for (const n of counts) expect(n).toBeGreaterThan(400);
    expect(indexShardOf("anything", 1)).toBe(0);
  });

  it("one shard keeps the unsharded index's object name; more shards name their count", () => {
    expect(indexObjectName("t", "", 0, 1)).toBe("index/t");
    expect(indexObjectName("t", "o", 0, 1)).toBe("index/t/o");
    expect(indexObjectName("t", "o", 3, 4)).toBe("index/t/o#3.4");
    // "#" in a tenant or owner is escaped: no name of one shard count is another's.
    expect(indexObjectName("t#0.4", "", 0, 1)).not.toBe(indexObjectName("t", "", 0, 4));
  });

  it("limits.indexShards is a positive integer up to 64, 4 by default", () => {
    expect(DEFAULT_LIMITS.indexShards).toBe(4);
    expect(resolveLimits({ indexShards: 64 }).indexShards).toBe(64);
    expect(() => resolveLimits({ indexShards: 65 })).toThrow(
      /limits.indexShards must be at most 64/,
    );
    expect(() => resolveLimits({ indexShards: 0 })).toThrow(/limits.indexShards/);
  });

  it("every task of a conversation goes to its context's shard, and to no other", async () => {
    const tenant = newTenant();
    const keys = await idKeys(env, BASE);
    const contexts: string[] = [];
    for (let i = 0; i < 6; i++) contexts.push(await issuedContextId(keys, { tenant, owner: "" }));
    const sent: { id: string; contextId: string }[] = [];
    for (const contextId of contexts) {
      for (const text of ["one", "two"]) {
        const { body } = await rpc("SendMessage", {
          tenant,
          message: userMessage(text, { contextId }),
        });
        const task = (body.result as { task: Json }).task;
        sent.push({ id: task.id as string, contextId });
      }
    }
    const scope = { tenant, owner: "", shards: SHARDS };
    const rowsOf = () =>
      Promise.all(
        Array.from({ length: SHARDS }, (_, shard) =>
          runInDurableObject(shardStub(scope, shard), (_i, state) => {
            const sql = state.storage.sql;
            if (!sql.exec("SELECT 1 FROM sqlite_master WHERE name = 'task_index'").toArray().length)
              return [];
            return sql
              .exec<{ task_id: string; context_id: string }>(
                "SELECT task_id, context_id FROM task_index",
              )
              .toArray();
          }),
        ),
      );
    const deadline = Date.now() + 5000;
    let shards = await rowsOf();
    while (shards.flat().length < sent.length && Date.now() < deadline) {
      await sleep(50);
      shards = await rowsOf();
    }
    expect(
      shards
        .flat()
        .map((r) => r.task_id)
        .sort(),
    ).toEqual(sent.map((t) => t.id).sort());
    shards.forEach((rows, shard) => {
      for (const r of rows) expect(indexShardOf(r.context_id, SHARDS)).toBe(shard);
    });
    // The conversation objects agree with the hash (they computed it themselves).
    expect(new Set(contexts.map((c) => indexShardOf(c, SHARDS))).size).toBeGreaterThan(1);
  });
});

describe("sharded tenant index: merged pages (issue 10)", () => {
  it("N shards list exactly what one index lists: same order (ties on time broken by id), same totalSize", async () => {
    const rows: IndexRow[] = [];
    // 4 contexts per shard, 3 tasks each; many share a second, across shards.
    for (let shard = 0; shard < 4; shard++) {
      for (const contextId of contextsIn(shard, 4, 4)) {
        for (let k = 0; k < 3; k++) {
          const second = (rows.length * 7) % 5; // only 5 distinct times for 48 rows
          rows.push(row(`t-${rows.length % 9}-${contextId}-${k}`, contextId, second));
        }
      }
    }
    const sharded = { tenant: newTenant(), owner: "", shards: 4 };
    const single = { tenant: newTenant(), owner: "", shards: 1 };
    await Promise.all([put(sharded, rows), put(single, rows)]);
    const expected = [...rows]
      .sort((a, b) =>
        a.updatedAt === b.updatedAt
          ? a.taskId < b.taskId
            ? 1
            : -1
          : a.updatedAt < b.updatedAt
            ? 1
            : -1,
      )
      .map((r) => r.taskId);
    for (const pageSize of [1, 5, 48, 100]) {
      expect(await pageAll(sharded, { pageSize })).toEqual(expected);
      expect(await pageAll(single, { pageSize })).toEqual(expected);
    }
    const first = await listIndex(env.EDGELINK_INDEX, sharded, { pageSize: 5 });
    expect(first.totalSize).toBe(48);
    expect(first.rows).toHaveLength(5);
  });

  it("listOrder is SQLite's: update time descending, then id descending, bytewise", () => {
    const pos = (updatedAt: string, taskId: string) => ({ updatedAt, taskId });
    const list = [
      pos(at(1), "b"),
      pos(at(2), "a"),
      pos(at(1), "c"),
      pos(at(1), "B"),
      pos(at(1), "\u{1F600}"),
      pos(at(1), "\uFFFD"),
    ];
    expect(list.sort(listOrder).map((p) => p.taskId)).toEqual([
      "a",
      "\u{1F600}", // 4 UTF-8 bytes starting F0: above U+FFFD (EF BF BD), as SQLite sorts
      "\uFFFD",
      "c",
      "b",
      "B",
    ]);
  });

  it("filters apply in every shard: state, statusTimestampAfter; totalSize is their sum", async () => {
    const scope = { tenant: newTenant(), owner: "", shards: 4 };
    const rows: IndexRow[] = [];
    for (let shard = 0; shard < 4; shard++) {
      const [contextId] = contextsIn(shard, 4, 1) as [string];
      rows.push(row(`w${shard}`, contextId, 10 + shard, "working"));
      rows.push(row(`d${shard}`, contextId, 20 + shard, "completed"));
      rows.push(row(`old${shard}`, contextId, 1, "completed"));
    }
    await put(scope, rows);
    const done = await listIndex(env.EDGELINK_INDEX, scope, { pageSize: 3, state: "completed" });
    expect(done.totalSize).toBe(8);
    expect(done.rows.map((r) => r.taskId)).toEqual(["d3", "d2", "d1"]);
    const recent = await pageAll(scope, { pageSize: 3, statusTimestampAfter: at(10) });
    expect(recent).toEqual(["d3", "d2", "d1", "d0", "w3", "w2", "w1", "w0"]);
    const both = await listIndex(env.EDGELINK_INDEX, scope, {
      pageSize: 10,
      state: "working",
      statusTimestampAfter: at(12),
    });
    expect(both.rows.map((r) => r.taskId)).toEqual(["w3", "w2"]);
    expect(both.totalSize).toBe(2);
    expect(both.nextPageToken).toBe("");
  });

  it("tasks updated in every shard while pages are read (Promise.all) are neither skipped nor repeated", async () => {
    const scope = { tenant: newTenant(), owner: "", shards: 4 };
    const contexts = [0, 1, 2, 3].flatMap((shard) => contextsIn(shard, 4, 2));
    const rows = Array.from({ length: 40 }, (_, i) =>
      row(
        `t${String(i).padStart(2, "0")}`,
        contexts[i % contexts.length] as string,
        100 + (i % 13),
      ),
    );
    await put(scope, rows);
    const whole = (await listIndex(env.EDGELINK_INDEX, scope, { pageSize: 100 })).rows.map(
      (r) => r.taskId,
    );
    expect(whole).toHaveLength(40);
    const pages: string[][] = [];
    let token: string | undefined;
    let second = 200;
    let round = 0;
    do {
      // Every round moves tasks to the top in every shard (listed ones and ones to come)
      // and adds a new one, while the page is being read.
      const moved = [whole[round], whole[39 - round], whole[20 + (round % 7)]].map((id) => {
        const original = rows.find((r) => r.taskId === id) as IndexRow;
        return { ...original, updatedAt: at(second++) };
      });
      const added = row(`new${round}`, contexts[round % contexts.length] as string, second++);
      const [page] = await Promise.all([
        listIndex(env.EDGELINK_INDEX, scope, { pageSize: 6, pageToken: token }),
        put(scope, moved),
        put(scope, [added]),
      ]);
      pages.push(page.rows.map((r) => r.taskId));
      token = page.nextPageToken || undefined;
      round++;
    } while (token);
    expect(pages.flat()).toEqual(whole);
    expect(pages.map((p) => p.length)).toEqual([6, 6, 6, 6, 6, 6, 4]);
    // A new listing sees the new tasks and the moves.
    const again = await pageAll(scope, { pageSize: 100 });
    expect(again).toHaveLength(40 + round);
    expect(again[0]).toBe(`new${round - 1}`);
  });

  it("through ListTasks: tasks of conversations in different shards, answered between page reads, neither skipped nor repeated", async () => {
    const tenant = newTenant();
    const keys = await idKeys(env, BASE);
    // Three conversations in three different shards.
    const contexts: string[] = [];
    while (contexts.length < 3) {
      const id = await issuedContextId(keys, { tenant, owner: "" });
      const shards = contexts.map((c) => indexShardOf(c, SHARDS));
      if (!shards.includes(indexShardOf(id, SHARDS))) contexts.push(id);
    }
    const sendIn = async (contextId: string, text: string, taskId?: string) => {
      const message = userMessage(text, taskId ? { contextId, taskId } : { contextId });
      const { body } = await rpc("SendMessage", { tenant, message });
      if (!body.result) throw new Error(JSON.stringify(body.error));
      return (body.result as { task: Json }).task;
    };
    const waiting: { id: string; contextId: string }[] = [];
    for (let i = 0; i < 7; i++) {
      const contextId = contexts[i % 3] as string;
      waiting.push({ id: (await sendIn(contextId, "hello")).id as string, contextId });
      await sleep(2);
    }
    const list = async (params: Json) => {
      const { body } = await rpc("ListTasks", { tenant, ...params });
      if (!body.result) throw new Error(JSON.stringify(body.error));
      const result = body.result as { tasks: Json[]; nextPageToken: string; totalSize: number };
      return { ids: result.tasks.map((t) => t.id as string), ...result };
    };
    /** Lists until the index has caught up with `top` at the top (its flush window). */
    const settled = async (top: string[], count: number) => {
      const deadline = Date.now() + 6000;
      for (;;) {
        const { ids } = await list({ pageSize: 100 });
        if (ids.length === count && top.every((id) => ids.slice(0, top.length).includes(id)))
          return ids;
        if (Date.now() > deadline) throw new Error("the index never caught up");
        await sleep(50);
      }
    };
    const whole = await settled([], 7);
    expect(new Set(whole)).toEqual(new Set(waiting.map((t) => t.id)));
    const answer = (...ids: string[]) =>
      Promise.all(
        ids.map((id) => {
          const t = waiting.find((w) => w.id === id) as { id: string; contextId: string };
          return sendIn(t.contextId, "Ada", t.id);
        }),
      );
    const page1 = await list({ pageSize: 3 });
    expect(page1.totalSize).toBe(7);
    const moved = [whole[3], whole[5], whole[0]] as string[];
    await Promise.all([answer(...moved), sendIn(contexts[1] as string, "hello")]);
    await settled(moved, 8);
    const page2 = await list({ pageSize: 3, pageToken: page1.nextPageToken });
    await answer(whole[6] as string);
    await settled([whole[6] as string], 8);
    const page3 = await list({ pageSize: 3, pageToken: page2.nextPageToken });
    expect([...page1.ids, ...page2.ids, ...page3.ids]).toEqual(whole);
    expect(page3.nextPageToken).toBe("");
  });
});

describe("sharded tenant index: page tokens (issue 10)", () => {
  async function filled() {
    const scope = { tenant: newTenant(), owner: "", shards: 4 };
    await put(
      scope,
      [0, 1, 2, 3].flatMap((shard) => {
        const [contextId] = contextsIn(shard, 4, 1) as [string];
        return [row(`a${shard}`, contextId, shard + 1), row(`b${shard}`, contextId, shard + 5)];
      }),
    );
    const first = await listIndex(env.EDGELINK_INDEX, scope, { pageSize: 3 });
    return { scope, token: first.nextPageToken };
  }

  const refused = async (scope: IndexScope, pageToken: string, why: RegExp) => {
    const error = await listIndex(env.EDGELINK_INDEX, scope, { pageSize: 3, pageToken }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(A2AError);
    expect((error as A2AError).kind).toBe("InvalidParams");
    expect((error as A2AError).message).toMatch(why);
    expect(JSON.stringify((error as A2AError).toData())).toContain("params.pageToken");
  };
  const forge = (value: unknown) =>
    btoa(JSON.stringify(value)).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");

  it("forged, altered or foreign-shaped tokens are InvalidParams naming pageToken", async () => {
    const { scope, token } = await filled();
    const [updatedAt, taskId, snapshots] = JSON.parse(
      atob(token.replaceAll("-", "+").replaceAll("_", "/")),
    ) as [string, string, number[]];
    expect(snapshots).toHaveLength(4);
    const notIssued = /not a token this server issued/;
    await refused(scope, "garbage!", notIssued);
    await refused(scope, `${token}x`, notIssued);
    await refused(scope, forge([updatedAt, taskId, snapshots.slice(1)]), notIssued);
    await refused(scope, forge([updatedAt, taskId, [...snapshots, 0]]), notIssued);
    await refused(scope, forge([updatedAt, taskId, [-1, 0, 0, 0]]), notIssued);
    await refused(scope, forge([updatedAt, taskId, [0.5, 0, 0, 0]]), notIssued);
    await refused(scope, forge([updatedAt, 7, snapshots]), notIssued);
    await refused(scope, "A".repeat(9000), notIssued);
    // A token of the unsharded form (a conversation's listing) names no shard's snapshot.
    await refused(scope, encodeCursor({ updatedAt, taskId, snapshot: 1 }), notIssued);
    // A snapshot no shard reached yet: forged.
    const ahead = [...snapshots];
    ahead[2] = (ahead[2] as number) + 1000;
    await refused(scope, forge([updatedAt, taskId, ahead]), notIssued);
  });

  it("a token whose shard has since seen more moves than it keeps has expired", async () => {
    const { scope, token } = await filled();
    await runInDurableObject(shardStub(scope, 1), (_i, state) => {
      state.storage.sql.exec("UPDATE list_clock SET seq = seq + ?", INDEX_LISTING_KEEP + 1);
    });
    await refused(scope, token, /pageToken has expired/);
  });

  it("a token of another shard count is refused (the count changed), not misread", async () => {
    const { scope, token } = await filled();
    await refused({ ...scope, shards: 2 }, token, /not a token this server issued/);
    await refused({ ...scope, shards: 1 }, token, /not a token this server issued/);
  });

  it("with one shard, tokens of the unsharded index still read", async () => {
    const scope = { tenant: newTenant(), owner: "", shards: 1 };
    await put(scope, [row("x", "c", 3), row("y", "c", 2), row("z", "c", 1)]);
    const legacy = encodeCursor({ updatedAt: at(3), taskId: "x", snapshot: 3 });
    const page = await listIndex(env.EDGELINK_INDEX, scope, { pageSize: 5, pageToken: legacy });
    expect(page.rows.map((r) => r.taskId)).toEqual(["y", "z"]);
    // From before snapshots: place and id only.
    const noSnapshot = forge([at(2), "y"]);
    const rest = await listIndex(env.EDGELINK_INDEX, scope, { pageSize: 5, pageToken: noSnapshot });
    expect(rest.rows.map((r) => r.taskId)).toEqual(["z"]);
  });

  it("over the wire: a bad token is a 400 / -32602 naming params.pageToken, never a 500; a sharded token on a conversation's listing too", async () => {
    const tenant = newTenant();
    const keys = await idKeys(env, BASE);
    const contextId = await issuedContextId(keys, { tenant, owner: "" });
    for (const text of ["one", "two", "three"]) {
      await rpc("SendMessage", { tenant, message: userMessage(text, { contextId }) });
    }
    let token = "";
    const deadline = Date.now() + 5000;
    while (!token && Date.now() < deadline) {
      token = ((await rpc("ListTasks", { tenant, pageSize: 1 })).body.result as Json)
        .nextPageToken as string;
      if (!token) await sleep(50);
    }
    expect(token).not.toBe("");
    const forged = forge(["2026", "x", [9e9, 9e9, 9e9, 9e9]]);
    for (const params of [
      { tenant, pageToken: forged },
      { tenant, pageToken: "%%%" },
      { tenant, contextId, pageToken: token },
    ]) {
      const { body } = await rpc("ListTasks", params);
      expect(body.error, JSON.stringify(params)).toMatchObject({ code: -32602 });
      expect(JSON.stringify(body.error)).toContain("params.pageToken");
    }
    const { SELF } = await import("cloudflare:test");
    const rest = await SELF.fetch(`${BASE}/${tenant}/tasks?pageToken=${forged}`, {
      headers: { "A2A-Version": "1.0" },
    });
    expect(rest.status).toBe(400);
    expect(await rest.text()).toContain("pageToken");
    // Another tenant's token lists that tenant's own shards, never the issuer's.
    const other = await rpc("ListTasks", { tenant: newTenant(), pageToken: token });
    expect((other.body.result as { tasks: Json[] }).tasks).toEqual([]);
  });
});

describe("sharded tenant index: vacancy (issue 10)", () => {
  it("reading every page of a tenant whose tasks are in one shard leaves the other shards without storage", async () => {
    const scope = { tenant: newTenant(), owner: "", shards: 4 };
    const [contextId] = contextsIn(2, 4, 1) as [string];
    await put(
      scope,
      Array.from({ length: 9 }, (_, i) => row(`t${i}`, contextId, i)),
    );
    expect(await pageAll(scope, { pageSize: 2 })).toHaveLength(9);
    expect(await pageAll(scope, { pageSize: 2, state: "working" })).toHaveLength(9);
    const tables = await tablesPerShard(scope);
    expect(tables[0]).toBe(0);
    expect(tables[1]).toBe(0);
    expect(tables[2]).toBeGreaterThan(0);
    expect(tables[3]).toBe(0);
  });

  it("a shard first written after the first page adds nothing to that listing", async () => {
    const scope = { tenant: newTenant(), owner: "", shards: 4 };
    const [in0] = contextsIn(0, 4, 1) as [string];
    const [in3] = contextsIn(3, 4, 1) as [string];
    await put(scope, [row("a", in0, 5), row("b", in0, 4), row("c", in0, 3)]);
    const page1 = await listIndex(env.EDGELINK_INDEX, scope, { pageSize: 1 });
    await put(scope, [row("late", in3, 1)]);
    const rest = await pageAll(scope, { pageSize: 100 });
    expect(rest).toEqual(["a", "b", "c", "late"]);
    const page2 = await listIndex(env.EDGELINK_INDEX, scope, {
      pageSize: 10,
      pageToken: page1.nextPageToken,
    });
    expect(page2.rows.map((r) => r.taskId)).toEqual(["b", "c"]);
  });
});

describe("sharded tenant index: changing limits.indexShards (issue 10)", () => {
  const contextStub = (tenant: string, contextId: string) =>
    env.EDGELINK_CONTEXT.get(env.EDGELINK_CONTEXT.idFromName(contextObjectName(tenant, contextId)));

  /** Sets the agent's limits on one live object (the demo agent keeps the defaults). */
  const withLimits = (tenant: string, contextId: string, limits: Json) =>
    setLimits(contextStub(tenant, contextId), limits);

  const metaShards = (tenant: string, contextId: string) =>
    runInDurableObject(contextStub(tenant, contextId), (_i, state) =>
      state.storage.sql
        .exec<{ value: string }>("SELECT value FROM meta WHERE key = 'index_shards'")
        .toArray()
        .map((r) => r.value),
    );

  async function conversation(shards: number, indexFlushMs = 100) {
    const tenant = newTenant();
    const contextId = await issuedContextId(await idKeys(env, BASE), { tenant, owner: "" });
    await withLimits(tenant, contextId, { indexFlushMs, indexShards: shards });
    const sendIn = async (text: string) => {
      const { body } = await rpc("SendMessage", {
        tenant,
        message: userMessage(text, { contextId }),
      });
      return ((body.result as { task: Json }).task.id as string) ?? "";
    };
    return { tenant, contextId, sendIn };
  }

  const listedUntil = async (scope: IndexScope, count: number) => {
    const deadline = Date.now() + 5000;
    for (;;) {
      const ids = await pageAll(scope, { pageSize: 100 });
      if (ids.length >= count || Date.now() > deadline) return ids;
      await sleep(50);
    }
  };

  it("a new conversation records its shard count with its first write (no resend at its first flush)", async () => {
    // A window that does not close during the test: the count is there before any flush.
    const { tenant, contextId, sendIn } = await conversation(4, 30_000);
    await sendIn("one");
    expect(await metaShards(tenant, contextId)).toEqual(["4"]);
    // Flush now (the alarm's backstop), so no write of this test lands during later ones.
    expect(await runDurableObjectAlarm(contextStub(tenant, contextId))).toBe(true);
    expect(await pageAll({ tenant, owner: "", shards: 4 }, { pageSize: 10 })).toHaveLength(1);
  });

  it("after the count changes, a conversation's next state change sends every task to its shard of the new count", async () => {
    const { tenant, contextId, sendIn } = await conversation(4);
    const before = [await sendIn("one"), await sendIn("two")];
    const four = { tenant, owner: "", shards: 4 };
    expect((await listedUntil(four, 2)).sort()).toEqual([...before].sort());
    await withLimits(tenant, contextId, { indexShards: 2 });
    const two = { tenant, owner: "", shards: 2 };
    // Nothing changed yet: the new set does not know this conversation.
    expect(await pageAll(two, { pageSize: 100 })).toEqual([]);
    const after = await sendIn("three");
    const listed = await listedUntil(two, 3);
    expect(listed.sort()).toEqual([...before, after].sort());
    expect(await metaShards(tenant, contextId)).toEqual(["2"]);
    // In its shard of 2, and only there.
    const tables = await tablesPerShard(two);
    expect(tables[indexShardOf(contextId, 2)]).toBeGreaterThan(0);
    expect(tables[1 - indexShardOf(contextId, 2)]).toBe(0);
  });

  it("a conversation from before shards (no count recorded) sends its tasks again to its shard", async () => {
    const { tenant, contextId, sendIn } = await conversation(4);
    const first = await sendIn("one");
    const four = { tenant, owner: "", shards: 4 };
    await listedUntil(four, 1);
    // As written by a release without shards: no count, its row acknowledged by the
    // unsharded index (so not in the shard).
    await runInDurableObject(contextStub(tenant, contextId), (_i, state) => {
      state.storage.sql.exec("DELETE FROM meta WHERE key = 'index_shards'");
      state.storage.sql.exec("UPDATE tasks SET index_pending = 0");
    });
    await runInDurableObject(shardStub(four, indexShardOf(contextId, 4)), (_i, state) => {
      state.storage.sql.exec("DELETE FROM task_index");
    });
    // A restarted object reads the count again.
    await runInDurableObject(contextStub(tenant, contextId), (_i, state) =>
      state.abort("restart"),
    ).catch(() => {});
    await withLimits(tenant, contextId, { indexFlushMs: 100 });
    const second = await sendIn("two");
    expect((await listedUntil(four, 2)).sort()).toEqual([first, second].sort());
  });
});
