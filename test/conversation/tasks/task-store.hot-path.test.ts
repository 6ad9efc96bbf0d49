import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { HistoryStore } from "../../../src/conversation/history/history-store";
import { eventOfRow } from "../../../src/conversation/tasks/event-rows";
import { TaskStore } from "../../../src/conversation/tasks/task-store";
import { FunctionCallItem } from "../../../src/history/items";
import type { IndexRow } from "../../../src/index/index-object";
import type { Artifact } from "../../../src/protocol/artifact";
import type { TaskEvent } from "../../../src/protocol/events";
import { Messages } from "../../../src/protocol/message";
import { Parts } from "../../../src/protocol/part";
import { contextObjectName } from "../../../src/storage/ids";
import { CONTEXT_SCHEMA } from "../../../src/storage/schema";
import { ensureSchema } from "../../../src/storage/schema-version";
import { taskFixture } from "../../support/task-fixture";

function stubOf(contextId: string) {
  const ns = env.EDGELINK_CONTEXT;
  return ns.get(ns.idFromName(contextObjectName("", contextId)));
}

function artifactOf(artifactId: string, text: string): Artifact {
  return {
    artifactId,
    name: "result",
    description: null,
    parts: [Parts.text(text)],
    metadata: {},
    kind: "result",
    timestamp: new Date().toISOString(),
    uri: null,
    mediaType: null,
    actionId: null,
  };
}

/**
 * Runs `fn` on a fresh store in a new object, with every statement it executes logged;
 * then `after` on a store that knows nothing in memory (what SQLite holds).
 */
function inStore<T, U = undefined>(
  name: string,
  fn: (store: TaskStore, log: string[]) => T,
  after: (reread: TaskStore) => U = () => undefined as U,
) {
  return runInDurableObject(stubOf(name), (_i, state) => {
    ensureSchema(state.storage, CONTEXT_SCHEMA); // white-box: the schema a first write makes
    const sql = state.storage.sql;
    const exec = sql.exec.bind(sql);
    const log: string[] = [];
    Object.defineProperty(sql, "exec", {
      configurable: true,
      value: (query: string, ...args: SqlStorageValue[]) => {
        log.push(query.replace(/\s+/g, " ").trim());
        return exec(query, ...args);
      },
    });
    try {
      const fresh = () => new TaskStore(state.storage, new HistoryStore(state.storage));
      const result = fn(fresh(), log);
      // What SQLite holds, read by a store that knows nothing in memory (a row leaves out
      // the ids its task holds: they are put back as the log reads them).
      const stored = sql
        .exec<{ seq: number; task_id: string; body: string; context_id: string | null }>(
          `SELECT e.seq, e.task_id, e.body, t.context_id FROM events e
           LEFT JOIN tasks t ON t.id = e.task_id ORDER BY e.seq`,
        )
        .toArray()
        .map((r) => ({
          seq: r.seq,
          taskId: r.task_id,
          event: eventOfRow(r.body, r.task_id, r.context_id) as TaskEvent,
        }));
      return { result, log, stored, reread: after(fresh()) };
    } finally {
      delete (sql as unknown as Record<string, unknown>).exec;
    }
  });
}

