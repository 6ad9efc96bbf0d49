import type { Item } from "../history/items";
import type { Artifact } from "../models/artifact";
import { A2AError } from "../models/errors";
import type { TaskEvent } from "../models/events";
import type { JsonObject } from "../models/json";
import type { Message } from "../models/message";
import type { Part } from "../models/part";
import type { StateChange, Task, TaskStatus } from "../models/task";
import { isInterrupted, isTerminal, planTransition, type TaskState } from "../models/task-state";
import { itemFromMessage, messageFromItem } from "./conversation-bridge";
import type { HistoryStore } from "./history-store";
import { type Page, type PageQuery, queryPage } from "./paging";
import type { PushStore } from "./push-store";

interface TaskRow {
  id: string;
  context_id: string;
  state: string;
  status_message: string | null;
  status_timestamp: string;
  metadata: string;
  created_at: string;
  updated_at: string;
  [key: string]: SqlStorageValue;
}

/** Options for reading a task back. */
export interface ReadOptions {
  historyLength?: number;
  includeArtifacts?: boolean;
}

/**
 * The rows of one conversation's tasks. Every method is synchronous SQLite work, so a
 * change and the event that announces it are written together in one transaction.
 */
export class TaskStore {
  constructor(
    private readonly storage: DurableObjectStorage,
    /** The context's conversation, where task messages are kept. */
    readonly history: HistoryStore<Item>,
    /** Webhook configs and their delivery outbox; null when the agent has push off. */
    readonly push: PushStore | null = null,
  ) {}

  /** Set when an event was queued for a webhook, so the object can wake its alarm. */
  pushQueued = false;

  private get sql(): SqlStorage {
    return this.storage.sql;
  }

  exists(taskId: string): boolean {
    return this.sql.exec("SELECT 1 FROM tasks WHERE id = ?", taskId).toArray().length > 0;
  }

  state(taskId: string): TaskState | null {
    const row = this.sql
      .exec<{ state: string }>("SELECT state FROM tasks WHERE id = ?", taskId)
      .toArray()[0];
    return row ? (row.state as TaskState) : null;
  }

  /** Inserts a new submitted task with its first message. */
  create(task: Task): void {
    this.storage.transactionSync(() => {
      this.sql.exec(
        `INSERT INTO tasks (id, context_id, state, status_message, status_timestamp, metadata, created_at, updated_at)
         VALUES (?, ?, ?, NULL, ?, ?, ?, ?)`,
        task.id,
        task.contextId,
        task.status.state,
        task.status.timestamp,
        JSON.stringify(task.metadata),
        task.createdAt,
        task.status.timestamp,
      );
      for (const m of task.history) this.appendMessage(task.id, m);
      this.touchIndex(task.id);
    });
  }

  /** A task message joins the context's conversation history, tagged with its task. */
  /** Appends conversation items under a task, in one transaction, then touches the index. */
  recordItems(taskId: string, items: readonly Item[]): void {
    this.row(taskId);
    this.storage.transactionSync(() => {
      for (const item of items) this.history.append(item, taskId);
    });
  }

  appendMessage(taskId: string, message: Message): void {
    this.history.append(itemFromMessage(message), taskId);
  }

