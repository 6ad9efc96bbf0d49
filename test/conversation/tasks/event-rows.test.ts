import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { HistoryStore } from "../../../src/conversation/history/history-store";
import { eventBody, eventOfRow } from "../../../src/conversation/tasks/event-rows";
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
        const id = store.newTaskId(SEALED);
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
