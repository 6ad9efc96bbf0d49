import { Messages } from "../../src/protocol/message";
import { submittedTask, type Task } from "../../src/protocol/task";

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
  sql.exec(
    `INSERT INTO tasks (id, context_id, state, status_timestamp, metadata, created_at, updated_at)
     VALUES (?, ?, 'working', ?, '{}', ?, ?)`,
    taskId,
    contextId,
    now,
    now,
    now,
  );
}