  /**
   * Moves a task through the lifecycle, recording each step in its state history and
   * the event log. Throws InvalidTransitionError before writing anything if illegal.
   * Returns the logged events.
   */
  transition(
    taskId: string,
    to: TaskState,
    options: {
      viaWorking?: boolean;
      message?: Message | null;
      metadata?: JsonObject;
    } = {},
  ): { seq: number; event: TaskEvent }[] {
    const row = this.row(taskId);
    const steps = planTransition(row.state as TaskState, to, { viaWorking: options.viaWorking });
    if (steps.length === 0) return [];
    const logged: { seq: number; event: TaskEvent }[] = [];
    this.storage.transactionSync(() => {
      let previous = row.state as TaskState;
      steps.forEach((next, i) => {
        const timestamp = new Date().toISOString();
        const last = i === steps.length - 1;
        const message = last ? (options.message ?? null) : null;
        this.sql.exec(
          `INSERT INTO state_history (task_id, seq, previous_state, new_state, timestamp)
           VALUES (?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM state_history WHERE task_id = ?), ?, ?, ?)`,
          taskId,
          taskId,
          previous,
          next,
          timestamp,
        );
        this.setStatus(taskId, { state: next, message, timestamp });
        if (message) this.appendMessage(taskId, message);
        logged.push(this.statusEvent(taskId, row.context_id, { state: next, message, timestamp }));
        previous = next;
      });
      if (options.metadata) this.mergeMetadata(taskId, options.metadata);
      this.touchIndex(taskId);
    });
    return logged;
  }

  /** A progress message: the state stays, the status message changes, history grows. */
  statusMessage(taskId: string, message: Message): { seq: number; event: TaskEvent } {
    const row = this.row(taskId);
    const status: TaskStatus = {
      state: row.state as TaskState,
      message,
      timestamp: new Date().toISOString(),
    };
    return this.storage.transactionSync(() => {
      this.setStatus(taskId, status);
      this.appendMessage(taskId, message);
      return this.statusEvent(taskId, row.context_id, status);
    });
  }

  /**
   * A transient progress message: logged and streamed as a status update, but neither the
   * task's status nor its history changes (tool work and reasoning for watching clients).
   */
  announce(taskId: string, message: Message): { seq: number; event: TaskEvent } {
    const row = this.row(taskId);
    const status: TaskStatus = {
      state: row.state as TaskState,
      message,
      timestamp: new Date().toISOString(),
    };
    return this.statusEvent(taskId, row.context_id, status);
  }

  /** Adds an artifact, replaces one, or appends parts to one (A2A append/lastChunk). */
  putArtifact(
    taskId: string,
    artifact: Artifact,
    chunk: { append: boolean; lastChunk: boolean },
  ): { seq: number; event: TaskEvent } {
    const row = this.row(taskId);
    return this.storage.transactionSync(() => {
      const existing = this.sql
        .exec<{ n: number }>(
          "SELECT COALESCE(MAX(idx) + 1, 0) AS n FROM artifact_parts WHERE task_id = ? AND artifact_id = ?",
          taskId,
          artifact.artifactId,
        )
        .one().n;
      const known =
        this.sql
          .exec(
            "SELECT 1 FROM artifacts WHERE task_id = ? AND artifact_id = ?",
            taskId,
            artifact.artifactId,
          )
          .toArray().length > 0;
      if (chunk.append && !known) {
        throw new A2AError(
          "InvalidParams",
          `Cannot append to artifact ${artifact.artifactId}: it does not exist`,
        );
      }
      let start = 0;
      if (chunk.append) {
        start = existing;
      } else {
        const { parts: _parts, ...header } = artifact;
        if (known) {
          this.sql.exec(
            "DELETE FROM artifact_parts WHERE task_id = ? AND artifact_id = ?",
            taskId,
            artifact.artifactId,
          );
          this.sql.exec(
            "UPDATE artifacts SET header = ? WHERE task_id = ? AND artifact_id = ?",
            JSON.stringify(header),
            taskId,
            artifact.artifactId,
          );
        } else {
          this.sql.exec(
            `INSERT INTO artifacts (task_id, artifact_id, seq, header)
             VALUES (?, ?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM artifacts WHERE task_id = ?), ?)`,
            taskId,
            artifact.artifactId,
            taskId,
            JSON.stringify(header),
          );
        }
      }
      artifact.parts.forEach((part, i) => {
        this.sql.exec(
          "INSERT INTO artifact_parts (task_id, artifact_id, idx, body) VALUES (?, ?, ?, ?)",
          taskId,
          artifact.artifactId,
          start + i,
          JSON.stringify(part),
        );
      });
      return this.log(taskId, {
        kind: "artifact-update",
        taskId,
        contextId: row.context_id,
        artifact,
        append: chunk.append,
        lastChunk: chunk.lastChunk,
      });
    });
  }

