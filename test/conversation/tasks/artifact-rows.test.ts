import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { DEFAULT_LIMITS, resolveLimits } from "../../../src/agent/limits";
import { HistoryStore } from "../../../src/conversation/history/history-store";
import { INLINE_ARTIFACT_CHARS } from "../../../src/conversation/tasks/artifact-rows";
import { TaskStore } from "../../../src/conversation/tasks/task-store";
import type { Item } from "../../../src/history/items";
import { type Artifact, Artifacts } from "../../../src/protocol/artifact";
import { A2AError } from "../../../src/protocol/errors";
import { Parts } from "../../../src/protocol/part";
import { contextObjectName } from "../../../src/storage/ids";
import { CONTEXT_SCHEMA } from "../../../src/storage/schema";
import { ensureSchema } from "../../../src/storage/schema-version";
import { defineAgent } from "../../../src/worker/app/define-agent";
import { withLimits as setLimits } from "../../support/agent-override";
import { artifactText, listUntil, refusalOf, rpc, send, userMessage } from "../../support/helpers";
import { taskFixture } from "../../support/task-fixture";
import { rpcAs } from "../../worker/auth-support";

type Json = Record<string, unknown>;

const stubOf = (contextId: string, tenant = "") =>
  env.EDGELINK_CONTEXT.get(env.EDGELINK_CONTEXT.idFromName(contextObjectName(tenant, contextId)));

const withLimits = (contextId: string, limits: Json) => setLimits(stubOf(contextId), limits);

/** Sets the bounds the object's task store took from its agent when it started. */
async function withStoreBounds(contextId: string, bounds: Json) {
  await runInDurableObject(stubOf(contextId), (instance) => {
    const store = (instance as unknown as { store: { cache: { bounds: Json } } }).store.cache;
    Object.defineProperty(store, "bounds", { value: { ...store.bounds, ...bounds } });
  });
}

/** The characters of stored JSON a task's artifacts hold, summed from its rows. */
function storedChars(sql: SqlStorage, taskId: string): number {
  const rows = sql
    .exec<{ n: number }>(
      `SELECT COALESCE((SELECT length(first_artifact) + length(first_artifact_parts) FROM tasks WHERE id = ?1), 0)
        + COALESCE((SELECT SUM(length(header) + COALESCE(length(parts), 0)) FROM artifacts WHERE task_key = (SELECT key FROM tasks WHERE id = ?1)), 0)
        + COALESCE((SELECT SUM(length(body)) FROM artifact_parts WHERE task_key = (SELECT key FROM tasks WHERE id = ?1)), 0) AS n`,
      taskId,
    )
    .one();
  return rows.n;
}

const chunk = (artifactId: string, text: string): Artifact =>
  Artifacts.create({ artifactId, name: "out", parts: [Parts.text(text)] });

