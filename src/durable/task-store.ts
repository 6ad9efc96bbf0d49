import { DEFAULT_LIMITS, type Limits } from "../agent/limits";
import { type Item, isUserMessage, type MessageItem } from "../history/items";
import type { Artifact } from "../models/artifact";
import { A2AError } from "../models/errors";
import type { TaskEvent } from "../models/events";
import { type JsonObject, nowIso } from "../models/json";
import type { Message } from "../models/message";
import type { Part } from "../models/part";
import type { StateChange, Task, TaskStatus } from "../models/task";
import { isInterrupted, isTerminal, planTransition, type TaskState } from "../models/task-state";
import { itemFromMessage, messageFromItem } from "./conversation-bridge";
import type { HistoryStore } from "./history-store";
import { mergePatch } from "./merge-patch";
import { type CuttablePage, type PageQuery, queryPage } from "./paging";
import type { PushStore } from "./push-store";
import { checkRowBytes } from "./row-limit";
import { CONTEXT_LISTING_KEEP, EVENTS_SEQ_KEY } from "./schema";
import { sqlLimit } from "./sql-limit";

interface TaskRow {
  id: string;
  context_id: string;
  state: string;
  status_message: string | null;
  status_timestamp: string;
  metadata: string;
  state_history: string;
  created_at: string;
  updated_at: string;
  row_seq: number;
  [key: string]: SqlStorageValue;
}

/** The limits a task store applies itself. */
type StoreBound = "taskHistory" | "taskHistoryChars" | "liveTaskChars" | "taskArtifactChars";

/**
 * How many characters of artifacts a listing page may carry: a page stops before the task
 * that would take it past `chars`, except that with `atLeastOne` its first task is
 * always there (a page always moves the listing on).
 */
export interface ListBudget {
  chars: number;
  atLeastOne: boolean;
}

/** Characters of stored JSON per artifact of a task, and their sum. */
interface ArtifactSizes {
  each: Map<string, number>;
  total: number;
}

/** Options for reading a task back. */
export interface ReadOptions {
  historyLength?: number;
  includeArtifacts?: boolean;
}

/** A task's entry for the tenant index, waiting to be sent. */
export interface IndexEntry {
  taskId: string;
  state: string;
  createdAt: string;
  updatedAt: string;
}

/**
 * Tasks kept in memory (the recently written ones, each with the history a read carries);
 * older ones are read back.
 */
export const LIVE_TASKS = 32;

/** The states retention prunes (the terminal ones), as SQL. */
const FINISHED = "state IN ('completed', 'failed', 'canceled', 'rejected')";

/**
 * A task's newest rows searched for the question a run answers: past them, a window
 * (which seeks at most KEEP_SEEK_ROWS past its budget) would not reach it anyway.
 */
