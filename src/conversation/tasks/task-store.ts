/**
 * The task store: the one writer of a conversation's tasks. Each change and the event
 * announcing it are written in one transaction; the rows of each concern are kept by the
 * parts it owns (the event log, the listing clock, the index outbox, retention, the task
 * cache, the artifact rows); a task's status changes are decided by task-status.ts, its
 * artifacts by task-artifacts.ts, its messages by task-messages.ts, and the events held until
 * a turn ends by turn-events.ts. Every statement that writes the `tasks` table is in this file (scripts/check-layout.mjs checks).
 */

import type { Limits } from "../../agent/limits";
import type { Item } from "../../history/items";
import { type IndexFlags, PendingIndexRows } from "../../index/index-outbox";
import type { Artifact } from "../../protocol/artifact";
import type { TaskEvent } from "../../protocol/events";
import { type JsonObject, nowIso } from "../../protocol/json";
import type { Message } from "../../protocol/message";
import type { Task } from "../../protocol/task";
import { isTerminal, type TaskState } from "../../protocol/task-state";
import { mergePatch } from "../../storage/merge-patch";
import type { CuttablePage, PageQuery } from "../../storage/paging";
import { checkRowBytes } from "../../storage/row-limit";
import { taskRow, taskRows } from "../../storage/task-keys";
import type { TraceCarrier } from "../../telemetry";
import type { HistoryStore } from "../history/history-store";
import { moveHeldOutOfTask, PendingPartRows } from "./artifact-rows";
import { EventLog } from "./event-log";
import { ListingClock } from "./listing-clock";
import { Retention } from "./retention";
import { putTaskArtifact } from "./task-artifacts";
import { type ReadOptions, type StoreBound, TaskCache } from "./task-cache";
import { appendTaskMessage, recordTaskItems } from "./task-messages";
import { TaskRowChanges } from "./task-row-changes";
import {
  announceStatus,
  type LoggedEvent,
  metadataJson,
  type StatusRow,
  setStatusMessage,
  statusEvent,
  type TransitionOptions,
  transitionTask,
} from "./task-status";
import { type EventReaders, TurnEvents } from "./turn-events";

/** The row of the task whose id is bound at ?1 (a seek by its key). */
const BY_ID = taskRow();

export type { IndexEntry } from "../../index/index-outbox";
export { INLINE_PARTS_CHARS } from "./artifact-rows";
export { LIVE_TASKS, type ListBudget, type ReadOptions } from "./task-cache";
export type { EventReaders } from "./turn-events";

/**
 * The webhook delivery outbox as the store writes to it, in the same transaction as the
 * event (the conversation's `PushStore`).
 */
export interface TaskPushQueue {
  /** The task has no webhook config: its events queue nothing. */
  noConfigs(taskId: string): void;
  /** Queues the event for the task's webhooks; returns how many deliveries it queued. */
  enqueueEvent(taskId: string, seq: number, event: TaskEvent, now: number): number;
}

/**
 * The rows of one conversation's tasks. Every method is synchronous SQLite work, so a
 * change and the event that announces it are written together in one transaction.
 *
 * SQLite is the source of truth; what the object just wrote is also kept in memory (the
 * recent tasks as a read returns them, the index rows not yet acknowledged), so a
 * message's path writes rows and never reads back what it wrote. Every write goes through
 * this class, which updates both; a failed transaction drops the memory copy, which is
 * read again.
 */
export class TaskStore {
  constructor(
    private readonly storage: DurableObjectStorage,
    /** The context's conversation, where task messages are kept. */
    readonly history: HistoryStore<Item>,
    /** Webhook configs and their delivery outbox; null when the agent has push off. */
    readonly push: TaskPushQueue | null = null,
    /** How much of a task's history a read carries, and what memory keeps (defaults). */
    bounds: Partial<Pick<Limits, StoreBound>> = {},
  ) {
    // The store's parts read SQLite after the rows' pending changes are written (`settle`).
    const settle = () => this.settle();
    const settled = {
      get sql(): SqlStorage {
        settle();
        return storage.sql;
      },
    };
    this.events = new EventLog(settled);
    this.turn = new TurnEvents(this.events, (fn) => this.atomic(fn));
    this.listing = new ListingClock(settled);
    this.cache = new TaskCache(settled, history, this.listing, bounds);
    this.index = new PendingIndexRows(
      settled,
      (fn) => this.atomic(fn),
      indexFlags(() => this.sql),
    );
    this.retention = new Retention(settled, {
      atomic: (fn) => this.atomic(fn),
      listing: this.listing,
      events: this.events,
      index: this.index,
      cache: this.cache,
      withPush: push !== null,
      deleteTasks: (ids) => {
        // Numbered, so a chunk of ids is one statement.
        const marks = ids.map((_, i) => `?${i + 1}`);
        this.sql.exec(`DELETE FROM tasks WHERE ${taskRows(marks)}`, ...ids);
      },
    });
    history.onTaskItemPlaced = (taskId, seq) => this.widenHistory(taskId, seq);
  }

