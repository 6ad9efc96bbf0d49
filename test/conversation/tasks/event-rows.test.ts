import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { HistoryStore } from "../../../src/conversation/history/history-store";
import { chunkBody, eventBody, eventOfRow } from "../../../src/conversation/tasks/event-rows";
import { TaskStore } from "../../../src/conversation/tasks/task-store";
import { Artifacts } from "../../../src/protocol/artifact";
import type { TaskEvent } from "../../../src/protocol/events";
import { Messages } from "../../../src/protocol/message";
import { Parts } from "../../../src/protocol/part";
import { submittedTask } from "../../../src/protocol/task";
import { CONTEXT_SCHEMA } from "../../../src/storage/schema";
import { ensureSchema } from "../../../src/storage/schema-version";

/** A new object of the context namespace, white-box (any class's SQLite will do). */
const scratch = () =>
  env.EDGELINK_CONTEXT.get(env.EDGELINK_CONTEXT.idFromName(`event-rows-${crypto.randomUUID()}`));

/** Ids as long as the Worker's sealed ones, so what a row leaves out is visible in its size. */
const CONTEXT = `ctx-${"c".repeat(60)}`;
const SEALED = "s".repeat(100);

const chunk = (taskId: string, contextId: string, i: number): TaskEvent => ({
  kind: "artifact-update",
  taskId,
  contextId,
  artifact: Artifacts.create({ artifactId: "r", name: "result", parts: [Parts.text(`c${i}`)] }),
  append: i > 0,
  lastChunk: false,
});

describe("an event's row leaves out the ids its task holds, and reads back the same", () => {
  it("D4: a status or artifact update of the row's task is stored without its task and context ids and reads back byte for byte", () => {
    const taskId = `${SEALED}.7`;
    const update = chunk(taskId, CONTEXT, 3);
    const status: TaskEvent = {
      kind: "status-update",
      taskId,
      contextId: CONTEXT,
      status: { state: "working", message: null, timestamp: "2026-12-07T00:00:00.000Z" },
      final: false,
      metadata: { k: 1 },
    };
    for (const event of [update, status]) {
      const body = eventBody(taskId, CONTEXT, event);
      expect(body).not.toContain(SEALED);
      expect(body).not.toContain(CONTEXT);
      expect(body.length).toBe(JSON.stringify(event).length - taskId.length - CONTEXT.length - 27);
      expect(JSON.stringify(eventOfRow(body, taskId, CONTEXT))).toBe(JSON.stringify(event));
    }
  });

  it("D4: an event naming another task or context, in another key order, of another kind, or with no known context is stored whole", () => {
    const taskId = `${SEALED}.7`;
    const {
      kind,
      taskId: t,
      contextId: c,
      ...rest
    } = chunk(taskId, CONTEXT, 1) as Extract<TaskEvent, { kind: "artifact-update" }>;
    const whole: [string | undefined, TaskEvent][] = [
      [CONTEXT, chunk(`${SEALED}.8`, CONTEXT, 1)],
      [CONTEXT, chunk(taskId, "another", 1)],
      [undefined, chunk(taskId, CONTEXT, 1)],
      [CONTEXT, { kind, contextId: c, taskId: t, ...rest }],
      [CONTEXT, { kind: "task", task: submittedTask(taskId, CONTEXT, Messages.user("hi")) }],
      [
        CONTEXT,
        { kind: "message", message: { ...Messages.agent("hi"), taskId, contextId: CONTEXT } },
      ],
    ];
    for (const [contextId, event] of whole) {
      const body = eventBody(taskId, contextId, event);
      expect(body).toBe(JSON.stringify(event));
      expect(eventOfRow(body, taskId, CONTEXT)).toEqual(event);
    }
  });

  it("D4: a row without the ids whose task is gone reads as no event, never one with a wrong id", () => {
    const taskId = `${SEALED}.7`;
    const body = eventBody(taskId, CONTEXT, chunk(taskId, CONTEXT, 0));
    expect(eventOfRow(body, taskId, null)).toBeNull();
  });

  it("B1: a task's log mixing rows written whole (as before) and rows without the ids replays, pages and reads by seq the same events", async () => {
    const result = await runInDurableObject(scratch(), (_i, state) => {
      ensureSchema(state.storage, CONTEXT_SCHEMA);
      const store = new TaskStore(state.storage, new HistoryStore(state.storage));
      const id = store.atomic(() => {
        const id = store.listing.mintTaskId(SEALED);
        store.create(submittedTask(id, CONTEXT, Messages.user("stream")), true);
        return id;
      });
      const logged = store.atomic(() =>
        Array.from({ length: 4 }, (_, i) =>
          store.putArtifact(
            id,
            Artifacts.create({ artifactId: "r", name: "result", parts: [Parts.text(`c${i}`)] }),
            { append: i > 0, lastChunk: i === 3 },
          ),
        ),
      );
      logged.push(...store.transition(id, "completed"));
      const sql = state.storage.sql;
      const rows = () =>
        sql
          .exec<{ seq: number; body: string }>("SELECT seq, body FROM events ORDER BY seq")
          .toArray();
      const compact = rows();
      // Rewrite the first half as the code before this change stored them: whole.
      for (const e of logged.slice(0, 2)) {
        sql.exec("UPDATE events SET body = ? WHERE seq = ?", JSON.stringify(e.event), e.seq);
      }
      const fresh = new TaskStore(state.storage, new HistoryStore(state.storage));
      return {
        id,
        logged: logged.map((e) => ({ seq: e.seq, json: JSON.stringify(e.event) })),
        compact,
        mixed: rows(),
        replay: fresh.events
          .after(id, 0)
          .map((e) => ({ seq: e.seq, json: JSON.stringify(e.event) })),
        page: fresh.events.after(id, logged[1]?.seq ?? 0, 2).map((e) => e.seq),
        bySeq: logged.map((e) => JSON.stringify(fresh.events.get(e.seq))),
      };
    });
    // Every update row was stored without the ids; two rows are now whole, as before.
    const updates = result.compact.slice(-result.logged.length);
    for (const row of updates) expect(row.body).not.toContain(SEALED);
    expect(result.mixed.filter((r) => r.body.includes(SEALED))).toHaveLength(2);
    // The task's log answers exactly what was logged, whichever way each row was stored.
    expect(result.replay.slice(-result.logged.length)).toEqual(result.logged);
    expect(result.page).toEqual(result.logged.slice(2, 4).map((e) => e.seq));
    expect(result.bySeq).toEqual(result.logged.map((e) => e.json));
  });
});