  /** A whole task, or null. `historyLength` keeps the newest n messages (§3.2.4). */
  read(taskId: string, options: ReadOptions = {}): Task | null {
    const row = this.sql.exec<TaskRow>("SELECT * FROM tasks WHERE id = ?", taskId).toArray()[0];
    if (!row) return null;
    const { historyLength, includeArtifacts = true } = options;
    const history = this.messagesOf(taskId, historyLength);
    const stateHistory = this.sql
      .exec<{ previous_state: string; new_state: string; timestamp: string }>(
        "SELECT previous_state, new_state, timestamp FROM state_history WHERE task_id = ? ORDER BY seq",
        taskId,
      )
      .toArray()
      .map(
        (r): StateChange => ({
          previousState: r.previous_state as TaskState,
          newState: r.new_state as TaskState,
          timestamp: r.timestamp,
        }),
      );
    return {
      id: row.id,
      contextId: row.context_id,
      status: {
        state: row.state as TaskState,
        message: row.status_message ? (JSON.parse(row.status_message) as Message) : null,
        timestamp: row.status_timestamp,
      },
      history,
      artifacts: includeArtifacts ? this.artifacts(taskId) : [],
      metadata: JSON.parse(row.metadata) as JsonObject,
      stateHistory,
      createdAt: row.created_at,
      flowState: {},
    };
  }

  private artifacts(taskId: string): Artifact[] {
    const parts = new Map<string, Part[]>();
    for (const r of this.sql.exec<{ artifact_id: string; body: string }>(
      "SELECT artifact_id, body FROM artifact_parts WHERE task_id = ? ORDER BY artifact_id, idx",
      taskId,
    )) {
      const list = parts.get(r.artifact_id) ?? [];
      list.push(JSON.parse(r.body) as Part);
      parts.set(r.artifact_id, list);
    }
    return (
      this.sql
        .exec<{ artifact_id: string; header: string }>(
          "SELECT artifact_id, header FROM artifacts WHERE task_id = ? ORDER BY seq",
          taskId,
        )
        .toArray()
        // Rows this store wrote itself: rebuilt, not re-validated (hot path of every read).
        .map((r) => ({
          ...(JSON.parse(r.header) as Omit<Artifact, "parts">),
          parts: parts.get(r.artifact_id) ?? [],
        }))
    );
  }

  /** A task's messages from the conversation history; `last` keeps the newest n. */
  messagesOf(taskId: string, last?: number): Message[] {
    return this.history
      .ofTask(taskId, last)
      .flatMap((row) => (row.item.type === "message" ? [messageFromItem(row.item, taskId)] : []));
  }

  /** The newest user message of a task (what a resumed run starts from). */
  lastUserMessage(taskId: string): Message | null {
    return this.messagesOf(taskId).findLast((m) => m.role === "user") ?? null;
  }

  /** Tasks in the given states (used on wake to find interrupted runs). */
  idsInStates(states: readonly TaskState[]): string[] {
    const marks = states.map(() => "?").join(", ");
    return this.sql
      .exec<{ id: string }>(`SELECT id FROM tasks WHERE state IN (${marks})`, ...states)
      .toArray()
      .map((r) => r.id);
  }

  /** One page of this conversation's tasks, newest status first. */
  page(q: PageQuery): Page<{ id: string; updated_at: string }> {
    return queryPage(this.sql, { table: "tasks", id: "id", columns: "state" }, q);
  }

  /** Events of a task logged after `afterSeq`, oldest first. */
  eventsAfter(taskId: string, afterSeq: number): { seq: number; event: TaskEvent }[] {
    return this.sql
      .exec<{ seq: number; body: string }>(
        "SELECT seq, body FROM events WHERE task_id = ? AND seq > ? ORDER BY seq",
        taskId,
        afterSeq,
      )
      .toArray()
      .map((r) => ({ seq: r.seq, event: JSON.parse(r.body) as TaskEvent }));
  }

