import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { HistoryStore } from "../../../src/conversation/history/history-store";
import { itemFromMessage } from "../../../src/conversation/tasks/conversation-bridge";
import { TaskStore } from "../../../src/conversation/tasks/task-store";
import type { Item } from "../../../src/history/items";
import { Artifacts } from "../../../src/protocol/artifact";
import { Messages } from "../../../src/protocol/message";
import { Parts } from "../../../src/protocol/part";
import { submittedTask } from "../../../src/protocol/task";
import { CONTEXT_SCHEMA } from "../../../src/storage/schema";
import { ensureSchema } from "../../../src/storage/schema-version";
import { countedStorage } from "../../support/counted-storage";
import { paramCount, treesWritten } from "../../support/sql-plans";

/** A new object of the context namespace, white-box (any class's SQLite will do). */
const scratch = () =>
  env.EDGELINK_CONTEXT.get(env.EDGELINK_CONTEXT.idFromName(`store-trees-${crypto.randomUUID()}`));

/**
 * What one blocking message writes, as admission and the echo agent's run write it: the
 * task's id is the Worker's sealed part (`sealed` here) and the row's key. Returns the id.
 */
function oneMessage(store: TaskStore, sealed: string, text: string): string {
  return store.atomic(() => {
    const id = store.listing.mintTaskId(sealed);
    const task = submittedTask(id, "c", { ...Messages.user(text), messageId: `m-${sealed}` });
    store.create(task, true, false, `msg_a2a_m-${sealed}`);
    store.putArtifact(
      id,
      Artifacts.create({
        artifactId: `a-${id}`,
        name: "result",
        parts: [Parts.text(`echo: ${text}`)],
      }),
      { append: false, lastChunk: true },
    );
    store.transition(id, "completed");
    return id;
  });
}