/** A long artifact id, so what a chunk's row leaves out is visible in it. */
const ARTIFACT = `artifact-${"a".repeat(40)}`;

const piece = (i: number, over: Record<string, unknown> = {}) => ({
  ...Artifacts.create({ artifactId: ARTIFACT, name: "result", parts: [Parts.text(`c${i}`)] }),
  timestamp: "2026-12-07T00:00:00.000Z",
  ...over,
});

describe("an appended chunk's row keeps what differs from its artifact's earlier row", () => {
  it("B1 D4: a streamed artifact's chunks are stored without its header, and replay, a page from mid-stream and reads by seq give back every event byte for byte, with rows written whole before", async () => {
    const result = await runInDurableObject(scratch(), (_i, state) => {
      ensureSchema(state.storage, CONTEXT_SCHEMA);
      const store = new TaskStore(state.storage, new HistoryStore(state.storage));
      const id = store.atomic(() => {
        const id = store.listing.mintTaskId(SEALED);
        store.create(submittedTask(id, CONTEXT, Messages.user("stream")), true);
        return id;
      });
      const put = (i: number, over?: Record<string, unknown>) =>
        store.putArtifact(id, piece(i, over), { append: i > 0, lastChunk: i === 7 });
      // Two turns of chunks; one chunk renamed, one with another timestamp.
      const logged = store.atomic(() => [0, 1, 2, 3].map((i) => put(i)));
      logged.push(
        ...store.atomic(() => [
          put(4, { name: "renamed" }),
          put(5, { timestamp: "2026-12-07T00:00:01.000Z" }),
          put(6),
          put(7),
        ]),
      );
      logged.push(...store.transition(id, "completed"));
      const sql = state.storage.sql;
      const bodies = new Map(
        sql
          .exec<{ seq: number; body: string }>("SELECT seq, body FROM events WHERE task_id = ?", id)
          .toArray()
          .map((r) => [r.seq, r.body]),
      );
      const stored = logged.map((e) => bodies.get(e.seq) ?? "");
      // One chunk rewritten as the code before stored it: whole.
      const old = logged[6] as (typeof logged)[number];
      sql.exec("UPDATE events SET body = ? WHERE seq = ?", JSON.stringify(old.event), old.seq);
      const fresh = new TaskStore(state.storage, new HistoryStore(state.storage));
      const json = (list: { seq: number; event: TaskEvent }[]) =>
        list.map((e) => ({ seq: e.seq, json: JSON.stringify(e.event) }));
      return {
        logged: json(logged),
        stored,
        replay: json(fresh.events.after(id, 0)).slice(-logged.length),
        // A page starting after the third chunk: its chunks' base row is not on it.
        page: json(fresh.events.after(id, logged[2]?.seq ?? 0, 3)),
        bySeq: logged.map((e) => JSON.stringify(fresh.events.get(e.seq))),
      };
    });
    const chunks = result.stored.slice(1, 8);
    // The first chunk is whole; every appended one leaves its artifact's id and header out.
    expect(result.stored[0]).toContain(ARTIFACT);
    for (const body of chunks) expect(body).not.toContain(ARTIFACT);
    expect(chunks.filter((b) => b.includes('"name"'))).toEqual([result.stored[4]]);
    expect(chunks.filter((b) => b.includes('"timestamp"'))).toEqual([result.stored[5]]);
    for (const body of chunks.filter((b) => b !== result.stored[4] && b !== result.stored[5])) {
      expect(body.length).toBeLessThan((result.stored[0]?.length ?? 0) / 2);
    }
    expect(result.replay).toEqual(result.logged);
    expect(result.page).toEqual(result.logged.slice(3, 6));
    expect(result.bySeq).toEqual(result.logged.map((e) => e.json));
  });

  it("D4: a chunk in another key order, with an undefined value, or of a replaced artifact is stored whole; one whose earlier row is gone reads as no event", () => {
    const taskId = `${SEALED}.7`;
    const event = (artifact: Record<string, unknown>, append = true): TaskEvent =>
      ({
        kind: "artifact-update",
        taskId,
        contextId: CONTEXT,
        artifact,
        append,
        lastChunk: false,
      }) as TaskEvent;
    const baseBody = eventBody(taskId, CONTEXT, event(piece(0), false));
    const base = { seq: 5, artifact: JSON.parse(baseBody).artifact };
    const { artifactId, ...rest } = piece(1);
    const whole = [
      event({ ...rest, artifactId }),
      event({ ...piece(1), uri: undefined }),
      event({ ...piece(1), extensions: undefined }),
      event(piece(1), false),
      { ...event(piece(1)), metadata: { k: 1 } } as TaskEvent,
    ];
    for (const e of whole) expect(chunkBody(e, base)).toBeNull();
    const body = chunkBody(event(piece(1)), base) as string;
    const rowAt = (seq: number) => (seq === 5 ? baseBody : null);
    expect(JSON.stringify(eventOfRow(body, taskId, CONTEXT, rowAt))).toBe(
      JSON.stringify(event(piece(1))),
    );
    expect(eventOfRow(body, taskId, CONTEXT, () => null)).toBeNull();
    expect(eventOfRow(body, taskId, CONTEXT)).toBeNull();
    expect(eventOfRow(body, taskId, null, rowAt)).toBeNull();
  });

  it("B1: a chunk after a failed transaction never reads its artifact from a row that transaction lost", async () => {
    const result = await runInDurableObject(scratch(), (_i, state) => {
      ensureSchema(state.storage, CONTEXT_SCHEMA);
      const store = new TaskStore(state.storage, new HistoryStore(state.storage));
      const id = store.atomic(() => {
        const id = store.listing.mintTaskId(SEALED);
        store.create(submittedTask(id, CONTEXT, Messages.user("stream")), true);
        return id;
      });
      const logged = [store.putArtifact(id, piece(0), { append: false, lastChunk: false })];
      try {
        store.atomic(() => {
          // The artifact replaced (a new whole row), then the transaction fails.
          store.putArtifact(id, piece(1, { name: "lost" }), { append: false, lastChunk: false });
          throw new Error("fails");
        });
      } catch {}
      logged.push(store.putArtifact(id, piece(2), { append: true, lastChunk: true }));
      const fresh = new TaskStore(state.storage, new HistoryStore(state.storage));
      return {
        logged: logged.map((e) => JSON.stringify(e.event)),
        bySeq: logged.map((e) => JSON.stringify(fresh.events.get(e.seq))),
        replay: fresh.events.after(id, 0).map((e) => JSON.stringify(e.event)),
      };
    });
    expect(result.bySeq).toEqual(result.logged);
    expect(result.replay.slice(-2)).toEqual(result.logged);
  });
});