  /** The schema was just made, empty: what would be read on first use is known. */
  created(): void {
    this.history.created();
    this.listing.created();
    this.events.created();
  }

  /** The event log (SSE ids, replay). */
  readonly events: EventLog;
  /** The listing clock and its pages. */
  readonly listing: ListingClock;
  /** The tasks held in memory, read back from SQLite when not. */
  readonly cache: TaskCache;
  /** The rows waiting for the tenant index. */
  readonly index: PendingIndexRows;
  /** Retention of finished tasks. */
  readonly retention: Retention;

  /** Set when an event was queued for a webhook, so the object can wake its alarm. */
  pushQueued = false;

  /** The turn's held events (see `TurnEvents`). */
  private readonly turn: TurnEvents;

  /** Every reader of the log registers through `readers` (see `TurnEvents.readBy`). */
  readBy(readers: EventReaders): void {
    this.turn.readBy(readers);
  }

  private depth = 0;

  /**
   * The object's SQL, for the task's writers here and in task-status.ts; the rows' pending
   * changes are written first (see `settle`).
   */
  get sql(): SqlStorage {
    this.settle();
    return this.storage.sql;
  }

  /**
   * Changes to task rows made in the open transaction: written as one statement per task
   * before the next statement of the store (`sql`) or as the transaction ends, so a turn
   * that adds an artifact and ends its task writes the row once.
   */
  private readonly unsettled = new TaskRowChanges();

  /** Artifact part rows of the open transaction, written as the rows settle (task-artifacts.ts). */
  readonly partRows = new PendingPartRows();

  /**
   * Writes a status change to the task's row (task-status.ts decides it): only the columns
   * that change, so the statement is a fixed amount of work; `index_pending` set in the
   * same statement, the index outbox's mark. Inside a transaction it joins the row's other
   * changes (see `settle`).
   */
  writeStatusRow(taskId: string, row: StatusRow): void {
    let historyCeiling: number | null = null;
    if (row.eventCeiling !== null) {
      this.events.ended(taskId);
      // Its history ends with its last item, or with the final message appended next.
      historyCeiling = this.history.nextSeq() - (row.message !== null ? 0 : 1);
    }
    this.unsettled.status(taskId, { ...row, historyCeiling });
    if (this.depth === 0) this.settle();
  }

  /**
   * The artifact kept in the task's row (see `INLINE_ARTIFACT_CHARS`): its header and parts
   * as JSON, or nulls when it leaves the row. For task-artifacts.ts; written as
   * `writeStatusRow` is.
   */
  writeTaskArtifact(taskId: string, header: string | null, parts: string | null): void {
    this.unsettled.artifact(taskId, header, parts);
    if (this.depth === 0) this.settle();
  }

  /**
   * Moves the artifact held for the task's row (not yet written) to `artifacts`, without
   * writing the task's row first; false when none is held (it is in SQLite: see
   * `moveOutOfTask`). For task-artifacts.ts, inside its transaction.
   */
  moveHeldArtifact(taskId: string, artifactId: string): boolean {
    const held = this.unsettled.takeArtifact(taskId);
    if (held) moveHeldOutOfTask(this.storage.sql, taskId, artifactId, held);
    return held !== null;
  }

  /**
   * Writes the rows' pending changes (`writeStatusRow`, `writeTaskArtifact`, a new row):
   * one statement per task, binding only what changed; then the held part rows. Called before any other statement
   * of the store and before the transaction ends, so SQLite holds every change before
   * anything reads it.
   */
  settle(): void {
    const rows = this.unsettled.empty ? [] : this.unsettled.drain();
    for (const { insert, columns, values, args } of rows) {
      this.storage.sql.exec(
        insert
          ? `INSERT INTO tasks (${columns.join(", ")}) VALUES (${values.join(", ")})`
          : `UPDATE tasks SET ${columns.map((c, i) => `${c} = ${values[i]}`).join(", ")} WHERE ${BY_ID}`,
        ...args,
      );
    }
    // After the task rows: a part row's key is read from its task's row.
    if (!this.partRows.empty) this.partRows.write(this.storage.sql);
  }