describe("what a message writes: statements and B-trees, counted", () => {
  it("B12: a blocking message is 3 statements entering 7 B-trees (one a partial index it skips), none an index by task or of task ids, its answer in the task's row", async () => {
    const result = await runInDurableObject(scratch(), (_i, state) => {
      ensureSchema(state.storage, CONTEXT_SCHEMA);
      const counted = countedStorage(state.storage);
      const store = new TaskStore(counted.proxy, new HistoryStore(counted.proxy));
      for (let i = 0; i < 3; i++) oneMessage(store, `warm-${i}`, "warm");
      const done = counted.measure();
      oneMessage(store, "t", "hello");
      const { queries } = done();
      const writes = queries.filter((q) => !/^\s*SELECT/i.test(q));
      const trees = new Set(writes.flatMap((q) => treesWritten(state.storage.sql, q)));
      // How each write finds its row: by a key, never a scan.
      const plans = writes.map((q) =>
        state.storage.sql
          .exec<{ detail: string }>(
            `EXPLAIN QUERY PLAN ${q}`,
            ...Array.from({ length: paramCount(q) }, () => "t"),
          )
          .toArray()
          .map((r) => r.detail)
          .join("; "),
      );
      return {
        statements: queries.length,
        writes,
        trees: [...trees].sort(),
        plans,
      };
    });
    expect(result.plans.join("\n")).not.toMatch(/\bSCAN (tasks|history_items|artifacts|events)\b/);
    // The answer's artifact and the completion join the task's INSERT: its row is written
    // once, so nothing seeks it (an UPDATE would, on the key its id carries).
    expect(result.plans.filter((p) => /\btasks\b/.test(p))).toEqual([]);
    expect(result.writes.filter((q) => /^\s*UPDATE tasks/.test(q))).toEqual([]);
    expect(result.plans.join("\n")).not.toMatch(/sqlite_autoindex_tasks/);
    // In one transaction: the task with its artifact and its completion (one INSERT), its
    // message, and its three events in one INSERT.
    expect(result.statements).toBe(3);
    expect(result.writes.length).toBe(3);
    expect(result.trees).toEqual([
      "events",
      "history_by_seq",
      "history_items",
      "history_pinned", // partial: a user message is not pinned, so no page of it changes
      "sqlite_autoindex_history_items_1",
      "tasks",
      "tasks_by_seq",
    ]);
  });

  it("D4: an answer streamed in 20 chunks in one transaction writes its appended parts in one statement, read back in order", async () => {
    const result = await runInDurableObject(scratch(), (_i, state) => {
      ensureSchema(state.storage, CONTEXT_SCHEMA);
      const counted = countedStorage(state.storage);
      const store = new TaskStore(counted.proxy, new HistoryStore(counted.proxy));
      for (let i = 0; i < 3; i++) oneMessage(store, `warm-${i}`, "warm");
      const done = counted.measure();
      const id = store.atomic(() => {
        const id = store.listing.mintTaskId("s");
        store.create(submittedTask(id, "c", Messages.user("stream")), true);
        for (let i = 0; i < 20; i++) {
          store.putArtifact(
            id,
            Artifacts.create({ artifactId: "r", name: "result", parts: [Parts.text(`c${i}`)] }),
            { append: i > 0, lastChunk: i === 19 },
          );
        }
        store.transition(id, "completed");
        return id;
      });
      const { queries } = done();
      store.cache.clear(); // read back from the rows
      const parts = store.read(id)?.artifacts.map((a) => a.parts.map((p) => p.content));
      return { queries, parts };
    });
    const partInserts = result.queries.filter((q) => /^\s*INSERT INTO artifact_parts/.test(q));
    expect(partInserts).toHaveLength(1);
    // Its message, the task (INSERT, then one UPDATE once its artifact leaves the row), the
    // artifact, its parts, its events: 25 statements when each part was one.
    expect(result.queries.length).toBeLessThanOrEqual(6);
    expect(result.parts).toEqual([Array.from({ length: 20 }, (_, i) => `c${i}`)]);
  });

  it("D4: a task made and streamed 20 chunks in one transaction writes its row once: its first artifact leaves the row before the row is written", async () => {
    const result = await runInDurableObject(scratch(), (_i, state) => {
      ensureSchema(state.storage, CONTEXT_SCHEMA);
      const counted = countedStorage(state.storage);
      const store = new TaskStore(counted.proxy, new HistoryStore(counted.proxy));
      for (let i = 0; i < 3; i++) oneMessage(store, `warm-${i}`, "warm");
      const done = counted.measure();
      const id = store.atomic(() => {
        const id = store.listing.mintTaskId("s");
        store.create(submittedTask(id, "c", Messages.user("stream")), true);
        for (let i = 0; i < 20; i++) {
          store.putArtifact(
            id,
            Artifacts.create({ artifactId: "r", name: "result", parts: [Parts.text(`c${i}`)] }),
            { append: i > 0, lastChunk: i === 19 },
          );
        }
        store.transition(id, "completed");
        return id;
      });
      const { queries } = done();
      const row = state.storage.sql
        .exec<{ a: string | null; p: string | null; state: string }>(
          "SELECT first_artifact AS a, first_artifact_parts AS p, state FROM tasks WHERE id = ?",
          id,
        )
        .one();
      store.cache.clear(); // read back from the rows
      const read = store.read(id);
      return {
        queries,
        row,
        parts: read?.artifacts.map((a) => [a.artifactId, a.parts.map((p) => p.content)]),
      };
    });
    const taskWrites = result.queries.filter((q) => /^\s*(INSERT INTO|UPDATE) tasks\b/.test(q));
    expect(taskWrites).toHaveLength(1);
    expect(taskWrites[0]).toMatch(/^\s*INSERT INTO tasks/);
    // Its message, the task, the artifact, its parts, its events.
    expect(result.queries).toHaveLength(5);
    expect(result.row).toEqual({ a: null, p: null, state: "completed" });
    expect(result.parts).toEqual([["r", Array.from({ length: 20 }, (_, i) => `c${i}`)]]);
  });

  it("D4: a first artifact replaced and then appended to in a later transaction leaves the row as it was last written, its columns cleared", async () => {
    const result = await runInDurableObject(scratch(), (_i, state) => {
      ensureSchema(state.storage, CONTEXT_SCHEMA);
      const store = new TaskStore(state.storage, new HistoryStore(state.storage));
      const put = (id: string, name: string, text: string, append: boolean) =>
        store.putArtifact(
          id,
          Artifacts.create({ artifactId: "r", name, parts: [Parts.text(text)] }),
          { append, lastChunk: false },
        );
      const id = store.atomic(() => {
        const id = store.listing.mintTaskId("s");
        store.create(submittedTask(id, "c", Messages.user("stream")), true);
        put(id, "first", "old", false);
        return id;
      });
      // In SQLite now; replaced (held in the row's change), then appended to, in one go.
      store.atomic(() => {
        put(id, "second", "new", false);
        put(id, "second", "more", true);
      });
      const row = state.storage.sql
        .exec<{ a: string | null; p: string | null }>(
          "SELECT first_artifact AS a, first_artifact_parts AS p FROM tasks WHERE id = ?",
          id,
        )
        .one();
      store.cache.clear();
      const read = store.read(id);
      return {
        row,
        artifacts: read?.artifacts.map((a) => [a.name, a.parts.map((p) => p.content)]),
      };
    });
    expect(result.row).toEqual({ a: null, p: null });
    expect(result.artifacts).toEqual([["second", ["new", "more"]]]);
  });

  it("B12: each hot read searches the index meant for it, never scanning a table", async () => {
    const plans = await runInDurableObject(scratch(), (_i, state) => {
      ensureSchema(state.storage, CONTEXT_SCHEMA);
      const counted = countedStorage(state.storage);
      const store = new TaskStore(counted.proxy, new HistoryStore(counted.proxy));
      const ids = Array.from({ length: 5 }, (_, i) => oneMessage(store, `t${i}`, `hello ${i}`));
      const t1 = ids[1] as string;
      store.cache.clear();
      const sql = state.storage.sql;
      const plan = (read: () => unknown) => {
        const done = counted.measure();
        read();
        // The listing's total is a count: it reads the smallest index whole, by design.
        return done()
          .queries.filter((q) => !q.includes("COUNT(*)"))
          .map((q) => {
            const args = Array.from({ length: paramCount(q) }, () => t1);
            return sql
              .exec<{ detail: string }>(`EXPLAIN QUERY PLAN ${q}`, ...args)
              .toArray()
              .map((r) => r.detail)
              .join("; ");
          });
      };
      return {
        read: plan(() => store.read(t1, { includeArtifacts: true })),
        page: plan(() => store.page({ pageSize: 2 })),
        events: plan(() => store.events.after(t1, 0)),
      };
    });
    const all = [...plans.read, ...plans.page, ...plans.events].join("\n");
    expect(all).not.toMatch(/\bSCAN (tasks|history_items|artifacts|artifact_parts|events)\b/);
    // A task by the key its id carries; its history between its bounds along the position
    // index; its artifacts by that key.
    expect(plans.read.join("\n")).toMatch(/SEARCH tasks USING INTEGER PRIMARY KEY \(rowid=\?\)/);
    expect(all).not.toMatch(/sqlite_autoindex_tasks/);
    expect(plans.read.join("\n")).toMatch(
      /SEARCH history_items USING INDEX history_by_seq \(seq>\? AND seq<\?\)/,
    );
    expect(plans.read.join("\n")).toMatch(/SEARCH artifacts USING PRIMARY KEY \(task_key=\?\)/);
    expect(plans.read.join("\n")).toMatch(
      /SEARCH artifact_parts USING PRIMARY KEY \(task_key=\?\)/,
    );
    // The listing walks the sequence index, newest first.
    expect(plans.page.join("\n")).toMatch(/SEARCH t USING INDEX tasks_by_seq \(row_seq<\?\)/);
    expect(plans.events.join("\n")).toMatch(/SEARCH events USING INTEGER PRIMARY KEY/);
    expect(plans.events.join("\n")).toMatch(/SEARCH tasks USING INTEGER PRIMARY KEY \(rowid=\?\)/);
  });
});

