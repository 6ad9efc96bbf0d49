import { env, runInDurableObject } from "cloudflare:test";
import type { IndexMark, IndexRow } from "../../src/index/index-object";
import { contextObjectName, idKeys, issuedContextId } from "../../src/storage/ids";
import { withLimits as setLimits } from "./agent-override";
import { BASE, indexShardStub, rpc, sleep, userMessage } from "./helpers";

/** Probes of a conversation and its tenant index shard, for the index tests. */

type Json = Record<string, unknown>;

/** Every test gets its own tenant, so its own index object. */
export const newTenant = () => `window-${crypto.randomUUID()}`;

/**
 * A context id as the agent issues one to this tenant's anonymous caller, made before its
 * first message so a test can set up the conversation's object first.
 */
export const issuedIn = async (tenant: string) =>
  issuedContextId(await idKeys(env, BASE), { tenant, owner: "" });

export const contextStub = (tenant: string, contextId: string) =>
  env.EDGELINK_CONTEXT.get(env.EDGELINK_CONTEXT.idFromName(contextObjectName(tenant, contextId)));
export const indexStub = (tenant: string, contextId: string) => indexShardStub(contextId, tenant);

export async function sendIn(tenant: string, contextId: string, text: string, taskId?: string) {
  const message = userMessage(text, taskId ? { contextId, taskId } : { contextId });
  const { body } = await rpc("SendMessage", { tenant, message });
  if (!body.result) throw new Error(`SendMessage failed: ${JSON.stringify(body.error)}`);
  return (body.result as { task: Json }).task;
}

/** The index's row for a task (null if it has none), read inside its conversation's shard. */
export async function indexRow(tenant: string, contextId: string, taskId: string) {
  return runInDurableObject(indexStub(tenant, contextId), (_i, state) => {
    const has = state.storage.sql
      .exec("SELECT 1 FROM sqlite_master WHERE name = 'task_index'")
      .toArray().length;
    if (!has) return null;
    return (
      state.storage.sql
        .exec<{ state: string; updated_at: string }>(
          "SELECT state, updated_at FROM task_index WHERE task_id = ?",
          taskId,
        )
        .toArray()[0] ?? null
    );
  });
}

export const withLimits = (tenant: string, contextId: string, limits: Json) =>
  setLimits(contextStub(tenant, contextId), limits);

/**
 * Records every upsert call each index object receives (on the class: RPC dispatches
 * through the prototype, so an instance property would not be called).
 */
export async function countUpserts(
  tenant: string,
  contextId: string,
): Promise<() => Promise<IndexRow[][]>> {
  await runInDurableObject(indexStub(tenant, contextId), (instance) => {
    type Counted = {
      upsert(rows: IndexRow[], mark?: IndexMark): Promise<void>;
      calls?: IndexRow[][];
      marks?: (IndexMark | null)[];
    };
    const proto = Object.getPrototypeOf(Object.getPrototypeOf(instance)) as Counted & {
      counted?: boolean;
    };
    const target = Object.hasOwn(Object.getPrototypeOf(instance), "upsert")
      ? (Object.getPrototypeOf(instance) as typeof proto)
      : proto;
    if (!target.counted) {
      const upsert = target.upsert;
      target.upsert = function (this: Counted, rows: IndexRow[], mark?: IndexMark) {
        this.calls ??= [];
        this.calls.push(rows);
        this.marks ??= [];
        this.marks.push(mark ?? null);
        return upsert.call(this, rows, mark);
      };
      target.counted = true;
    }
    (instance as unknown as Counted).calls = [];
    (instance as unknown as Counted).marks = [];
  });
  return () =>
    runInDurableObject(
      indexStub(tenant, contextId),
      (instance) => (instance as unknown as { calls: IndexRow[][] }).calls,
    );
}

/** The time a conversation's mark was set in its index shard (null: not marked). */
export const markOf = (tenant: string, contextId: string) =>
  runInDurableObject(indexStub(tenant, contextId), (_i, state) => {
    const row = state.storage.sql
      .exec<{ value: string }>("SELECT value FROM meta WHERE key = ?", `mark:${contextId}`)
      .toArray()[0];
    return row?.value ?? null;
  });

/** The mark each upsert counted by `countUpserts` carried (null: none), in call order. */
export const upsertMarks = (tenant: string, contextId: string) =>
  runInDurableObject(
    indexStub(tenant, contextId),
    (instance) => (instance as unknown as { marks: (IndexMark | null)[] }).marks,
  );

export async function until<T>(read: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 5000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (ok(value)) return value;
    if (Date.now() > deadline) throw new Error("timed out");
    await sleep(25);
  }
}