describe("durable core: one statement for a transaction's events (issue 10)", () => {
  it("the events of one transaction are one INSERT, stored with the seqs and bodies the store answered", async () => {
    const { result, log, stored } = await inStore("events-one-insert", (store, log) => {
      store.create(taskFixture("a"), true);
      store.create(taskFixture("b"), true);
      const before = log.length;
      // A turn's end: the artifact and the completion of "a", and a change of "b", together.
      const logged = store.atomic(() => [
        store.putArtifact("a", artifactOf("r1", "echo"), { append: false, lastChunk: false }),
        ...store.transition("a", "completed"),
        store.statusMessage("b", Messages.agent("still going")),
      ]);
      return { logged, statements: log.slice(before) };
    });
    const inserts = result.statements.filter((q) => q.startsWith("INSERT INTO events"));
    expect(inserts, log.join("\n")).toHaveLength(1);
    // Every event logged so far is stored exactly as it was answered (and published).
    const answered = [...result.logged].map((e) => ({ seq: e.seq, event: e.event }));
    expect(stored.slice(-3).map(({ seq, event }) => ({ seq, event }))).toEqual(
      JSON.parse(JSON.stringify(answered)),
    );
    expect(stored.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5]);
    expect(stored.map((e) => e.taskId)).toEqual(["a", "b", "a", "a", "b"]);
  });

  it("a transaction of many events writes them in statements of 30, seqs unbroken", async () => {
    const { result, stored } = await inStore("events-many", (store, log) => {
      store.create(taskFixture("t"), true);
      const before = log.length;
      store.atomic(() => {
        for (let i = 0; i < 40; i++) store.announce("t", Messages.agent(`step ${i}`));
      });
      return log.slice(before).filter((q) => q.startsWith("INSERT INTO events")).length;
    });
    expect(result).toBe(2);
    expect(stored.map((e) => e.seq)).toEqual(Array.from({ length: 41 }, (_, i) => i + 1));
    expect(
      stored
        .slice(1)
        .map((e) => (e.event.kind === "status-update" ? e.event.status.message : null)),
    ).toEqual(
      Array.from({ length: 40 }, (_, i) =>
        expect.objectContaining({ parts: [expect.objectContaining({ content: `step ${i}` })] }),
      ),
    );
  });

  it("an event logged outside a transaction is written at once, and the next seq follows it", async () => {
    const { stored, reread } = await inStore(
      "events-alone",
      (store) => {
        store.create(taskFixture("t"), true);
        store.announce("t", Messages.agent("thinking"));
        store.transition("t", "completed");
      },
      (reread) => reread.events.after("t", 1).map((e) => e.seq),
    );
    expect(stored.map((e) => [e.seq, e.event.kind])).toEqual([
      [1, "status-update"],
      [2, "status-update"],
      [3, "status-update"],
    ]);
    expect(reread).toEqual([2, 3]);
  });
});

describe("durable core: a status change writes what changed (B6, B7)", () => {
  it("metadata is written only with a patch, a status message is stored and cleared; all read back from SQLite", async () => {
    const { result, reread: task } = await inStore(
      "status-columns",
      (store, log) => {
        store.create(taskFixture("t"), true);
        store.mergeMetadata("t", { keep: "me" });
        const before = log.length;
        store.statusMessage("t", Messages.agent("half way"));
        store.transition("t", "input-required", { message: Messages.agent("which one?") });
        store.transition("t", "working");
        store.transition("t", "failed", { metadata: { error: "boom" } });
        return log.slice(before).filter((q) => q.startsWith("UPDATE tasks"));
      },
      (reread) => reread.read("t"),
    );
    // Only the change that patched metadata writes the column.
    expect(result.map((q) => q.includes("metadata"))).toEqual([false, false, false, true]);
    expect(task?.status.state).toBe("failed");
    expect(task?.metadata).toEqual({ keep: "me", error: "boom" });
    expect(task?.status.message).toBeNull();
    expect(task?.stateHistory.map((c) => c.newState)).toEqual([
      "working",
      "input-required",
      "working",
      "failed",
    ]);
    expect(task?.history.map((m) => m.parts[0]?.content)).toEqual(["hi", "half way", "which one?"]);
  });

  it("B6: a new task's INSERTs bind only what varies: no metadata when it has none, a message item's type as a literal; every value reads back from SQLite", async () => {
    const { result, reread } = await inStore(
      "bind-less",
      (store, log) => {
        const before = log.length;
        store.create(taskFixture("plain"), true);
        store.create({ ...taskFixture("tagged"), metadata: { team: "red" } }, true);
        store.recordItems("plain", [
          FunctionCallItem.parse({ type: "function_call", name: "look", callId: "c1" }),
        ]);
        const types = store.sql
          .exec<{ type: string }>("SELECT type FROM history_items ORDER BY seq")
          .toArray()
          .map((r) => r.type);
        return { statements: log.slice(before), types };
      },
      (fresh) => ({ plain: fresh.read("plain"), tagged: fresh.read("tagged") }),
    );
    const inserts = result.statements.filter((q) => q.startsWith("INSERT INTO tasks"));
    expect(inserts.map((q) => q.includes("metadata"))).toEqual([false, true]);
    const items = result.statements.filter((q) => q.startsWith("INSERT INTO history_items"));
    expect(items.map((q) => q.includes("'message'"))).toEqual([true, true, false]);
    expect(result.types).toEqual(["message", "message", "function_call"]);
    expect(reread.plain?.metadata).toEqual({});
    expect(reread.tagged?.metadata).toEqual({ team: "red" });
    expect(reread.plain?.history.map((m) => m.parts[0]?.content)).toEqual(["hi"]);
  });

  it("a status message is stored on the task row (read back after the object forgot it)", async () => {
    const { reread: task } = await inStore(
      "status-message",
      (store) => {
        store.create(taskFixture("t"), true);
        store.transition("t", "input-required", { message: Messages.agent("which one?") });
      },
      (reread) => reread.read("t"),
    );
    expect(task?.status.state).toBe("input-required");
    expect(task?.status.message?.parts[0]?.content).toBe("which one?");
  });
});

