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
    valueOf: (column: string) => write.values[write.columns.indexOf(column)],
    args: write.args,
  };
}

describe("a task row's statement binds only what it must", () => {
  it("B6: the state is a literal and the update time takes the status time's parameter", () => {
    const row = drained(T1, 7);
    expect(row.valueOf("state")).toBe("'working'");
    expect(row.valueOf("status_timestamp")).toBe("?4");
    expect(row.valueOf("updated_at")).toBe("?4");
    expect(row.valueOf("status_message")).toBe("NULL");
    expect(row.valueOf("index_pending")).toBe("1");
    expect(row.args).toEqual(["task.7", 7, "ctx", T1, "[]", T1, 7]);
  });

  it("refuses a state that is not a task state's word rather than write it into SQL", () => {
    const changes = new TaskRowChanges();
    const row = inserted(T2, 8);
    row.set("state", "x'); DROP TABLE tasks; --");
    changes.insert("task.7", row);
    expect(() => changes.drain()).toThrow(TypeError);
  });
});
