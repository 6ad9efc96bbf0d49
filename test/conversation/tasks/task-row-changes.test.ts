import { describe, expect, it } from "vitest";
import { TaskRowChanges } from "../../../src/conversation/tasks/task-row-changes";

const T1 = "2026-01-02T03:04:05.006Z";
const T2 = "2026-01-02T03:04:05.007Z";

/** A new task's row as the task store holds it, with its creation time and listing place. */
function inserted(createdAt: string, rowSeq: number) {
  return new Map<string, SqlStorageValue>([
    ["key", 7],
    ["id", "task.7"],
    ["context_id", "ctx"],
    ["state", "working"],
    ["status_message", null],
    ["status_timestamp", T1],
    ["state_history", "[]"],
    ["created_at", createdAt],
    ["updated_at", T1],
    ["index_pending", 1],
    ["row_seq", rowSeq],
  ]);
}

function drained(createdAt: string, rowSeq: number) {
  const changes = new TaskRowChanges();
  changes.insert("task.7", inserted(createdAt, rowSeq));
  const [write] = changes.drain();
  if (!write) throw new Error("nothing drained");
  return {
    columnValue: (column: string) => write.values[write.columns.indexOf(column)],
    args: write.args,
  };
}

describe("a task row's statement binds only what it must", () => {
  it("B6: the state is a literal and the update time takes the status time's parameter", () => {
    const row = drained(T1, 7);
    expect(row.columnValue("state")).toBe("'working'");
    expect(row.columnValue("status_timestamp")).toBe("?4");
    expect(row.columnValue("updated_at")).toBe("?4");
    expect(row.columnValue("status_message")).toBe("NULL");
    expect(row.columnValue("index_pending")).toBe("1");
    expect(row.args).toEqual(["task.7", 7, "ctx", T1, "[]", T1, 7]);
  });

  it("B6: a ceiling a few past its floor is the floor's parameter plus the difference; further, or with no floor in the statement, it is bound", () => {
    const statementOf = (ceilings: { event: number; history: number }, insert = true) => {
      const changes = new TaskRowChanges();
      const row = inserted(T1, 7);
      row.set("event_floor", 10);
      row.set("history_floor", 4);
      if (insert) changes.insert("task.7", row);
      changes.status("task.7", {
        state: "completed",
        timestamp: T1,
        stateHistory: "[]",
        rowSeq: 7,
        message: null,
        metadata: null,
        eventCeiling: ceilings.event,
        historyCeiling: ceilings.history,
      });
      const [write] = changes.drain();
      if (!write) throw new Error("nothing drained");
      const columnValue = (column: string) => write.values[write.columns.indexOf(column)];
      return {
        event: columnValue("event_ceiling"),
        history: columnValue("history_ceiling"),
        write,
      };
    };
    const near = statementOf({ event: 12, history: 4 });
    const floorAt = (column: string) => near.write.values[near.write.columns.indexOf(column)];
    expect(near.event).toBe(`${floorAt("event_floor")} + 2`);
    expect(near.history).toBe(`${floorAt("history_floor")} + 0`);
    expect(near.write.args).not.toContain(12);
    const far = statementOf({ event: 14, history: 3 });
    expect(far.event).toMatch(/^\?\d+$/);
    expect(far.history).toMatch(/^\?\d+$/);
    expect(far.write.args).toEqual(expect.arrayContaining([14, 3]));
    const update = statementOf({ event: 12, history: 5 }, false);
    expect(update.write.insert).toBe(false);
    expect(update.write.args).toEqual(["task.7", T1, "[]", 7, 12, 5]);
  });

  it("refuses a state that is not a task state's word rather than write it into SQL", () => {
    const changes = new TaskRowChanges();
    const row = inserted(T2, 8);
    row.set("state", "x'); DROP TABLE tasks; --");
    changes.insert("task.7", row);
    expect(() => changes.drain()).toThrow(TypeError);
  });
});