describe("the tenant index: one statement for many rows (issue 10)", () => {
  it("a call's rows are written by a few statements, each row as one upsert would write it", async () => {
    const index = env.EDGELINK_INDEX.get(
      env.EDGELINK_INDEX.idFromName(`index/hot-path-${crypto.randomUUID()}`),
    ) as unknown as { upsert(rows: IndexRow[]): Promise<void> };
    const at = (second: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, second)).toISOString();
    const row = (n: number, state: string, second: number): IndexRow => ({
      taskId: `t${n}`,
      contextId: `c${n % 3}`,
      state,
      createdAt: at(0),
      updatedAt: at(second),
    });
    await index.upsert([row(0, "completed", 9)]);
    // 60 rows (more than fit one statement), t0 older than what the index holds, t1 twice
    // in the same call (the later one wins).
    const rows = [
      ...Array.from({ length: 60 }, (_, n) => row(n, "working", 5)),
      row(1, "completed", 6),
    ];
    const statements = await runInDurableObject(index as never, async (instance, state) => {
      const sql = state.storage.sql;
      const exec = sql.exec.bind(sql);
      let count = 0;
      Object.defineProperty(sql, "exec", {
        configurable: true,
        value: (query: string, ...args: SqlStorageValue[]) => {
          count++;
          return exec(query, ...args);
        },
      });
      try {
        await (instance as unknown as typeof index).upsert(rows);
      } finally {
        delete (sql as unknown as Record<string, unknown>).exec;
      }
      return count;
    });
    const stored = await runInDurableObject(index as never, (_i, state) =>
      state.storage.sql
        .exec<{ task_id: string; context_id: string; state: string; updated_at: string }>(
          "SELECT task_id, context_id, state, updated_at FROM task_index",
        )
        .toArray(),
    );
    // One statement for the whole call (its rows bound as one JSON value; a move is
    // recorded by the schema's trigger in it), and the listing clock kept in memory
    // (SQLite's list_clock is brought up to it when a page names its snapshot).
    expect(statements).toBe(1);
    expect(stored).toHaveLength(60);
    const listing = await runInDurableObject(index as never, (instance, state) => ({
      clock: (instance as unknown as { listing: { clock: number } }).listing.clock,
      moves: state.storage.sql.exec("SELECT COUNT(*) AS n FROM list_moves").one().n,
      seqs: state.storage.sql
        .exec<{ task_id: string; row_seq: number }>("SELECT task_id, row_seq FROM task_index")
        .toArray(),
    }));
    const seqOf = new Map(listing.seqs.map((r) => [r.task_id, r.row_seq]));
    // t0 kept its place (1) and left its value (2) unused; t1 (its later row: one per task)
    // took 3, t2..t59 took 4..61.
    expect(seqOf.get("t0")).toBe(1);
    expect(seqOf.get("t1")).toBe(3);
    expect(seqOf.get("t2")).toBe(4);
    expect(seqOf.get("t59")).toBe(61);
    expect(listing).toMatchObject({ clock: 61, moves: 0 });
    const byId = new Map(stored.map((r) => [r.task_id, r]));
    expect(byId.get("t0")).toMatchObject({ state: "completed", updated_at: at(9) });
    expect(byId.get("t1")).toMatchObject({
      state: "completed",
      updated_at: at(6),
      context_id: "c1",
    });
    for (let n = 2; n < 60; n++) {
      expect(byId.get(`t${n}`)).toEqual({
        task_id: `t${n}`,
        context_id: `c${n % 3}`,
        state: "working",
        updated_at: at(5),
      });
    }
  });
});

