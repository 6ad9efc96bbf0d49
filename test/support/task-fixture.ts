import type { TaskStore } from "../../src/conversation/tasks/task-store";
import { Messages } from "../../src/protocol/message";
import { submittedTask, type Task } from "../../src/protocol/task";

/**
 * Creates a task as admission does: its id the `sealed` part and the row's key (so the
 * store finds it by its key, not through `task_ids`); returns the id.
 */
export function createKeyed(store: TaskStore, sealed: string, start = true): string {
  return store.atomic(() => {
    const id = store.listing.mintTaskId(sealed);
    store.create(taskFixture(id), start);
    return id;
  });
}

/** A submitted task with one user message, as `TaskStore.create` takes it. */
export function taskFixture(id: string, contextId = "c"): Task {
  return submittedTask(id, contextId, Messages.user("hi"));
}

/**
 * Writes a task row as a restart left it, `working` with no run, straight into SQLite
 * (what `recover` finds on wake).
 */
export function orphanTaskRow(sql: SqlStorage, taskId: string, contextId: string): void {
  const now = new Date().toISOString();
  // Its key and place: the next value of the listing clock, as TaskStore would take it.
  const seq = sql
    .exec<{ n: number }>(
      "SELECT MAX((SELECT seq FROM list_clock), COALESCE((SELECT MAX(row_seq) FROM tasks), 0)) + 1 AS n",
    )
    .one().n;
  sql.exec("UPDATE list_clock SET seq = ?", seq);
  sql.exec(
    `INSERT INTO tasks (key, row_seq, history_floor, id, context_id, state, status_timestamp, metadata, created_at, updated_at)
     VALUES (${seq}, ${seq}, 0, ?, ?, 'working', ?, '{}', ?, ?)`,
    taskId,
    contextId,
    now,
    now,
    now,
  );
  // An id given whole (no key of its own) is found through `task_ids`.
  if (!taskId.includes(".")) sql.exec("INSERT INTO task_ids (id, key) VALUES (?, ?)", taskId, seq);
}