describe("a task's history bounds hold every item of the task", () => {
  const texts = (store: TaskStore, id: string) => {
    store.cache.clear(); // read back from the rows, as after a restart
    return (store.read(id)?.history ?? []).map((m) => (m.parts[0] as { content: string }).content);
  };

  it("B7: an ending message, an item after the end, an item a rewrite places before the task, and a live task's item after a rewrite removed its newest rows are all read back", async () => {
    const result = await runInDurableObject(scratch(), (_i, state) => {
      ensureSchema(state.storage, CONTEXT_SCHEMA);
      const history = new HistoryStore<Item>(state.storage);
      const store = new TaskStore(state.storage, history);
      oneMessage(store, "before", "earlier");
      store.create(submittedTask("a", "c", Messages.user("question")), true);
      oneMessage(store, "between", "other task");
      // Ends with a final message, appended after its status.
      store.transition("a", "failed", { message: Messages.agent("the end") });
      const ended = texts(store, "a");
      // An item recorded for it after it ended.
      store.recordItems("a", [itemFromMessage(Messages.agent("late"))]);
      const late = texts(store, "a");
      // A rewrite places an item of the task before the task was made (compaction's apply).
      const first = history.all()[0]?.item.id ?? null;
      history.apply(
        {
          removed: [],
          changed: [],
          added: [{ item: itemFromMessage(Messages.agent("moved")), afterId: null }],
        },
        () => "a",
      );
      const moved = texts(store, "a");
      // A rewrite removes the newest rows (a live task's message and the row before it):
      // the task's next item still goes above its floor.
      store.create(submittedTask("b", "c", Messages.user("before the rewrite")), true);
      const newest = history
        .all()
        .slice(-2)
        .map((r) => r.item.id);
      history.apply({ removed: newest, changed: [], added: [] }, () => null);
      store.appendMessage("b", Messages.agent("answer"));
      return { ended, late, moved, first, b: texts(store, "b") };
    });
    expect(result.first).not.toBeNull();
    expect(result.ended).toEqual(["question", "the end"]);
    expect(result.late).toEqual(["question", "the end", "late"]);
    expect(result.moved).toEqual(["moved", "question", "the end", "late"]);
    expect(result.b).toEqual(["answer"]);
  });
});