  /** Keeps the trace context of a task's run with it, for what is queued later. */
  setTrace(taskId: string, carrier: TraceCarrier): void {
    this.sql.exec(`UPDATE tasks SET trace = ?2 WHERE ${BY_ID}`, taskId, carrier);
  }

  /**
   * Runs `fn` as one transaction; nested calls join the outer one. The index
   * acknowledgements gathered since the last write ride along, so they cost no commit
   * of their own. On failure the memory copy is dropped (SQLite rolled back).
   */
  atomic<T>(fn: () => T): T {
    if (this.depth > 0) {
      try {
        return fn();
      } catch (error) {
        // Part of this write may be done and there is no savepoint of its own: whoever
        // catches the error (a handler's code run inside a message's transaction), the
        // whole transaction rolls back.
        this.failedInside ??= { error };
        throw error;
      }
    }
    this.depth++;
    try {
      const result = this.storage.transactionSync(() => {
        this.index.writeAcks();
        const value = fn();
        if (this.failedInside) throw this.failedInside.error;
        this.settle();
        this.events.write();
        return value;
      });
      this.index.acksWritten();
      this.turn.committed();
      return result;
    } catch (error) {
      this.unsettled.clear();
      this.partRows.clear();
      this.events.discard();
      this.cache.clear();
      this.index.forget();
      this.listing.forget();
      this.retention.forget();
      this.history.forget();
      throw error;
    } finally {
      this.depth--;
      this.failedInside = null;
    }
  }

  /** The error of a write nested in the open transaction, which must then roll back. */
  private failedInside: { error: unknown } | null = null;

  exists(taskId: string): boolean {
    return this.state(taskId) !== null;
  }

  state(taskId: string): TaskState | null {
    const task = this.cache.peek(taskId);
    if (task) return task.status.state;
    const row = this.sql
      .exec<{ state: string }>(`SELECT state FROM tasks WHERE ${BY_ID}`, taskId)
      .toArray()[0];
    return row ? (row.state as TaskState) : null;
  }

  /**
   * Inserts a new task with its messages. With `start`, the task is written already
   * moved to working (one row, one event), as a run begins at once; returns the events.
   * `withPush`: a webhook config was registered for it first. `itemId` names the row of
   * its first message (a client's message: see `sentItemId`).
   */
  create(task: Task, start = false, withPush = false, itemId?: string): LoggedEvent[] {
    const live: Task = {
      ...task,
      history: [],
      artifacts: [],
      stateHistory: [],
      metadata: { ...task.metadata },
      status: { ...task.status },
    };
    this.cache.created(live);
    if (start) {
      const timestamp = nowIso();
      live.stateHistory.push({ previousState: task.status.state, newState: "working", timestamp });
      live.status = { state: "working", message: null, timestamp };
    }
    return this.atomic(() => {
      const metadata = metadataJson(live.metadata);
      const stateHistory = JSON.stringify(live.stateHistory);
      checkRowBytes("task row", metadata, stateHistory);
      const rowSeq = this.listing.rowKeyFor(live.id);
      // Written by `settle` with the row's later changes in this transaction: an answer
      // given at once makes the row one INSERT.
      const insert = new Map<string, SqlStorageValue>([
        ["key", rowSeq],
        ["id", live.id],
        ["context_id", live.contextId],
        ["state", live.status.state],
        ["status_message", null],
        ["status_timestamp", live.status.timestamp],
        ["state_history", stateHistory],
        ["created_at", live.createdAt],
        ["updated_at", live.status.timestamp],
        ["index_pending", 1],
        ["row_seq", rowSeq],
        ["event_floor", this.events.floor()],
        ["history_floor", this.history.nextSeq()],
      ]);
      // The column's default: a task created without metadata binds none.
      if (metadata !== "{}") insert.set("metadata", metadata);
      this.unsettled.insert(live.id, insert);
      this.listing.setRowSeq(live, rowSeq);
      if (isTerminal(live.status.state)) this.retention.noteFinished(live.status.timestamp);
      this.cache.remember(live);
      this.index.touch(live);
      if (this.push && !withPush) this.push.noConfigs(live.id);
      if (!withPush) this.turn.hold(live.id);
      for (const [i, m] of task.history.entries()) {
        this.appendMessage(live.id, m, i === 0 ? itemId : undefined);
      }
      return start ? [statusEvent(this, live)] : [];
    });
  }

  /** Appends conversation items under a task, in one transaction (see `recordTaskItems`). */
  recordItems(taskId: string, items: readonly Item[]): void {
    recordTaskItems(this, taskId, items);
  }