describe("a task's artifacts are bounded (limits.taskArtifactChars, issue 10)", () => {
  it("limits.taskArtifactChars and limits.listArtifactChars are positive integers, 8 Mi and 16 Mi by default", () => {
    expect(DEFAULT_LIMITS.taskArtifactChars).toBe(8 * 1024 * 1024);
    expect(DEFAULT_LIMITS.listArtifactChars).toBe(16 * 1024 * 1024);
    expect(() => resolveLimits({ taskArtifactChars: 0 })).toThrow(/limits.taskArtifactChars/);
    expect(() => resolveLimits({ listArtifactChars: 1.5 })).toThrow(/limits.listArtifactChars/);
  });

  it("a write past the limit is refused naming it and writes nothing; appends, replacements and a restart count as the rows do", async () => {
    const result = await runInDurableObject(stubOf("artifact-bound"), (_i, state) => {
      ensureSchema(state.storage, CONTEXT_SCHEMA); // white-box: the schema a first write makes
      const limit = 2000;
      const fresh = () =>
        new TaskStore(state.storage, new HistoryStore<Item>(state.storage), null, {
          taskArtifactChars: limit,
        });
      const sql = state.storage.sql;
      let store = fresh();
      store.create(taskFixture("t1"), true);
      store.putArtifact("t1", chunk("a", "x".repeat(300)), { append: false, lastChunk: false });
      // Appends of 100 characters until one is refused.
      let appended = 0;
      let error: A2AError | null = null;
      for (let i = 0; i < 100 && !error; i++) {
        const before = storedChars(sql, "t1");
        try {
          store.putArtifact("t1", chunk("a", "y".repeat(100)), { append: true, lastChunk: false });
          appended++;
        } catch (e) {
          if (!(e instanceof A2AError)) throw e;
          error = e;
          // Nothing of the refused chunk was written.
          expect(storedChars(sql, "t1")).toBe(before);
        }
      }
      const atLimit = storedChars(sql, "t1");
      // A restarted object counts what the rows hold: the same chunk is refused again,
      // and one that fits exactly is taken.
      store = fresh();
      const again = refusalOf(() =>
        store.putArtifact("t1", chunk("a", "y".repeat(100)), { append: true, lastChunk: false }),
      );
      const room = limit - atLimit;
      const fits = JSON.stringify(Parts.text("")).length;
      if (room >= fits) {
        store.putArtifact("t1", chunk("a", "z".repeat(room - fits)), {
          append: true,
          lastChunk: false,
        });
      }
      const full = storedChars(sql, "t1");
      // Replacing the artifact frees what it held.
      store.putArtifact("t1", chunk("a", "small"), { append: false, lastChunk: true });
      store.putArtifact("t1", chunk("b", "w".repeat(1000)), { append: false, lastChunk: true });
      const read = store.read("t1");
      return {
        appended,
        code: error?.kind,
        message: error?.message ?? "",
        again: again.message,
        atLimit,
        full,
        room,
        fits,
        afterReplace: storedChars(sql, "t1"),
        artifacts: read?.artifacts.map((a) => a.artifactId),
      };
    });
    expect(result.appended).toBeGreaterThan(5);
    expect(result.code).toBe("InvalidAgentResponse");
    expect(result.message).toContain("limits.taskArtifactChars");
    expect(result.message).toContain("2000");
    expect(result.again).toContain("limits.taskArtifactChars");
    expect(result.atLimit).toBeLessThanOrEqual(2000);
    expect(result.atLimit).toBeGreaterThan(2000 - 100 - 20);
    if (result.room >= result.fits) expect(result.full).toBe(2000);
    expect(result.afterReplace).toBeLessThanOrEqual(2000);
    expect(result.artifacts).toEqual(["a", "b"]);
  });

  it("a run whose output passes the limit fails naming it; what it streamed before stays, and GetTask carries no more", async () => {
    const first = await send("start");
    const contextId = first.contextId as string;
    await withStoreBounds(contextId, { taskArtifactChars: 600 });
    const words = Array.from({ length: 80 }, (_, i) => `word${String(i).padStart(2, "0")}`);
    const text = words.join(" ");
    const { body } = await rpc("SendMessage", { message: userMessage(text, { contextId }) });
    const task = (body.result as { task: Json }).task;
    const status = task.status as { state: string; message: Json };
    expect(status.state).toBe("TASK_STATE_FAILED");
    expect(JSON.stringify(status.message)).toContain("limits.taskArtifactChars");
    const got = await rpc("GetTask", { id: task.id });
    const read = (got.body.result ?? {}) as Json;
    const streamed = artifactText(read);
    // A prefix of the echo ("You said: ..."), cut at a chunk: nothing garbled, nothing past the limit.
    expect(streamed.length).toBeGreaterThan(30);
    expect(`You said: ${text}`.startsWith(streamed)).toBe(true);
    expect(streamed.length).toBeLessThan(text.length);
    const stored = await runInDurableObject(stubOf(contextId), (_i, state) =>
      storedChars(state.storage.sql, task.id as string),
    );
    expect(stored).toBeLessThanOrEqual(600);
    expect(stored).toBeGreaterThan(600 - 60);
  });
});