const QUESTION_SEEK_ROWS = 4096;

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
    readonly push: PushStore | null = null,
    /** How much of a task's history a read carries, and what memory keeps (defaults). */
    bounds: Partial<Pick<Limits, StoreBound>> = {},
  ) {
    this.bounds = { ...DEFAULT_LIMITS, ...bounds };
  }

  private readonly bounds: Pick<Limits, StoreBound>;

  /** Set when an event was queued for a webhook, so the object can wake its alarm. */
  pushQueued = false;

  /** Called when a row for the tenant index is pending (a state change or a removal). */
  onIndexPending: () => void = () => {};

  /** Recently written tasks, least recently used first. */
  private readonly live = new Map<string, Task>();
  /** Index rows not yet acknowledged; null until read from SQLite. */
  private pending: Map<string, IndexEntry> | null = null;
  /** Tasks the index acknowledged, marked in SQLite with the next write. */
  private acked: string[] = [];
  private depth = 0;

  /**
   * The listing clock (see `listingSteps` in schema.ts), kept here instead of by
   * triggers: every insert and every change of `updated_at` takes the next value into
   * the row's `row_seq`, in the same statement. SQLite's `list_clock` is brought up to
   * it only when a page is read or rows are deleted; on load the clock is the highest of
   * `list_clock`, any `row_seq` and any move, so it never goes back. Null until read.
   */
  private clock: number | null = null;
  /** What `list_clock` holds, as far as this store knows. */
  private storedClock = 0;
  /**
   * The newest snapshot a page token may hold (every one, after a load). A row last
   * changed after it is in no token's snapshot, so its next change records no move.
   */
  private issued = 0;
  /**
   * The newest event's seq (the SSE id), read once: an insert names its seq instead of
   * asking SQLite with RETURNING, which costs several times the insert itself (nor does the
   * table keep AUTOINCREMENT's extra row: see `nextEventSeq`).
   */
  private lastEvent: number | null = null;
  /** The `row_seq` of the tasks in memory. */
  private readonly rowSeqs = new WeakMap<Task, number>();
  /**
   * Events logged in the open transaction, written by one INSERT as it ends (their seqs
   * follow each other): a statement costs the same fixed work whatever its rows.
   */
  private unwritten: { taskId: string; body: string }[] = [];
  /** The seq of the first of `unwritten`. */
  private firstUnwritten = 0;
  /**
   * Finished tasks and the oldest one's last update, for retention's next due time; read
   * once, then kept as tasks finish (null: read again, after a prune or a rollback).
   */
  private finished: { count: number; oldest: string | null } | null = null;
  /** The history item of the newest user message appended to a task in memory. */
  private readonly questions = new WeakMap<Task, { messageId: string; itemId: string }>();
  /**
   * The characters of stored JSON of each message a task in memory carries, oldest first,
   * and their sum: its history is held to `bounds` as messages join it, as `load` reads it.
   */
  private readonly sizes = new WeakMap<Task, { each: number[]; total: number }>();
  /**
   * Characters of stored JSON each task in memory holds (its history and artifacts, as
   * written), and their sum over `live`, which `limits.liveTaskChars` bounds.
   */
  private readonly weights = new WeakMap<Task, number>();
  private liveChars = 0;
  /**
   * The characters of stored JSON of each artifact of a task in memory (header and
   * parts), which `limits.taskArtifactChars` bounds together.
   */
  private readonly artifactSizes = new WeakMap<Task, ArtifactSizes>();

  private get sql(): SqlStorage {
    return this.storage.sql;
  }

  /**
   * Runs `fn` as one transaction; nested calls join the outer one. The index
   * acknowledgements gathered since the last write ride along, so they cost no commit
   * of their own. On failure the memory copy is dropped (SQLite rolled back).
   */
  atomic<T>(fn: () => T): T {
    if (this.depth > 0) return fn();
    this.depth++;
    try {
      const result = this.storage.transactionSync(() => {
        this.writeAcks();
        const value = fn();
        this.writeEvents();
        return value;
      });
      this.acked = [];
      return result;
    } catch (error) {
      this.unwritten = [];
      this.live.clear();
      this.liveChars = 0;
      this.pending = null;
      this.clock = null;
      this.lastEvent = null;
      this.finished = null;
      this.history.forget();
      throw error;
    } finally {
      this.depth--;
    }
  }

  exists(taskId: string): boolean {
    return this.state(taskId) !== null;
  }

  state(taskId: string): TaskState | null {
    const task = this.live.get(taskId);
    if (task) return task.status.state;
    const row = this.sql
      .exec<{ state: string }>("SELECT state FROM tasks WHERE id = ?", taskId)
      .toArray()[0];
    return row ? (row.state as TaskState) : null;
  }

  /**
   * Inserts a new task with its messages. With `start`, the task is written already
   * moved to working (one row, one event), as a run begins at once; returns the events.
   * `withPush`: a webhook config was registered for it first. `itemId` names the row of
   * its first message (a client's message: see `sentItemId`).
   */
  create(
    task: Task,
    start = false,
    withPush = false,
    itemId?: string,
  ): { seq: number; event: TaskEvent }[] {
    const live: Task = {
      ...task,
      history: [],
      artifacts: [],
      stateHistory: [],
      metadata: { ...task.metadata },
      status: { ...task.status },
    };
    this.sizes.set(live, { each: [], total: 0 });
    this.weights.set(live, 0);
    this.artifactSizes.set(live, { each: new Map(), total: 0 });
    if (start) {
      const timestamp = nowIso();
      live.stateHistory.push({ previousState: task.status.state, newState: "working", timestamp });
      live.status = { state: "working", message: null, timestamp };
    }
    return this.atomic(() => {
      const metadata = JSON.stringify(live.metadata);
      const stateHistory = JSON.stringify(live.stateHistory);
      checkRowBytes("task row", metadata, stateHistory);
      this.sql.exec(
        `INSERT INTO tasks (id, context_id, state, status_message, status_timestamp, metadata, state_history, created_at, updated_at, index_pending, row_seq)
         VALUES (?1, ?2, ?3, NULL, ?4, ?5, ?6, ?7, ?4, 1, ?8)`,
        live.id,
        live.contextId,
        live.status.state,
        live.status.timestamp,
        metadata,
        stateHistory,
        live.createdAt,
        this.tick(),
      );
      this.rowSeqs.set(live, this.clock as number);
      if (isTerminal(live.status.state)) this.noteFinished(live.status.timestamp);
      this.remember(live);
      this.touchIndex(live);
      if (this.push && !withPush) this.push.noConfigs(live.id);
      for (const [i, m] of task.history.entries()) {
        this.appendMessage(live.id, m, i === 0 ? itemId : undefined);
      }
      return start ? [this.statusEvent(live)] : [];
    });
  }

  /** Appends conversation items under a task, in one transaction. */
  recordItems(taskId: string, items: readonly Item[]): void {
    const task = this.task(taskId);
    this.atomic(() => {
      for (const item of items) {
        this.history.append(item, taskId);
        if (item.type === "message") {
          this.keep(task, messageFromItem(item, taskId), this.history.lastWrittenChars);
        }
      }
    });
  }

  /**
   * A task message joins the context's conversation history, tagged with its task;
   * `itemId` names its row (a client's message: see `sentItemId`).
   */
  appendMessage(taskId: string, message: Message, itemId?: string): void {
    const task = this.task(taskId);
    const item = itemFromMessage(message, itemId);
    this.atomic(() => {
      this.history.append(item, taskId);
      this.keep(task, message, this.history.lastWrittenChars);
    });
    if (message.role === "user") {
      this.questions.set(task, { messageId: message.messageId, itemId: item.id });
    }
  }

  /**
   * A message joins a task's history in memory, which then keeps only its newest messages
   * within `bounds`: what a fresh `load` would read.
   */
  private keep(task: Task, message: Message, chars: number): void {
    const sizes = this.sizes.get(task) as { each: number[]; total: number };
    const before = sizes.total;
    task.history.push(message);
    sizes.each.push(chars);
    sizes.total += chars;
    const { taskHistory, taskHistoryChars } = this.bounds;
    while (
      task.history.length > 1 &&
      (task.history.length > taskHistory || sizes.total > taskHistoryChars)
    ) {
      task.history.shift();
      sizes.total -= sizes.each.shift() as number;
    }
    this.grew(task, sizes.total - before);
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
    const task = this.task(taskId);
    const steps = planTransition(task.status.state, to, { viaWorking: options.viaWorking });
    if (steps.length === 0) return [];
    return this.atomic(() => {
      const logged: { seq: number; event: TaskEvent }[] = [];
      const statuses: TaskStatus[] = [];
      let previous = task.status.state;
      steps.forEach((next, i) => {
        const timestamp = nowIso();
        const message = i === steps.length - 1 ? (options.message ?? null) : null;
        task.stateHistory.push({ previousState: previous, newState: next, timestamp });
        statuses.push({ state: next, message, timestamp });
        previous = next;
      });
      const last = statuses.at(-1) as TaskStatus;
      if (options.metadata) task.metadata = mergePatch(task.metadata, options.metadata);
      this.setStatus(task, last, options.metadata !== undefined);
      if (last.message) this.appendMessage(taskId, last.message);
      for (const status of statuses) logged.push(this.statusEvent(task, status));
      return logged;
    });
  }

  /** A progress message: the state stays, the status message changes, history grows. */
  statusMessage(taskId: string, message: Message): { seq: number; event: TaskEvent } {
    const task = this.task(taskId);
    const status: TaskStatus = {
      state: task.status.state,
      message,
      timestamp: nowIso(),
    };
    return this.atomic(() => {
      this.setStatus(task, status);
      this.appendMessage(taskId, message);
      return this.statusEvent(task);
    });
  }

  /**
   * A transient progress message: logged and streamed as a status update, but neither the
   * task's status nor its history changes (tool work and reasoning for watching clients).
   */
  announce(taskId: string, message: Message): { seq: number; event: TaskEvent } {
    const task = this.task(taskId);
    const status: TaskStatus = {
      state: task.status.state,
      message,
      timestamp: nowIso(),
    };
    return this.atomic(() => this.statusEvent(task, status));
  }

  /**
   * Adds an artifact, replaces one, or appends parts to one (A2A append/lastChunk).
   * An append writes its parts and its event, nothing else: the task, the artifact and
   * its next part index are known in memory.
   */
  putArtifact(
    taskId: string,
    artifact: Artifact,
    chunk: { append: boolean; lastChunk: boolean },
  ): { seq: number; event: TaskEvent } {
    const task = this.task(taskId);
    const known = task.artifacts.find((a) => a.artifactId === artifact.artifactId);
    if (chunk.append && !known) {
      throw new A2AError(
        "InvalidParams",
        `Cannot append to artifact ${artifact.artifactId}: it does not exist`,
      );
    }
    const bodies = artifact.parts.map((part) => JSON.stringify(part));
    for (const body of bodies) checkRowBytes("artifact part", body);
    const appending = chunk.append && known !== undefined;
    let headerJson = "";
    let inline: string | null = null;
    if (!appending) {
      const { parts: _parts, ...header } = artifact;
      headerJson = JSON.stringify(header);
      checkRowBytes("artifact header", headerJson);
      inline = inlineParts(headerJson, bodies);
    }
    const sizes = this.artifactSizesOf(task);
    // As `artifacts` counts the stored rows: the header, then inline parts or part rows.
    const size =
      (appending ? (sizes.each.get(artifact.artifactId) ?? 0) : 0) +
      headerJson.length +
      (inline?.length ?? bodies.reduce((sum, body) => sum + body.length, 0));
    this.checkArtifactChars(task, sizes, artifact.artifactId, size);
    return this.atomic(() => {
      let start = 0;
      // A new or replaced artifact's parts go in its row when they are small (no part
      // rows); appended parts always get rows of their own, numbered after the others.
      let rows = bodies;
      if (appending) {
        start = known.parts.length;
      } else {
        if (inline !== null) rows = [];
        if (known) {
          this.sql.exec(
            "DELETE FROM artifact_parts WHERE task_id = ?1 AND artifact_id = ?2",
            taskId,
            artifact.artifactId,
          );
          this.sql.exec(
            "UPDATE artifacts SET header = ?3, parts = ?4 WHERE task_id = ?1 AND artifact_id = ?2",
            taskId,
            artifact.artifactId,
            headerJson,
            inline,
          );
        } else {
          this.sql.exec(
            `INSERT INTO artifacts (task_id, artifact_id, seq, header, parts)
             VALUES (?1, ?2, (SELECT COALESCE(MAX(seq), 0) + 1 FROM artifacts WHERE task_id = ?1), ?3, ?4)`,
            taskId,
            artifact.artifactId,
            headerJson,
            inline,
          );
        }
      }
      rows.forEach((body, i) => {
        this.sql.exec(
          "INSERT INTO artifact_parts (task_id, artifact_id, idx, body) VALUES (?, ?, ?, ?)",
          taskId,
          artifact.artifactId,
          start + i,
          body,
        );
      });
      // A replaced artifact is counted anew (an overestimate until the task is read again).
      this.grew(
        task,
        bodies.reduce((sum, body) => sum + body.length, 0),
      );
      sizes.total += size - (sizes.each.get(artifact.artifactId) ?? 0);
      sizes.each.set(artifact.artifactId, size);
      if (chunk.append && known) {
        known.parts.push(...artifact.parts);
      } else {
        const copy = { ...artifact, parts: [...artifact.parts] };
        const at = known ? task.artifacts.indexOf(known) : -1;
        if (at >= 0) task.artifacts[at] = copy;
        else task.artifacts.push(copy);
      }
      return this.log(taskId, {
        kind: "artifact-update",
        taskId,
        contextId: task.contextId,
        artifact,
        append: chunk.append,
        lastChunk: chunk.lastChunk,
      });
    });
  }

  /**
   * A task, or null, with its newest messages within `bounds` (`limits.taskHistory`,
   * `limits.taskHistoryChars`); `historyLength` keeps the newest n of those (§3.2.4). A
   * task this object wrote recently comes from memory; the caller must not change it.
   */
  read(taskId: string, options: ReadOptions = {}): Task | null {
    const task = this.unshaped(taskId, options);
    return task && shaped(task, options);
  }

  /** A task from memory, else from SQLite with what `options` asks for (not yet trimmed). */
  private unshaped(taskId: string, options: ReadOptions): Task | null {
    const cached = this.live.get(taskId);
    if (cached) return cached;
    // A read without artifacts (a ListTasks page, by default) does not read their rows.
    const whole = options.includeArtifacts !== false;
    const task = this.load(taskId, options.historyLength, whole);
    if (task && options.historyLength === undefined && whole) this.remember(task);
    return task;
  }

  /**
   * Tasks of a listing page, in order, each as `read` gives it (missing ones and those
   * `keep` refuses are left out). With `within`, reading stops before the task whose
   * artifacts would take the page past its budget (`ListBudget`); `read` is how many of
   * `taskIds` were looked at, so the page ends after `taskIds[read - 1]`.
   */
  readPage(
    taskIds: string[],
    options: ReadOptions,
    keep: (task: Task) => boolean = () => true,
    within?: ListBudget,
  ): { tasks: Task[]; read: number } {
    const tasks: Task[] = [];
    let chars = 0;
    let read = 0;
    for (const id of taskIds) {
      const task = this.unshaped(id, options);
      if (task && keep(task)) {
        const size =
          options.includeArtifacts === false ? 0 : (this.artifactSizes.get(task)?.total ?? 0);
        if (within && chars + size > within.chars && !(within.atLeastOne && tasks.length === 0))
          break;
        chars += size;
        tasks.push(shaped(task, options));
      }
      read++;
    }
    return { tasks, read };
  }

  /** A copy of a task the caller may keep while the task changes (a run's `ctx.task`). */
  snapshot(taskId: string): Task | null {
    const task = this.read(taskId);
    if (!task) return null;
    return {
      ...task,
      status: { ...task.status },
      history: [...task.history],
      artifacts: task.artifacts.map((a) => ({ ...a, parts: [...a.parts] })),
      stateHistory: [...task.stateHistory],
      metadata: { ...task.metadata },
    };
  }

  private load(taskId: string, historyLength?: number, withArtifacts = true): Task | null {
    const row = this.sql.exec<TaskRow>("SELECT * FROM tasks WHERE id = ?", taskId).toArray()[0];
    if (!row) return null;
    const { taskHistory, taskHistoryChars } = this.bounds;
    const messages = this.history.newestMessagesOf(
      taskId,
      Math.min(historyLength ?? taskHistory, taskHistory),
      taskHistoryChars,
    );
    const stored = withArtifacts
      ? this.artifacts(taskId)
      : { artifacts: [], chars: 0, sizes: { each: new Map<string, number>(), total: 0 } };
    const task: Task = {
      id: row.id,
      contextId: row.context_id,
      status: {
        state: row.state as TaskState,
        message: row.status_message ? (JSON.parse(row.status_message) as Message) : null,
        timestamp: row.status_timestamp,
      },
      history: messages.map((r) => messageFromItem(r.item as MessageItem, taskId)),
      artifacts: stored.artifacts,
      metadata: JSON.parse(row.metadata) as JsonObject,
      stateHistory: JSON.parse(row.state_history) as StateChange[],
      createdAt: row.created_at,
      flowState: {},
    };
    this.rowSeqs.set(task, row.row_seq);
    const each = messages.map((r) => r.chars);
    const total = each.reduce((a, b) => a + b, 0);
    this.sizes.set(task, { each, total });
    this.weights.set(task, total + stored.chars);
    if (withArtifacts) this.artifactSizes.set(task, stored.sizes);
    return task;
  }

  /** The artifact sizes of a task in memory (read from its rows if it has none yet). */
  private artifactSizesOf(task: Task): ArtifactSizes {
    let sizes = this.artifactSizes.get(task);
    if (!sizes) {
      sizes = this.artifacts(task.id).sizes;
      this.artifactSizes.set(task, sizes);
    }
    return sizes;
  }

  /**
   * Refuses an artifact write that would take the task's artifacts past
   * `limits.taskArtifactChars`: `size` is what artifact `artifactId` would hold after it.
   */
  private checkArtifactChars(
    task: Task,
    sizes: ArtifactSizes,
    artifactId: string,
    size: number,
  ): void {
    const total = sizes.total - (sizes.each.get(artifactId) ?? 0) + size;
    const limit = this.bounds.taskArtifactChars;
    if (total <= limit) return;
    throw new A2AError(
      "InvalidAgentResponse",
      `Task ${task.id}'s artifacts would hold ${total} characters, over the ${limit} a task may hold (limits.taskArtifactChars); what was written before stays`,
      { taskId: task.id, artifactId, chars: String(total), limit: String(limit) },
    );
  }

  /** A task's artifacts, with the characters of stored JSON they take. */
  private artifacts(taskId: string): {
    artifacts: Artifact[];
    chars: number;
    sizes: ArtifactSizes;
  } {
    const parts = new Map<string, Part[]>();
    const each = new Map<string, number>();
    let chars = 0;
    for (const r of this.sql.exec<{ artifact_id: string; body: string }>(
      "SELECT artifact_id, body FROM artifact_parts WHERE task_id = ? ORDER BY artifact_id, idx",
      taskId,
    )) {
      const list = parts.get(r.artifact_id) ?? [];
      list.push(JSON.parse(r.body) as Part);
      parts.set(r.artifact_id, list);
      chars += r.body.length;
      each.set(r.artifact_id, (each.get(r.artifact_id) ?? 0) + r.body.length);
    }
    const artifacts = this.sql
      .exec<{ artifact_id: string; header: string; parts: string | null }>(
        "SELECT artifact_id, header, parts FROM artifacts WHERE task_id = ? ORDER BY seq",
        taskId,
      )
      .toArray()
      // Rows this store wrote itself: rebuilt, not re-validated (hot path of every read).
      // The inline parts come first: appended part rows are numbered after them.
      .map((r) => {
        const appended = parts.get(r.artifact_id) ?? [];
        const own = r.header.length + (r.parts?.length ?? 0);
        chars += own;
        each.set(r.artifact_id, (each.get(r.artifact_id) ?? 0) + own);
        return {
          ...(JSON.parse(r.header) as Omit<Artifact, "parts">),
          parts: r.parts === null ? appended : [...(JSON.parse(r.parts) as Part[]), ...appended],
        };
      });
    return { artifacts, chars, sizes: { each, total: chars } };
  }

  /**
   * The newest user message of a task (what a resumed run starts from), looked for among
   * its newest rows like `questionItemId`; null past them.
   */
  lastUserMessage(taskId: string): Message | null {
    for (const row of this.history.newestUserMessagesOf(taskId, 8, QUESTION_SEEK_ROWS)) {
      if (isUserMessage(row.item)) return messageFromItem(row.item, taskId);
    }
    return null;
  }

  /**
   * The history item of the user message a run answers (`messageId`, else the task's
   * newest user message), looked for among the task's newest rows; null when it is not
   * there (compacted away, or further back than a window would reach).
   */
  questionItemId(taskId: string, messageId: string): string | null {
    const live = this.live.get(taskId);
    const known = live && this.questions.get(live);
    if (known?.messageId === messageId) return known.itemId;
    const asked = this.history
      .newestUserMessagesOf(taskId, 8, QUESTION_SEEK_ROWS)
      .flatMap((row) => (isUserMessage(row.item) ? [row.item] : []));
    const exact = asked.find(
      (item) => (item.extra?.a2a as { messageId?: unknown } | undefined)?.messageId === messageId,
    );
    return (exact ?? asked[0])?.id ?? null;
  }

  /**
   * Forgets the tasks held in memory, after the conversation history was rewritten
   * underneath them (compaction); they are read again when next needed.
   */
  forgetTasks(): void {
    this.live.clear();
    this.liveChars = 0;
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
    const clock = this.listClock();
    // The page's snapshot is read from `list_clock`: bring it up to the clock first.
    const stored =
      clock > this.storedClock
        ? this.sql
            .exec<{ seq: number }>(
              "UPDATE list_clock SET seq = MAX(seq, ?) WHERE id = 1 RETURNING seq",
              clock,
            )
            .one().seq
        : this.sql.exec<{ seq: number }>("SELECT seq FROM list_clock WHERE id = 1").one().seq;
    this.storedClock = stored;
    this.clock = Math.max(clock, stored);
    // A token from this page may hold this snapshot: the rows in it now record their moves.
    this.issued = this.clock;
    return queryPage(
      this.sql,
      { table: "tasks", id: "id", columns: "state", keep: CONTEXT_LISTING_KEEP },
      q,
    );
  }

  /** Events of a task logged after `afterSeq`, oldest first, at most `limit`. */
  eventsAfter(taskId: string, afterSeq: number, limit = -1): { seq: number; event: TaskEvent }[] {
    return this.sql
      .exec<{ seq: number; body: string }>(
        `SELECT seq, body FROM events WHERE task_id = ? AND seq > ? ORDER BY seq LIMIT ${sqlLimit(limit)}`,
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

  /**
   * Index rows waiting to reach the tenant index (read from SQLite once, then kept: the
   * scan has no index of its own, see schema v12).
   */
  outbox(): IndexEntry[] {
    if (this.pending === null) {
      this.pending = new Map();
      for (const r of this.sql.exec<{
        id: string;
        state: string;
        created_at: string;
        updated_at: string;
      }>("SELECT id, state, created_at, updated_at FROM tasks WHERE index_pending = 1")) {
        this.pending.set(r.id, {
          taskId: r.id,
          state: r.state,
          createdAt: r.created_at,
          updatedAt: r.updated_at,
        });
      }
    }
    return [...this.pending.values()];
  }

  /** Whether a row of this task waits to reach the tenant index. */
  indexPending(taskId: string): boolean {
    if (this.pending === null) this.outbox();
    return this.pending?.has(taskId) ?? false;
  }

  /** Marks every task for the index again (its rows must reach another shard). */
  resendAll(): void {
    this.atomic(() => this.sql.exec("UPDATE tasks SET index_pending = 1"));
    this.pending = null;
  }

  /**
   * Drops acknowledged rows, unless they changed again meanwhile. The mark in SQLite is
   * written with the next transaction; until then a restart sends them again, which the
   * index ignores (an older or equal update never overwrites a newer one).
   */
  acknowledge(rows: readonly IndexEntry[]): void {
    for (const r of rows) {
      const now = this.pending?.get(r.taskId);
      if (now && now.updatedAt === r.updatedAt && now.state === r.state) {
        this.pending?.delete(r.taskId);
        this.acked.push(r.taskId);
      }
    }
  }

  /**
   * When retention (`prune`) next has work: now when more than `keep` tasks are finished,
   * else when the oldest finished task passes `maxAgeMs`; null with none finished.
   */
  retentionDue(keep: number, maxAgeMs: number): number | null {
    this.finished ??= this.sql
      .exec<{ count: number; oldest: string | null }>(
        `SELECT COUNT(*) AS count, MIN(updated_at) AS oldest FROM tasks WHERE ${FINISHED}`,
      )
      .one();
    if (this.finished.count > keep) return Date.now();
    return this.finished.oldest === null ? null : Date.parse(this.finished.oldest) + maxAgeMs;
  }

  /** A task just became finished: retention's figures, when held, follow. */
  private noteFinished(at: string): void {
    if (!this.finished) return;
    this.finished.count += 1;
    this.finished.oldest ??= at;
  }

  /**
   * Retention: deletes up to `batch` finished tasks beyond the newest `keep` or last
   * updated before `olderThan`, with their artifacts, events and webhook rows, in one
   * transaction, and queues their removal from the tenant index. The conversation
   * history is left alone. Returns how many went.
   */
  prune(keep: number, olderThan: string, batch = 100): number {
    const ids = new Set<string>();
    for (const r of this.sql.exec<{ id: string }>(
      `SELECT id FROM tasks WHERE ${FINISHED} AND updated_at < ? ORDER BY updated_at LIMIT ${sqlLimit(batch)}`,
      olderThan,
    )) {
      ids.add(r.id);
    }
    for (const r of this.sql.exec<{ id: string }>(
      `SELECT id FROM tasks WHERE ${FINISHED} ORDER BY updated_at DESC, id DESC LIMIT ${sqlLimit(batch)} OFFSET ${sqlLimit(keep)}`,
    )) {
      ids.add(r.id);
    }
    if (ids.size === 0) return 0;
    const list = [...ids];
    this.noRemovals = false;
    this.finished = null;
    this.atomic(() => {
      // Deleted rows take their row_seq and event seqs along: keep both counters in SQLite
      // from going back.
      this.saveClock();
      this.saveEventSeq();
      for (let i = 0; i < list.length; i += 90) {
        const chunk = list.slice(i, i + 90);
        const marks = chunk.map(() => "?").join(", ");
        for (const table of ["artifacts", "artifact_parts", "events"]) {
          this.sql.exec(`DELETE FROM ${table} WHERE task_id IN (${marks})`, ...chunk);
        }
        if (this.push) {
          this.sql.exec(`DELETE FROM push_deliveries WHERE task_id IN (${marks})`, ...chunk);
          this.sql.exec(`DELETE FROM push_configs WHERE task_id IN (${marks})`, ...chunk);
        }
        this.sql.exec(`DELETE FROM tasks WHERE id IN (${marks})`, ...chunk);
        for (const id of chunk) {
          this.sql.exec("INSERT OR IGNORE INTO index_removals (task_id) VALUES (?)", id);
          this.evict(id);
          this.pending?.delete(id);
        }
      }
    });
    this.onIndexPending();
    return list.length;
  }

  /** True once SQLite showed no removal pending, until the next prune. */
  private noRemovals = false;

  /** Pruned tasks the tenant index has not forgotten yet (no statement when none). */
  removals(): string[] {
    if (this.noRemovals) return [];
    const ids = this.sql
      .exec<{ task_id: string }>("SELECT task_id FROM index_removals LIMIT 500")
      .toArray()
      .map((r) => r.task_id);
    if (ids.length === 0) this.noRemovals = true;
    return ids;
  }

  /** The index forgot these tasks. */
  removed(taskIds: readonly string[]): void {
    this.atomic(() => {
      for (const id of taskIds) this.sql.exec("DELETE FROM index_removals WHERE task_id = ?", id);
    });
    this.noRemovals = false;
  }

  /** Writes the pending acknowledgements now (the alarm's flush, when nothing else writes). */
  commitAcknowledgements(): void {
    if (this.acked.length) this.atomic(() => {});
  }

  private writeAcks(): void {
    // Bound parameters per statement are limited; 90 ids at a time stay well under.
    for (let i = 0; i < this.acked.length; i += 90) {
      const ids = this.acked.slice(i, i + 90);
      this.sql.exec(
        `UPDATE tasks SET index_pending = 0 WHERE id IN (${ids.map(() => "?").join(", ")})`,
        ...ids,
      );
    }
  }

  /** The live task, read from SQLite if it is not in memory. */
  private task(taskId: string): Task {
    const cached = this.live.get(taskId);
    if (cached) {
      this.live.delete(taskId);
      this.live.set(taskId, cached);
      return cached;
    }
    const task = this.load(taskId);
    if (!task) throw new A2AError("TaskNotFound", `Task ${taskId} not found`, { taskId });
    this.remember(task);
    return task;
  }

  private remember(task: Task): void {
    const held = this.live.get(task.id);
    if (held !== task) {
      this.evict(task.id);
      this.liveChars += this.weights.get(task) ?? 0;
    }
    this.live.delete(task.id);
    this.live.set(task.id, task);
    this.trim();
  }

  /** A task in memory holds `chars` more (or fewer) characters. */
  private grew(task: Task, chars: number): void {
    this.weights.set(task, (this.weights.get(task) ?? 0) + chars);
    if (this.live.get(task.id) !== task) return;
    this.liveChars += chars;
    this.trim();
  }

  /**
   * Drops the least recently used tasks past LIVE_TASKS or `limits.liveTaskChars`; the
   * newest (the one being written) stays, whatever its size, so that a long stream into
   * one task is not read back at every chunk.
   */
  private trim(): void {
    while (
      this.live.size > 1 &&
      (this.live.size > LIVE_TASKS || this.liveChars > this.bounds.liveTaskChars)
    ) {
      this.evict(this.live.keys().next().value as string);
    }
  }

  private evict(taskId: string): void {
    const task = this.live.get(taskId);
    if (!task) return;
    this.live.delete(taskId);
    this.liveChars -= this.weights.get(task) ?? 0;
  }

  /**
   * Writes a task's new status. Only what changed is bound (each bound value costs the
   * statement a fixed amount of work): metadata only when `metadataChanged`, no status
   * message when there is none.
   */
  private setStatus(task: Task, status: TaskStatus, metadataChanged = false): void {
    const message = status.message ? JSON.stringify(status.message) : null;
    const metadata = JSON.stringify(task.metadata);
    const stateHistory = JSON.stringify(task.stateHistory);
    // The whole row must fit, unchanged columns included.
    checkRowBytes("task status", message, metadata, stateHistory);
    // `updated_at` is the status timestamp: when it changes the task moves in the listing.
    let rowSeq = this.rowSeq(task);
    if (status.timestamp !== task.status.timestamp) {
      const previous = rowSeq;
      rowSeq = this.tick();
      if (previous <= this.issued) this.recordMove(task, previous, rowSeq);
    }
    const args: SqlStorageValue[] = [task.id, status.state, status.timestamp, stateHistory, rowSeq];
    let set = "status_message = NULL";
    if (message !== null) {
      args.push(message);
      set = `status_message = ?${args.length}`;
    }
    if (metadataChanged) {
      args.push(metadata);
      set += `, metadata = ?${args.length}`;
    }
    this.sql.exec(
      `UPDATE tasks SET state = ?2, status_timestamp = ?3, updated_at = ?3, state_history = ?4,
       row_seq = ?5, index_pending = 1, ${set} WHERE id = ?1`,
      ...args,
    );
    this.rowSeqs.set(task, rowSeq);
    if (isTerminal(status.state) && !isTerminal(task.status.state)) {
      this.noteFinished(status.timestamp);
    }
    task.status = status;
    this.touchIndex(task);
  }

  /** The listing clock, read from SQLite once (see `clock`). */
  private listClock(): number {
    if (this.clock === null) {
      const row = this.sql
        .exec<{ stored: number; rows: number | null; moves: number | null }>(
          `SELECT (SELECT seq FROM list_clock WHERE id = 1) AS stored,
             (SELECT MAX(row_seq) FROM tasks) AS rows, (SELECT MAX(seq) FROM list_moves) AS moves`,
        )
        .one();
      this.storedClock = row.stored;
      this.clock = Math.max(row.stored, row.rows ?? 0, row.moves ?? 0);
      // Tokens handed out before this load are not known: any of them may hold the clock.
      this.issued = this.clock;
    }
    return this.clock;
  }

  /** The next value of the listing clock (written to SQLite with the row it marks). */
  private tick(): number {
    this.clock = this.listClock() + 1;
    return this.clock;
  }

  private saveClock(): void {
    const clock = this.listClock();
    if (clock <= this.storedClock) return;
    this.sql.exec("UPDATE list_clock SET seq = MAX(seq, ?) WHERE id = 1", clock);
    this.storedClock = clock;
  }

  /** A task's `row_seq` (kept with the task in memory; read if it is not). */
  private rowSeq(task: Task): number {
    const known = this.rowSeqs.get(task);
    if (known !== undefined) return known;
    const row = this.sql
      .exec<{ row_seq: number }>("SELECT row_seq FROM tasks WHERE id = ?", task.id)
      .toArray()[0];
    return row?.row_seq ?? 0;
  }

  /**
   * The place a task had in the snapshots that include it, for later pages of those
   * listings; the newest CONTEXT_LISTING_KEEP moves are kept (an older token expired).
   */
  private recordMove(task: Task, previous: number, seq: number): void {
    this.sql.exec(
      "INSERT INTO list_moves (seq, prev_seq, task_id, old_updated_at) VALUES (?, ?, ?, ?)",
      seq,
      previous,
      task.id,
      task.status.timestamp,
    );
    this.sql.exec("DELETE FROM list_moves WHERE seq <= ?", seq - CONTEXT_LISTING_KEEP);
  }

  /** Merges keys into a task's metadata (JSON merge patch; null removes a key). */
  mergeMetadata(taskId: string, patch: JsonObject): void {
    const task = this.task(taskId);
    const merged = mergePatch(task.metadata, patch);
    const json = JSON.stringify(merged);
    checkRowBytes("task metadata", json);
    this.atomic(() => {
      this.sql.exec("UPDATE tasks SET metadata = ? WHERE id = ?", json, taskId);
      task.metadata = merged;
    });
  }

  private statusEvent(task: Task, status = task.status): { seq: number; event: TaskEvent } {
    const final = isTerminal(status.state) || isInterrupted(status.state);
    return this.log(task.id, {
      kind: "status-update",
      taskId: task.id,
      contextId: task.contextId,
      status,
      final,
    });
  }

  /** Logs an event; its row is written as the transaction ends (see `writeEvents`). */
  private log(taskId: string, event: TaskEvent): { seq: number; event: TaskEvent } {
    const body = JSON.stringify(event);
    checkRowBytes("event", body);
    const seq = this.nextEventSeq();
    if (this.unwritten.length === 0) this.firstUnwritten = seq;
    this.unwritten.push({ taskId, body });
    this.lastEvent = seq;
    if (this.depth === 0) this.writeEvents();
    // Same transaction as the event: a delivery can never be lost or exist without it.
    if (this.push && this.push.enqueueEvent(taskId, seq, event, Date.now()) > 0) {
      this.pushQueued = true;
    }
    return { seq, event };
  }

  /**
   * Writes the transaction's events in one statement (per 30): consecutive seqs counted
   * from the first, each task id bound once.
   */
  private writeEvents(): void {
    const rows = this.unwritten;
    if (rows.length === 0) return;
    this.unwritten = [];
    for (let i = 0; i < rows.length; i += 30) {
      const chunk = rows.slice(i, i + 30);
      const values: string[] = [];
      const args: SqlStorageValue[] = [this.firstUnwritten + i];
      const taskParams = new Map<string, number>();
      chunk.forEach((row, k) => {
        let task = taskParams.get(row.taskId);
        if (task === undefined) {
          args.push(row.taskId);
          task = args.length;
          taskParams.set(row.taskId, task);
        }
        args.push(row.body);
        values.push(`(${k === 0 ? "?1" : `?1 + ${k}`}, ?${task}, ?${args.length})`);
      });
      this.sql.exec(`INSERT INTO events (seq, task_id, body) VALUES ${values.join(", ")}`, ...args);
    }
  }

  /**
   * The seq the next event takes: past every seq ever used (a client may still hold an
   * old one as its Last-Event-ID): past the newest row and the high-water mark pruning
   * left in `meta`.
   */
  private nextEventSeq(): number {
    this.lastEvent ??= this.sql
      .exec<{ seq: number }>(
        `SELECT MAX(COALESCE((SELECT CAST(value AS INTEGER) FROM meta WHERE key = ?), 0),
           COALESCE((SELECT MAX(seq) FROM events), 0)) AS seq`,
        EVENTS_SEQ_KEY,
      )
      .one().seq;
    return this.lastEvent + 1;
  }

  /** Keeps the newest seq in `meta` before events are deleted (see `nextEventSeq`). */
  private saveEventSeq(): void {
    const seq = this.nextEventSeq() - 1;
    this.sql.exec(
      `INSERT INTO meta (key, value) VALUES (?, ?)
       ON CONFLICT (key) DO UPDATE SET value = excluded.value
       WHERE CAST(excluded.value AS INTEGER) > CAST(meta.value AS INTEGER)`,
      EVENTS_SEQ_KEY,
      String(seq),
    );
  }

  /** One logged event by its sequence number. */
  event(seq: number): TaskEvent | null {
    const row = this.sql
      .exec<{ body: string }>("SELECT body FROM events WHERE seq = ?", seq)
      .toArray()[0];
    return row ? (JSON.parse(row.body) as TaskEvent) : null;
  }

  /** The row is marked in SQLite by the write itself; memory keeps what to send. */
  private touchIndex(task: Task): void {
    if (this.pending === null) this.outbox();
    this.pending?.set(task.id, {
      taskId: task.id,
      state: task.status.state,
      createdAt: task.createdAt,
      updatedAt: task.status.timestamp,
    });
    this.onIndexPending();
  }
}

/** Inline parts take at most this many characters of JSON (the row keeps its header too). */
export const INLINE_PARTS_CHARS = 64 * 1024;

/**
 * The JSON array of an artifact's parts to keep in its own row, or null when they go in
 * part rows (too big together, or no parts).
 */
function inlineParts(header: string, bodies: readonly string[]): string | null {
  if (bodies.length === 0) return null;
  let length = header.length + bodies.length + 1;
  for (const body of bodies) length += body.length;
  return length <= INLINE_PARTS_CHARS ? `[${bodies.join(",")}]` : null;
}

/** A task as a read with these options sees it (history trimmed, artifacts left out). */
function shaped(task: Task, options: ReadOptions): Task {
  const { historyLength, includeArtifacts = true } = options;
  if (historyLength === undefined && includeArtifacts) return task;
  return {
    ...task,
    history:
      historyLength === undefined
        ? task.history
        : historyLength <= 0
          ? []
          : task.history.slice(-historyLength),
    artifacts: includeArtifacts ? task.artifacts : [],
  };
}