  /**
   * A task's history bounds take in an item placed at `seq` (an append after it ended, an
   * item a rewrite moved); within them already, nothing is written. For the task's
   * writers here and in task-messages.ts.
   */
  widenHistory(taskId: string, seq: number): void {
    this.sql.exec(
      `UPDATE tasks SET history_floor = MIN(history_floor, ?2),
         history_ceiling = CASE WHEN history_ceiling IS NULL THEN NULL ELSE MAX(history_ceiling, ?2) END
       WHERE ${BY_ID} AND (history_floor > ?2 OR history_ceiling < ?2)`,
      taskId,
      seq,
    );
  }

  /** A task message joins the context's conversation history (see `appendTaskMessage`). */
  appendMessage(
    taskId: string,
    message: Message,
    itemId?: string,
    inBounds = false,
    answers = false,
  ): void {
    appendTaskMessage(this, taskId, message, itemId, inBounds, answers);
  }

  /**
   * Moves a task through the lifecycle, each step in its state history and the event log
   * (see `transitionTask`). Throws before writing anything if illegal.
   */
  transition(taskId: string, to: TaskState, options: TransitionOptions = {}): LoggedEvent[] {
    return transitionTask(this, taskId, to, options);
  }

  /** A progress message: the state stays, the status message changes, history grows. */
  statusMessage(taskId: string, message: Message): LoggedEvent {
    return setStatusMessage(this, taskId, message);
  }

  /** A transient progress message, logged and streamed; the task does not change. */
  announce(taskId: string, message: Message): LoggedEvent {
    return announceStatus(this, taskId, message);
  }

  /**
   * Adds an artifact, replaces one, or appends parts to one (A2A append/lastChunk; see
   * `putTaskArtifact`).
   */
  putArtifact(
    taskId: string,
    artifact: Artifact,
    chunk: { append: boolean; lastChunk: boolean },
  ): LoggedEvent {
    return putTaskArtifact(this, taskId, artifact, chunk);
  }

  /**
   * A task, or null, with its newest messages within `bounds` (`limits.taskHistory`,
   * `limits.taskHistoryChars`); `historyLength` keeps the newest n of those (§3.2.4). A
   * task this object wrote recently comes from memory; the caller must not change it.
   */
  read(taskId: string, options: ReadOptions = {}): Task | null {
    return this.cache.read(taskId, options);
  }

  /** The newest user message of a task (what a resumed run starts from), or null. */
  lastUserMessage(taskId: string): Message | null {
    return this.cache.lastUserMessage(taskId);
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
  page(q: PageQuery): CuttablePage<{ id: string; updated_at: string }> {
    return this.listing.page(q);
  }

  /** One batch of retention (see `Retention.prune`); returns how many tasks went. */
  prune(keep: number, olderThan: string, batch = 100): number {
    return this.retention.prune(keep, olderThan, batch);
  }

  /** Merges keys into a task's metadata (JSON merge patch; null removes a key). */
  mergeMetadata(taskId: string, patch: JsonObject): void {
    const task = this.cache.use(taskId);
    const merged = mergePatch(task.metadata, patch);
    const json = JSON.stringify(merged);
    checkRowBytes("task metadata", json);
    this.atomic(() => {
      this.sql.exec(`UPDATE tasks SET metadata = ?2 WHERE ${BY_ID}`, taskId, json);
      task.metadata = merged;
    });
  }

  /**
   * Logs an event; its row is written as the transaction ends (see `EventLog.write`).
   * For the task's writers here and in task-status.ts.
   */
  log(taskId: string, event: TaskEvent): LoggedEvent {
    const seq = this.events.add(taskId, event, this.cache.peek(taskId)?.contextId);
    if (this.depth === 0) this.events.write();
    // Same transaction as the event: a delivery can never be lost or exist without it.
    if (this.push && this.push.enqueueEvent(taskId, seq, event, Date.now()) > 0) {
      this.pushQueued = true;
      this.events.watch(taskId);
    }
    return { seq, event };
  }
}

/** The index outbox's writes of `index_pending`, after the rows' pending changes. */
function indexFlags(sql: () => SqlStorage): IndexFlags {
  return {
    markAll: () => sql().exec("UPDATE tasks SET index_pending = 1"),
    clear: (ids) => {
      sql().exec(
        `UPDATE tasks SET index_pending = 0 WHERE ${taskRows(ids.map((_, i) => `?${i + 1}`))}`,
        ...ids,
      );
    },
  };
}