describe("ListTasks with includeArtifacts is bounded (limits.listArtifactChars, issue 10)", () => {
  /** `n` tasks in one conversation, each echoing `size` characters; newest first. */
  async function tasksWithArtifacts(n: number, size: number, tenant?: string) {
    const ids: string[] = [];
    let contextId: string | undefined;
    for (let i = 0; i < n; i++) {
      const text = `${String(i).padStart(3, "0")}${"t".repeat(size - 3)}`;
      const { body } = await rpc("SendMessage", {
        ...(tenant ? { tenant } : {}),
        message: userMessage(text, contextId ? { contextId } : {}),
      });
      const task = (body.result as { task: Json }).task;
      contextId = task.contextId as string;
      ids.unshift(task.id as string);
    }
    return { ids, contextId: contextId as string };
  }

  /** Every page of a listing, following its tokens. */
  async function pages(list: (token: string) => Promise<Json>) {
    const out: { ids: string[]; chars: number[] }[] = [];
    let token = "";
    for (let i = 0; i < 50; i++) {
      const result = await list(token);
      const tasks = result.tasks as Json[];
      out.push({
        ids: tasks.map((t) => t.id as string),
        chars: tasks.map((t) => JSON.stringify(t.artifacts ?? []).length),
      });
      token = result.nextPageToken as string;
      if (!token) return out;
    }
    throw new Error("the listing never ended");
  }

  /** The pages a budget makes of tasks of these stored sizes: greedy, at least one each. */
  function packed(sizes: number[], budget: number): number[] {
    const out: number[] = [];
    let count = 0;
    let chars = 0;
    for (const size of sizes) {
      if (count > 0 && chars + size > budget) {
        out.push(count);
        count = 0;
        chars = 0;
      }
      count++;
      chars += size;
    }
    if (count) out.push(count);
    return out;
  }

  it("in one conversation: a page ends at the budget and its token goes on; every task comes once, in order", async () => {
    const { ids, contextId } = await tasksWithArtifacts(6, 300);
    const sizes = await runInDurableObject(stubOf(contextId), (_i, state) =>
      ids.map((id) => storedChars(state.storage.sql, id)),
    );
    const budget = Math.floor((sizes[0] ?? 0) * 2.5);
    await withLimits(contextId, { listArtifactChars: budget });
    const listed = await pages(async (pageToken) => {
      const { body } = await rpc("ListTasks", {
        contextId,
        includeArtifacts: true,
        pageSize: 10,
        ...(pageToken ? { pageToken } : {}),
      });
      return body.result as Json;
    });
    expect(listed.flatMap((p) => p.ids)).toEqual(ids);
    expect(listed.map((p) => p.ids.length)).toEqual(packed(sizes, budget));
    expect(listed.map((p) => p.ids.length)).toEqual([2, 2, 2]);
    for (const p of listed) expect(p.chars.every((c) => c > 300)).toBe(true);
    // Without artifacts, one page.
    const { body } = await rpc("ListTasks", { contextId, pageSize: 10 });
    expect(((body.result as Json).tasks as Json[]).map((t) => t.id)).toEqual(ids);
  });

  it("a task bigger than the budget still comes, alone on its page", async () => {
    const { ids, contextId } = await tasksWithArtifacts(3, 400);
    await withLimits(contextId, { listArtifactChars: 100 });
    const listed = await pages(async (pageToken) => {
      const { body } = await rpc("ListTasks", {
        contextId,
        includeArtifacts: true,
        ...(pageToken ? { pageToken } : {}),
      });
      return body.result as Json;
    });
    expect(listed.map((p) => p.ids)).toEqual(ids.map((id) => [id]));
  });

  it("across conversations (the tenant index): pages end at the budget, every task once, in order", async () => {
    const tenant = `artifacts-${crypto.randomUUID()}`;
    const a = await tasksWithArtifacts(3, 400, tenant);
    const b = await tasksWithArtifacts(3, 400, tenant);
    const all = await listUntil({ tenant, pageSize: 100 }, ({ tasks }) => tasks.length === 6);
    const order = all.tasks.map((t) => t.id as string);
    expect(new Set(order)).toEqual(new Set([...a.ids, ...b.ids]));
    const lister = defineAgent({
      card: { name: "Lister", description: "Lists with a small artifact budget" },
      limits: { listArtifactChars: 1000 },
    });
    const listed = await pages(async (pageToken) => {
      const { body } = await rpcAs(lister, {}, "ListTasks", {
        tenant,
        includeArtifacts: true,
        pageSize: 100,
        ...(pageToken ? { pageToken } : {}),
      });
      if (!body.result) throw new Error(JSON.stringify(body.error));
      return body.result as Json;
    });
    expect(listed.flatMap((p) => p.ids)).toEqual(order);
    for (const p of listed) {
      expect(p.ids.length).toBeGreaterThan(0);
      if (p.ids.length > 1) expect(p.chars.reduce((x, y) => x + y, 0)).toBeLessThan(1200);
    }
    expect(listed.length).toBeGreaterThanOrEqual(3);
  });
});

