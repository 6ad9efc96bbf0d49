/**
 * The task cache: a conversation's recently written tasks held in memory as a read
 * returns them (within `limits.liveTaskChars` and LIVE_TASKS), every other task read
 * back from its rows. The task store writes through it.
 */
import { DEFAULT_LIMITS, type Limits } from "../../agent/limits";
import { type Item, isUserMessage, type MessageItem } from "../../history/items";
import { A2AError } from "../../protocol/errors";
import type { JsonObject } from "../../protocol/json";
import type { Message } from "../../protocol/message";
import type { StateChange, Task } from "../../protocol/task";
import type { TaskState } from "../../protocol/task-state";
import { taskRow } from "../../storage/task-keys";
import type { HistoryStore } from "../history/history-store";
import { type ArtifactSizes, readArtifacts } from "./artifact-rows";
import { messageFromItem } from "./conversation-bridge";
import type { ListingClock } from "./listing-clock";

/** What memory keeps beside a task it holds (see `TaskCache.counts`). */
interface TaskCounts {
  /**
   * The characters of stored JSON of each message the task carries, oldest first, and
   * their sum: its history is held to `bounds` as messages join it, as `load` reads it.
   */
  messages: { each: number[]; total: number };
  /**
   * Characters of stored JSON the task holds (its history and artifacts, as written);
   * their sum over `live` is what `limits.liveTaskChars` bounds.
   */
  weight: number;
  /**
   * The characters of stored JSON of each artifact (header and parts), which
   * `limits.taskArtifactChars` bounds together; null until read.
   */
  artifacts: ArtifactSizes | null;
  /** The history item of the newest user message appended to the task in memory. */
  question: { messageId: string; itemId: string } | null;
}

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
  first_artifact: string | null;
  first_artifact_parts: string | null;
  [key: string]: SqlStorageValue;
}

/** The limits the task cache applies itself. */
export type StoreBound = "taskHistory" | "taskHistoryChars" | "liveTaskChars" | "taskArtifactChars";

/**
 * How many characters of artifacts a listing page may carry: a page stops before the task
 * that would take it past `chars`, except that with `atLeastOne` its first task is
 * always there (a page always moves the listing on).
 */
export interface ListBudget {
  chars: number;
  atLeastOne: boolean;
}

/** Options for reading a task back. */
export interface ReadOptions {
  historyLength?: number;
  includeArtifacts?: boolean;
}

/**
 * Tasks kept in memory (the recently written ones, each with the history a read carries);
 * older ones are read back.
 */
export const LIVE_TASKS = 32;

/**
 * A task's newest rows searched for the question a run answers: past them, a window
 * (which seeks at most KEEP_SEEK_ROWS past its budget) would not reach it anyway.
 */
const QUESTION_SEEK_ROWS = 4096;

export class TaskCache {
  constructor(
    private readonly storage: Pick<DurableObjectStorage, "sql">,
    private readonly history: HistoryStore<Item>,
    private readonly listing: ListingClock,
    /** How much of a task's history a read carries, and what memory keeps (defaults). */
    bounds: Partial<Pick<Limits, StoreBound>> = {},
  ) {
    this.bounds = { ...DEFAULT_LIMITS, ...bounds };
  }

  readonly bounds: Pick<Limits, StoreBound>;

  /** Recently written tasks, least recently used first. */
  private readonly live = new Map<string, Task>();
  /**
   * What memory keeps beside each task it holds, in one record per task: a WeakMap entry
   * costs the garbage collector more than a field does, and every new task makes one.
   */
  private readonly counts = new WeakMap<Task, TaskCounts>();
  private liveChars = 0;

  private get sql(): SqlStorage {
    return this.storage.sql;
  }

  /** The task in memory, or undefined (no read, no change of its recency). */
  peek(taskId: string): Task | undefined {
    return this.live.get(taskId);
  }