describe("a task's id names its row: found by its key, kept only if the whole id matches", () => {
  it("B12: a keyed id reads its row alone; an id given whole (no key) reads its key in task_ids first", async () => {
    const rows = await runInDurableObject(scratch(), (_i, state) => {
      ensureSchema(state.storage, CONTEXT_SCHEMA);
      const counted = countedStorage(state.storage);
      const store = new TaskStore(counted.proxy, new HistoryStore(counted.proxy));
      const keyed = oneMessage(store, "sealed", "hello");
      store.create(submittedTask("whole", "c", Messages.user("old")), true);
      store.cache.clear();
      const read = (id: string) => {
        const done = counted.measure();
        const found = store.state(id);
        return { found, rows: done().rowsRead };
      };
      return { keyed: read(keyed), whole: read("whole"), id: keyed };
    });
    expect(rows.id).toMatch(/^sealed\.[1-9][0-9]*$/);
    expect(rows.keyed).toEqual({ found: "completed", rows: 1 });
    expect(rows.whole).toEqual({ found: "working", rows: 2 });
  });

  it("B12: an altered id finds no task: another task's key, the key removed or added, malformed keys, another sealed part", async () => {
    const result = await runInDurableObject(scratch(), (_i, state) => {
      ensureSchema(state.storage, CONTEXT_SCHEMA);
      const store = new TaskStore(state.storage, new HistoryStore(state.storage));
      const a = oneMessage(store, "sealedA", "a");
      const b = oneMessage(store, "sealedB", "b");
      store.create(submittedTask("legacy", "c", Messages.user("old")), true);
      const key = (id: string) => id.slice(id.indexOf(".") + 1);
      const forged = [
        `sealedA.${key(b)}`, // another task's key in this conversation
        "sealedA", // the key removed
        `legacy.${key(a)}`, // a key added to an id issued without one
        `sealedA.0${key(a)}`, // a leading zero
        `sealedA.-${key(a)}`,
        `sealedA.${key(a)}.${key(a)}`,
        "sealedA.x",
        "sealedA.",
        `sealedA.${"9".repeat(40)}`,
        `sealedC.${key(a)}`, // another sealed part with this one's key
        `${a} `,
      ];
      store.cache.clear();
      const found = forged.map((id) => ({
        id,
        state: store.state(id),
        read: store.read(id) !== null,
        events: store.events.after(id, 0).length,
      }));
      // A write through a forged id changes nothing (no row matches it).
      store.setTrace(`sealedA.${key(b)}`, "forged");
      const trace = state.storage.sql
        .exec<{ n: number }>("SELECT COUNT(*) AS n FROM tasks WHERE trace IS NOT NULL")
        .one().n;
      return {
        found,
        real: [store.state(a), store.state(b), store.state("legacy")],
        trace,
      };
    });
    for (const f of result.found)
      expect(f, f.id).toMatchObject({ state: null, read: false, events: 0 });
    expect(result.real).toEqual(["completed", "completed", "working"]);
    expect(result.trace).toBe(0);
  });
});