describe("a task's first artifact in the task's own row", () => {
  /** Where each artifact of task `t` is stored, and its text as a fresh store reads it. */
  const placed = (state: DurableObjectState) => {
    const sql = state.storage.sql;
    const row = sql
      .exec<{ a: string | null }>("SELECT first_artifact AS a FROM tasks WHERE id = 't'")
      .one();
    return {
      inTask: row.a === null ? null : (JSON.parse(row.a) as { artifactId: string }).artifactId,
      table: sql
        .exec<{ id: string; seq: number }>(
          "SELECT artifact_id AS id, seq FROM artifacts ORDER BY seq",
        )
        .toArray()
        .map((r) => `${r.id}@${r.seq}`),
    };
  };
  const texts = (store: TaskStore) =>
    store
      .read("t")
      ?.artifacts.map(
        (a) => `${a.artifactId}:${a.parts.map((p) => String(p.content).slice(0, 6)).join("|")}`,
      );
  /** A one-part artifact whose header and parts take exactly `chars` characters of JSON. */
  const sized = (artifactId: string, chars: number): Artifact => {
    const probe = chunk(artifactId, "");
    const { parts: _p, ...header } = probe;
    const empty = JSON.stringify(header).length + `[${JSON.stringify(probe.parts[0])}]`.length;
    return { ...probe, parts: [Parts.text("z".repeat(chars - empty))] };
  };
  const once = { append: false, lastChunk: true };

  it("D4: a first artifact of up to INLINE_ARTIFACT_CHARS characters is in the task's row, one past it in the artifacts table; both read back the same", async () => {
    const result = await runInDurableObject(stubOf("artifact-in-task-boundary"), (_i, state) => {
      ensureSchema(state.storage, CONTEXT_SCHEMA);
      const fresh = () => new TaskStore(state.storage, new HistoryStore<Item>(state.storage));
      const at = (chars: number) => {
        state.storage.sql.exec("DELETE FROM tasks");
        state.storage.sql.exec("DELETE FROM artifacts");
        const store = fresh();
        store.create(taskFixture("t"), true);
        store.putArtifact("t", sized("a", chars), once);
        const memory = store.read("t")?.artifacts;
        return { ...placed(state), memory, stored: fresh().read("t")?.artifacts };
      };
      return { fits: at(INLINE_ARTIFACT_CHARS), over: at(INLINE_ARTIFACT_CHARS + 1) };
    });
    expect(INLINE_ARTIFACT_CHARS).toBe(2048);
    expect(result.fits).toMatchObject({ inTask: "a", table: [] });
    expect(result.over).toMatchObject({ inTask: null, table: ["a@1"] });
    for (const { memory, stored } of [result.fits, result.over]) {
      expect(stored).toEqual(memory);
      expect(memory?.[0]?.parts).toHaveLength(1);
    }
  });

  it("D4: later artifacts follow it in order; appended to or replaced by a big one it moves to the table's first place; a small replacement stays", async () => {
    const result = await runInDurableObject(stubOf("artifact-in-task-order"), (_i, state) => {
      ensureSchema(state.storage, CONTEXT_SCHEMA);
      const fresh = () => new TaskStore(state.storage, new HistoryStore<Item>(state.storage));
      const steps: unknown[] = [];
      const step = (store: TaskStore) => {
        steps.push({ ...placed(state), memory: texts(store), stored: texts(fresh()) });
      };
      let store = fresh();
      store.create(taskFixture("t"), true);
      store.putArtifact("t", chunk("a", "first"), once);
      store.putArtifact("t", chunk("b", "second"), once);
      step(store);
      store.putArtifact("t", chunk("a", "again"), once); // a small replacement: stays
      step(store);
      store.putArtifact("t", chunk("a", " more"), { append: true, lastChunk: true });
      step(store);
      // Another task: its first artifact replaced by a big one after a restart.
      state.storage.sql.exec("DELETE FROM tasks");
      state.storage.sql.exec("DELETE FROM artifacts");
      state.storage.sql.exec("DELETE FROM artifact_parts");
      store = fresh();
      store.create(taskFixture("t"), true);
      store.putArtifact("t", chunk("a", "small"), once);
      store.putArtifact("t", chunk("b", "other"), once);
      store = fresh(); // what the row says, not memory, decides
      store.putArtifact("t", sized("a", INLINE_ARTIFACT_CHARS + 1), once);
      step(store);
      return steps;
    });
    expect(result).toEqual([
      {
        inTask: "a",
        table: ["b@1"],
        memory: ["a:first", "b:second"],
        stored: ["a:first", "b:second"],
      },
      {
        inTask: "a",
        table: ["b@1"],
        memory: ["a:again", "b:second"],
        stored: ["a:again", "b:second"],
      },
      {
        inTask: null,
        table: ["a@0", "b@1"],
        memory: ["a:again| more", "b:second"],
        stored: ["a:again| more", "b:second"],
      },
      {
        inTask: null,
        table: ["a@0", "b@1"],
        memory: ["a:zzzzzz", "b:other"],
        stored: ["a:zzzzzz", "b:other"],
      },
    ]);
  });

  it("D4: over the wire, a blocking answer's artifact stored in its task's row reads the same by GetTask and ListTasks with artifacts", async () => {
    // The demo agent streams an echo word by word; a recap is returned whole.
    const task = await send("recap");
    const contextId = task.contextId as string;
    const stored = await runInDurableObject(
      stubOf(contextId),
      (_i, state) =>
        state.storage.sql
          .exec<{ n: number }>(
            "SELECT COUNT(*) AS n FROM tasks WHERE first_artifact IS NOT NULL AND NOT EXISTS (SELECT 1 FROM artifacts)",
          )
          .one().n,
    );
    expect(stored).toBe(1);
    const got = (await rpc("GetTask", { id: task.id })).body.result as Json;
    expect(got.artifacts).toEqual(task.artifacts);
    const listed = (await rpc("ListTasks", { contextId, includeArtifacts: true })).body
      .result as Json;
    expect((listed.tasks as Json[])[0]?.artifacts).toEqual(task.artifacts);
  });
});