  /** Seq of the newest logged event of a task (0 if none). */
  lastSeq(taskId: string): number {
    return (
      this.sql
        .exec<{ s: number | null }>("SELECT MAX(seq) AS s FROM events WHERE task_id = ?", taskId)
        .one().s ?? 0
    );
  }

  /** Index rows waiting to reach the tenant index. */
  outbox(): { taskId: string; state: string; createdAt: string; updatedAt: string }[] {
    return this.sql
      .exec<{ task_id: string; state: string; created_at: string; updated_at: string }>(
        "SELECT task_id, state, created_at, updated_at FROM index_outbox",
      )
      .toArray()
      .map((r) => ({
        taskId: r.task_id,
        state: r.state,
        createdAt: r.created_at,
        updatedAt: r.updated_at,
      }));
  }

  /** Drops acknowledged outbox rows, unless they changed again meanwhile. */
  acknowledge(rows: readonly { taskId: string; updatedAt: string; state: string }[]): void {
    for (const r of rows) {
      this.sql.exec(
        "DELETE FROM index_outbox WHERE task_id = ? AND updated_at = ? AND state = ?",
        r.taskId,
        r.updatedAt,
        r.state,
      );
    }
  }

  private row(taskId: string): TaskRow {
    const row = this.sql.exec<TaskRow>("SELECT * FROM tasks WHERE id = ?", taskId).toArray()[0];
    if (!row) throw new A2AError("TaskNotFound", `Task ${taskId} not found`, { taskId });
    return row;
  }

  private setStatus(taskId: string, status: TaskStatus): void {
    this.sql.exec(
      "UPDATE tasks SET state = ?, status_message = ?, status_timestamp = ?, updated_at = ? WHERE id = ?",
      status.state,
      status.message ? JSON.stringify(status.message) : null,
      status.timestamp,
      status.timestamp,
      taskId,
    );
  }

  /** Merges keys into a task's metadata (JSON merge patch; null removes a key). */
  mergeMetadata(taskId: string, patch: JsonObject): void {
    this.sql.exec(
      "UPDATE tasks SET metadata = json_patch(metadata, ?) WHERE id = ?",
      JSON.stringify(patch),
      taskId,
    );
  }

  private statusEvent(
    taskId: string,
    contextId: string,
    status: TaskStatus,
  ): { seq: number; event: TaskEvent } {
    const final = isTerminal(status.state) || isInterrupted(status.state);
    return this.log(taskId, { kind: "status-update", taskId, contextId, status, final });
  }

  private log(taskId: string, event: TaskEvent): { seq: number; event: TaskEvent } {
    const seq = this.sql
      .exec<{ seq: number }>(
        "INSERT INTO events (task_id, body) VALUES (?, ?) RETURNING seq",
        taskId,
        JSON.stringify(event),
      )
      .one().seq;
    // Same transaction as the event: a delivery can never be lost or exist without it.
    if (this.push && this.push.enqueue(taskId, seq, Date.now()) > 0) this.pushQueued = true;
    return { seq, event };
  }

  /** One logged event by its sequence number. */
  event(seq: number): TaskEvent | null {
    const row = this.sql
      .exec<{ body: string }>("SELECT body FROM events WHERE seq = ?", seq)
      .toArray()[0];
    return row ? (JSON.parse(row.body) as TaskEvent) : null;
  }

  private touchIndex(taskId: string): void {
    this.sql.exec(
      `INSERT INTO index_outbox (task_id, state, created_at, updated_at)
       SELECT id, state, created_at, updated_at FROM tasks WHERE id = ?
       ON CONFLICT (task_id) DO UPDATE SET state = excluded.state, updated_at = excluded.updated_at`,
      taskId,
    );
  }
}