describe("durable core: an artifact's first parts in its own row (issue 10)", () => {
  const counts = (state: DurableObjectState) => ({
    inTask: state.storage.sql
      .exec<{ n: number }>("SELECT COUNT(*) AS n FROM tasks WHERE first_artifact IS NOT NULL")
      .one().n,
    inline: state.storage.sql
      .exec<{ n: number }>("SELECT COUNT(*) AS n FROM artifacts WHERE parts IS NOT NULL")
      .one().n,
    partRows: state.storage.sql
      .exec<{ n: number }>("SELECT COUNT(*) AS n FROM artifact_parts")
      .one().n,
  });

  it("a small artifact is one row; appended chunks, replacements and big artifacts read back in order", async () => {
    const result = await runInDurableObject(stubOf("artifact-inline"), (_i, state) => {
      ensureSchema(state.storage, CONTEXT_SCHEMA);
      const fresh = () => new TaskStore(state.storage, new HistoryStore(state.storage));
      const store = fresh();
      store.create(taskFixture("t"), true);
      const chunk = { append: false, lastChunk: false };
      store.putArtifact("t", artifactOf("a", "one"), chunk);
      const afterOne = counts(state);
      // Streamed: two more chunks appended after the inline first part.
      store.putArtifact("t", artifactOf("a", " two"), { append: true, lastChunk: false });
      store.putArtifact("t", artifactOf("a", " three"), { append: true, lastChunk: true });
      // A big artifact keeps a row per part; a replaced one drops its old parts.
      const big = { ...artifactOf("b", "x".repeat(40_000)) };
      big.parts = [Parts.text("x".repeat(40_000)), Parts.text("y".repeat(40_000))];
      store.putArtifact("t", big, chunk);
      store.putArtifact("t", artifactOf("c", "first"), chunk);
      store.putArtifact("t", artifactOf("c", " more"), { append: true, lastChunk: false });
      store.putArtifact("t", artifactOf("c", "replaced"), chunk);
      const text = (task: ReturnType<TaskStore["read"]>) =>
        task?.artifacts.map((a) => a.parts.map((p) => String(p.content).slice(0, 8)).join("|"));
      return {
        afterOne,
        memory: text(store.read("t")),
        stored: text(fresh().read("t")),
        whole: [
          JSON.parse(JSON.stringify(fresh().read("t")?.artifacts)),
          JSON.parse(JSON.stringify(store.read("t")?.artifacts)),
        ],
        end: counts(state),
      };
    });
    // The task's first artifact, small and whole, is in the task's own row.
    expect(result.afterOne).toEqual({ inTask: 1, inline: 0, partRows: 0 });
    expect(result.memory).toEqual(["one| two| three", "xxxxxxxx|yyyyyyyy", "replaced"]);
    expect(result.stored).toEqual(result.memory);
    expect(result.whole[0]).toEqual(result.whole[1]);
    // a: out of the task's row once appended to, 1 inline + 2 appended rows; b: 2 rows;
    // c: inline, its appended row deleted.
    expect(result.end).toEqual({ inTask: 0, inline: 2, partRows: 4 });
  });

  it("artifacts whose parts are all in rows (parts NULL, as a big artifact's) read back, take appends and replacements", async () => {
    const result = await runInDurableObject(stubOf("artifact-v13"), (_i, state) => {
      const sql = state.storage.sql;
      ensureSchema(state.storage, CONTEXT_SCHEMA);
      const header = (id: string) => {
        const { parts: _p, ...rest } = artifactOf(id, "");
        return JSON.stringify(rest);
      };
      new TaskStore(state.storage, new HistoryStore(state.storage)).create(taskFixture("t"), true);
      sql.exec(
        "INSERT INTO artifacts (task_key, artifact_id, seq, header) VALUES ((SELECT key FROM tasks WHERE id = 't'), 'old', 1, ?)",
        header("old"),
      );
      sql.exec(
        "INSERT INTO artifacts (task_key, artifact_id, seq, header) VALUES ((SELECT key FROM tasks WHERE id = 't'), 'old2', 2, ?)",
        header("old2"),
      );
      for (const [idx, text] of ["p0", "p1"].entries()) {
        sql.exec(
          "INSERT INTO artifact_parts (task_key, artifact_id, idx, body) VALUES ((SELECT key FROM tasks WHERE id = 't'), 'old', ?, ?)",
          idx,
          JSON.stringify(Parts.text(text)),
        );
      }
      sql.exec(
        "INSERT INTO artifact_parts (task_key, artifact_id, idx, body) VALUES ((SELECT key FROM tasks WHERE id = 't'), 'old2', 0, ?)",
        JSON.stringify(Parts.text("q0")),
      );
      const fresh = () => new TaskStore(state.storage, new HistoryStore(state.storage));
      const before = fresh()
        .read("t")
        ?.artifacts.map((a) => a.parts.map((p) => p.content));
      const store = fresh();
      store.putArtifact("t", artifactOf("old", "p2"), { append: true, lastChunk: true });
      store.putArtifact("t", artifactOf("old2", "new"), { append: false, lastChunk: true });
      store.putArtifact("t", artifactOf("next", "n0"), { append: false, lastChunk: true });
      return {
        before,
        after: fresh()
          .read("t")
          ?.artifacts.map((a) => [a.artifactId, a.parts.map((p) => p.content)]),
        end: counts(state),
      };
    });
    expect(result.before).toEqual([["p0", "p1"], ["q0"]]);
    expect(result.after).toEqual([
      ["old", ["p0", "p1", "p2"]],
      ["old2", ["new"]],
      ["next", ["n0"]],
    ]);
    expect(result.end).toEqual({ inTask: 0, inline: 2, partRows: 3 });
  });
});