describe("appended parts held until the transaction's rows are written", () => {
  const chunkOf = (text: string) =>
    Artifacts.create({ artifactId: "r", name: "result", parts: [Parts.text(text)] });
  const partsOf = (store: TaskStore, id: string) => {
    store.cache.clear(); // read back from the rows
    return store.read(id)?.artifacts.map((a) => a.parts.map((p) => p.content));
  };

  it("D4: chunks of a transaction that fails are never written; the next chunks number on from the stored ones", async () => {
    const result = await runInDurableObject(stubOf("held-parts-rollback"), (_i, state) => {
      ensureSchema(state.storage, CONTEXT_SCHEMA); // white-box: the schema a first write makes
      const store = new TaskStore(state.storage, new HistoryStore(state.storage));
      store.create(taskFixture("t"), true);
      store.atomic(() => {
        store.putArtifact("t", chunkOf("a0"), { append: false, lastChunk: false });
        store.putArtifact("t", chunkOf("a1"), { append: true, lastChunk: false });
      });
      let failed = false;
      try {
        store.atomic(() => {
          store.putArtifact("t", chunkOf("lost1"), { append: true, lastChunk: false });
          store.putArtifact("t", chunkOf("lost2"), { append: true, lastChunk: false });
          throw new Error("the handler failed");
        });
      } catch {
        failed = true;
      }
      const afterFailure = partsOf(store, "t");
      store.atomic(() => {
        store.putArtifact("t", chunkOf("a2"), { append: true, lastChunk: false });
        // A statement in the transaction reads the rows: the held parts are written first.
        store.page({ pageSize: 1 });
        store.putArtifact("t", chunkOf("a3"), { append: true, lastChunk: true });
      });
      return { failed, afterFailure, final: partsOf(store, "t") };
    });
    expect(result.failed).toBe(true);
    expect(result.afterFailure).toEqual([["a0", "a1"]]);
    expect(result.final).toEqual([["a0", "a1", "a2", "a3"]]);
  });
});