  /** The live task, read from SQLite if it is not in memory. */
  use(taskId: string): Task {
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

  /** A task just created (empty history and artifacts) starts its counts at zero. */
  created(task: Task): void {
    this.counts.set(task, {
      messages: { each: [], total: 0 },
      weight: 0,
      artifacts: { each: new Map(), total: 0, inTask: null },
      question: null,
    });
  }

  /**
   * A task, or null, with its newest messages within `bounds` (`limits.taskHistory`,
   * `limits.taskHistoryChars`); `historyLength` keeps the newest n of those (§3.2.4). A
   * task written recently comes from memory; the caller must not change it.
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
          options.includeArtifacts === false ? 0 : (this.counts.get(task)?.artifacts?.total ?? 0);
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
    const row = this.sql
      .exec<TaskRow>(`SELECT * FROM tasks WHERE ${taskRow()}`, taskId)
      .toArray()[0];
    if (!row) return null;
    const { taskHistory, taskHistoryChars } = this.bounds;
    const messages = this.history.newestMessagesOf(
      taskId,
      Math.min(historyLength ?? taskHistory, taskHistory),
      taskHistoryChars,
    );
    const stored = withArtifacts
      ? readArtifacts(this.sql, taskId, row)
      : {
          artifacts: [],
          chars: 0,
          sizes: { each: new Map<string, number>(), total: 0, inTask: null },
        };
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
    this.listing.setRowSeq(task, row.row_seq);
    const each = messages.map((r) => r.chars);
    const total = each.reduce((a, b) => a + b, 0);
    this.counts.set(task, {
      messages: { each, total },
      weight: total + stored.chars,
      artifacts: withArtifacts ? stored.sizes : null,
      question: null,
    });
    return task;
  }

  /** The artifact sizes of a task in memory (read from its rows if it has none yet). */
  artifactSizesOf(task: Task): ArtifactSizes {
    const counts = this.countsOf(task);
    counts.artifacts ??= readArtifacts(this.sql, task.id).sizes;
    return counts.artifacts;
  }

  /** A task's record (a task not made by `created` or `load` starts one, empty). */
  private countsOf(task: Task): TaskCounts {
    let counts = this.counts.get(task);
    if (!counts) {
      counts = { messages: { each: [], total: 0 }, weight: 0, artifacts: null, question: null };
      this.counts.set(task, counts);
    }
    return counts;
  }

  /**
   * Refuses an artifact write that would take the task's artifacts past
   * `limits.taskArtifactChars`: `size` is what artifact `artifactId` would hold after it.
   */
  checkArtifactChars(task: Task, sizes: ArtifactSizes, artifactId: string, size: number): void {
    const total = sizes.total - (sizes.each.get(artifactId) ?? 0) + size;
    const limit = this.bounds.taskArtifactChars;
    if (total <= limit) return;
    throw new A2AError(
      "InvalidAgentResponse",
      `Task ${task.id}'s artifacts would hold ${total} characters, over the ${limit} a task may hold (limits.taskArtifactChars); what was written before stays`,
      { taskId: task.id, artifactId, chars: String(total), limit: String(limit) },
    );
  }

  /**
   * A message joins a task's history in memory, which then keeps only its newest messages
   * within `bounds`: what a fresh `load` would read.
   */
  keep(task: Task, message: Message, chars: number): void {
    const sizes = (this.counts.get(task) as TaskCounts).messages;
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

  /** A user message joined a task in memory under history item `itemId`. */
  asked(task: Task, messageId: string, itemId: string): void {
    this.countsOf(task).question = { messageId, itemId };
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
    const known = live && this.counts.get(live)?.question;
    if (known?.messageId === messageId) return known.itemId;
    const asked = this.history
      .newestUserMessagesOf(taskId, 8, QUESTION_SEEK_ROWS)
      .flatMap((row) => (isUserMessage(row.item) ? [row.item] : []));
    const exact = asked.find(
      (item) => (item.extra?.a2a as { messageId?: unknown } | undefined)?.messageId === messageId,
    );
    return (exact ?? asked[0])?.id ?? null;
  }

  /** Forgets every task held in memory; they are read again when next needed. */
  clear(): void {
    this.live.clear();
    this.liveChars = 0;
  }

  remember(task: Task): void {
    const held = this.live.get(task.id);
    if (held !== task) {
      this.evict(task.id);
      this.liveChars += this.counts.get(task)?.weight ?? 0;
    }
    this.live.delete(task.id);
    this.live.set(task.id, task);
    this.trim();
  }

  /** A task in memory holds `chars` more (or fewer) characters. */
  grew(task: Task, chars: number): void {
    this.countsOf(task).weight += chars;
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

  evict(taskId: string): void {
    const task = this.live.get(taskId);
    if (!task) return;
    this.live.delete(taskId);
    this.liveChars -= this.counts.get(task)?.weight ?? 0;
  }
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