describe("durable core: a task row written once per transaction, read as written (B6)", () => {
  it("B6: inside the transaction that made it, the row's later changes are in SQLite before anything reads it: a read from SQLite, a listing, the finished count", async () => {
    const { result, log } = await inStore("row-settled", (store, log) => {
      // A warm store: what it reads once (the log's end, the index outbox) is read.
      store.create(taskFixture("warm"), true);
      const start = log.length;
      return store.atomic(() => {
        const before = log.length;
        store.create(taskFixture("t"), true);
        store.putArtifact("t", artifactOf("r1", "echo"), { append: false, lastChunk: true });
        store.transition("t", "completed");
        const written = log
          .slice(before)
          .filter((q) => /^(INSERT INTO tasks|UPDATE tasks)/.test(q));
        // Nothing is read back from memory: the row as SQLite holds it now.
        store.cache.clear();
        const task = store.read("t", { includeArtifacts: true });
        const listed = store.page({ pageSize: 10, state: "completed" }).rows.map((r) => r.id);
        return {
          written,
          task,
          listed,
          finished: store.idsInStates(["completed"]),
          statements: log.slice(start),
        };
      });
    });
    // No statement wrote the row until the read asked for it; then one INSERT.
    expect(result.written).toEqual([]);
    const statements = result.statements;
    expect(statements.filter((q) => q.startsWith("INSERT INTO tasks"))).toHaveLength(1);
    expect(statements.filter((q) => q.startsWith("UPDATE tasks"))).toEqual([]);
    expect(log.length).toBeGreaterThan(statements.length);
    expect(result.task?.status.state).toBe("completed");
    expect(result.task?.artifacts.map((a) => a.parts[0]?.content)).toEqual(["echo"]);
    expect(result.listed).toEqual(["t"]);
    expect(result.finished).toEqual(["t"]);
  });
});
