import { DurableObject } from "cloudflare:workers";
import { runDefaultExecution } from "../agent/default-execution";
import type { Agent } from "../agent/definition";
import type { MemoryTurnScope } from "../agent/memory-source";
import { runModelAgent } from "../agent/model-execution";
import { replyMessage } from "../agent/reply";
import { CompactionRequest, type CompactionResult } from "../history/compaction";
import { Conversation } from "../history/conversation";
import { diffItems } from "../history/diff";
import type { Item } from "../history/items";
import { A2AError, errorReference, invalidParams, UserFacingError } from "../models/errors";
import type { LoggedEvent } from "../models/events";
import { type JsonObject, newId, nowIso } from "../models/json";
import type { Message } from "../models/message";
import { Parts } from "../models/part";
import { renderReplyResult, renderSendResult } from "../models/render";
import type { ListTasksParams, ProtocolVersion, SendParams } from "../models/requests";
import { replyStream, type StreamFormat } from "../models/stream";
import { submittedTask, type Task } from "../models/task";
import { isTerminal, type TaskState } from "../models/task-state";
import { type PushConfig, type PushConfigInput, resolvePushConfig } from "../push/config";
import { ChildStore, cancelChildren } from "./children";
import { EventHub } from "./event-hub";
import { type HistoryPage, HistoryStore } from "./history-store";
import { newTaskId } from "./ids";
import type { IndexRpc } from "./index-object";
import { IndexOutbox } from "./index-outbox";
import { indexShardFor } from "./index-shards";
import { PushDispatcher } from "./push-dispatcher";
import { type DeliveryRow, MAX_SNAPSHOT_CHARS, PushStore } from "./push-store";
import { attempt, type Result } from "./result";
import { findSent, type Sent, sentItemId } from "./retries";
import {
  CONTEXT_FRESH,
  CONTEXT_MIGRATIONS,
  hasSchema,
  migrate,
  type StorageReport,
  storageReport,
} from "./schema";
import { TaskRun } from "./task-run";
import { type ListBudget, type ReadOptions, TaskStore } from "./task-store";
import { openTaskStream, type Snapshot, type StreamStart } from "./task-stream";

export type { Result } from "./result";

/** A webhook registered inside SendMessage, already checked by the server. */
export interface InlinePush {
  config: PushConfigInput;
  /** The agent's origin: the `iss` of delivery signatures. */
  issuer: string;
}

/** Which tenant and conversation an object holds; sent with every call. */
export interface Scope {
  tenant: string;
  contextId: string;
  /** The principal owning the conversation ("" when the agent has no auth). */
  owner?: string;
  /** The id a new task gets: signed by the Worker, which holds the id key. */
  newTaskId?: string;
}

export interface TaskPage {
  tasks: Task[];
  totalSize: number;
  nextPageToken: string;
}

/**
 * The object's RPC surface as the Worker calls it. (The generated stub types recurse
 * too deeply over JSON values for the compiler, so stubs are typed with this.)
 */
export type ContextRpc = Pick<
  ContextObject,
  | "sendMessage"
  | "streamMessage"
  | "getTask"
  | "getTasks"
  | "listTasks"
  | "cancelTask"
  | "subscribe"
  | "getHistory"
  | "compactHistory"
  | "createPushConfig"
  | "getPushConfig"
  | "listPushConfigs"
  | "deletePushConfig"
  | "deadDeliveries"
  | "redeliver"
>;

/**
 * What the object's one alarm is asked for by; `found` is an alarm an earlier run of the
 * object set, for reasons this run does not know, kept when an earlier one replaces it.
 */
type WakeReason = "index" | "push" | "prune" | "found";

/** A message's lookup (`findSent`), made when `admitted` was `at`. */
interface Checked {
  sent: Sent;
  at: number;
}

/** How long after a task finishes the alarm prunes at the soonest (one alarm serves many). */
const PRUNE_DELAY_MS = 60_000;
/** Between batches when more is to prune. */
const PRUNE_AGAIN_MS = 1_000;

const endsTask = ({ event }: LoggedEvent): boolean =>
  event.kind === "status-update" && isTerminal(event.status.state);

/** Reason recorded on a task whose run was cut off by an object restart. */
export const RESTART_REASON =
  "The agent restarted while this task was running, and the run could not be resumed";

/**
 * What a failed task tells its clients: the message of a UserFacingError or protocol
 * error; for anything else a reference id, with the details logged under it.
 */
function publicReason(error: unknown): string {
  if (error instanceof UserFacingError || error instanceof A2AError) {
    return error.message || "The agent's handler failed";
  }
  const reference = errorReference();
  console.error(`edgelink: handler error ${reference}`, error);
  return `The agent failed (reference ${reference})`;
}

const taskNotFound = (taskId: string) =>
  new A2AError("TaskNotFound", `Task ${taskId} not found`, { taskId });

/**
 * One conversation (A2A context) of one tenant: its tasks, their messages, artifacts,
 * state history and event log as SQLite rows, and the runs of its agent's handler.
 * Conversations never share an object, so a busy one never slows another.
 */
export abstract class ContextObject<Env = unknown> extends DurableObject<Env> {
  /** The agent this object runs; supplied by the subclass `defineAgent` builds. */
  protected abstract get agent(): Agent<Env>;

  private readonly store: TaskStore;
  private readonly hub = new EventHub();
  private readonly runs = new Map<string, AbortController>();
  private readonly outbox: IndexOutbox;
  private readonly pushStore: PushStore | null;
  /** Delegations of this context's tasks to other agents. */
  private readonly children: ChildStore;
  private readonly dispatcher: PushDispatcher | null;
  private claimed = false;
  /** True until the first write: the object holds nothing and has no schema. */
  private vacant: boolean;
  /** The tenant, conversation and owner this object holds, once read (they never change). */
  private identity: { tenant: string; contextId: string; owner: string } | null = null;
  /** Set when this instance made the object's schema: a new conversation (see `claim`). */
  private created = false;
  /** The index shard count this conversation's rows went to, once read (see `reshard`). */
  private sentShards: number | null = null;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    // The subclass supplies `agent` as a prototype getter, so it is readable here.
    const agent = (this as unknown as { agent: Agent<Env> }).agent;
    this.pushStore = agent.push
      ? new PushStore(ctx.storage.sql, { artifactChunks: agent.push.artifactChunks })
      : null;
    this.store = new TaskStore(
      ctx.storage,
      new HistoryStore<Item>(ctx.storage, agent.maxHistoryItemBytes),
      this.pushStore,
      agent.limits,
    );
    this.outbox = new IndexOutbox(
      this.store,
      {
        target: () => this.indexTarget(),
        keepAlive: (work) => ctx.waitUntil(work),
        wakeAt: (at) => this.wakeAt(at, "index"),
        settled: () =>
          this.settle("index").catch((error) =>
            console.error("edgelink: could not move the alarm", error),
          ),
      },
      () => this.agent.limits.indexFlushMs,
    );
    this.store.onIndexPending = () => this.outbox.schedule();
    this.dispatcher = this.pushStore
      ? new PushDispatcher(
          this.pushStore,
          this.store,
          agent as Agent<unknown>,
          env,
          () => this.meta("push_issuer") ?? agent.card.url ?? "edgelink",
          (taskId) => this.read(taskId),
        )
      : null;
    // A read never creates storage: an object never written gets its schema on the first
    // write (admit), and until then every read answers "nothing here".
    this.vacant = !hasSchema(ctx.storage);
    if (!this.vacant) migrate(ctx.storage, CONTEXT_MIGRATIONS, CONTEXT_FRESH);
    this.children = new ChildStore(ctx.storage.sql);
    void ctx.blockConcurrencyWhile(() => this.recover());
  }

  // ---- RPC ---------------------------------------------------------------------------

  /** The Worker's start-up check: is this object's storage what Edgelink needs? Writes nothing. */
  storageReport(): StorageReport {
    return storageReport(this.ctx.storage);
  }

  /**
   * SendMessage: blocking waits for a terminal or interrupted state (§3.2.2). Answers the
   * rendered JSON of the result: a string crosses the RPC boundary far cheaper than the
   * task object it would otherwise be cloned from, then re-serialized by the Worker.
   */
  sendMessage(
    scope: Scope,
    params: SendParams,
    version: ProtocolVersion,
    push?: InlinePush,
  ): Promise<Result<string>> {
    return attempt("context object", async () => {
      // A retry gets its task back without asking the reply hook again (see `admit`).
      const checked = this.checkBeforeReply(scope, params.message);
      const retry = checked && "retryOf" in checked.sent ? checked.sent.retryOf : null;
      const reply = retry === null ? await this.directReply(scope, params.message) : null;
      if (reply) return JSON.stringify(renderReplyResult(reply, version));
      const { taskId, run } =
        retry === null
          ? this.admit(scope, params.message, undefined, push, checked)
          : { taskId: retry };
      if (params.returnImmediately) this.ctx.waitUntil(run ?? Promise.resolve());
      else await run;
      // Read-your-writes listing: a new task is in the tenant index before its answer
      // leaves (one call, carrying the state it is answered in, shared with concurrent
      // answers). A task continued by this message is there already; its change waits
      // for the window with the rest.
      if (!params.message.taskId) await this.outbox.listed(taskId);
      const task = this.read(taskId, { historyLength: params.historyLength });
      return JSON.stringify(renderSendResult(task, version, params));
    });
  }

  /** SendStreamingMessage: the task first, then its events until it ends or pauses. */
  streamMessage(
    scope: Scope,
    params: SendParams,
    format: StreamFormat,
    push?: InlinePush,
  ): Promise<Result<ReadableStream<Uint8Array>>> {
    return attempt("context object", async () => {
      // Refused before the message is written, not after.
      if (params.message.taskId) this.checkSubscribers(params.message.taskId);
      const checked = this.checkBeforeReply(scope, params.message);
      if (checked && "retryOf" in checked.sent) {
        return this.openStream(checked.sent.retryOf, format, { snapshot: true, retry: true });
      }
      const reply = await this.directReply(scope, params.message);
      if (reply) return replyStream(reply, format);
      const stream = this.admit(
        scope,
        params.message,
        (taskId, start, retried) =>
          // A retry streams the task it finds as SubscribeToTask would, and ends at once
          // if that task already ended or paused.
          this.openStream(taskId, format, { snapshot: true, retry: retried }, start),
        push,
        checked,
      );
      if (stream.run) this.ctx.waitUntil(stream.run);
      return stream.opened as ReadableStream<Uint8Array>;
    });
  }

  getTask(scope: Scope, taskId: string, options: ReadOptions = {}): Promise<Result<Task>> {
    return attempt("context object", () => {
      if (this.vacant) throw taskNotFound(taskId);
      this.claim(scope);
      return this.read(taskId, options);
    });
  }

  /**
   * Several tasks in the given order; ids this object does not hold are skipped, and so
   * are tasks that no longer match the listing's state filter: the tenant index may lag
   * behind (a restart just failed a working task), this object does not. With `within`,
   * the artifacts returned stay within that budget: `read` says how many ids were looked
   * at (the page ends after the last of them).
   */
  async getTasks(
    scope: Scope,
    taskIds: string[],
    options: ReadOptions = {},
    filter: { state?: TaskState } = {},
    within?: ListBudget,
  ): Promise<{ tasks: Task[]; read: number }> {
    if (this.vacant) return { tasks: [], read: taskIds.length };
    this.claim(scope);
    return this.store.readPage(
      taskIds,
      options,
      (task) => !filter.state || task.status.state === filter.state,
      within,
    );
  }

  /** ListTasks for this conversation alone (a contextId filter needs no index). */
  listTasks(scope: Scope, params: ListTasksParams): Promise<Result<TaskPage>> {
    return attempt("context object", () => {
      if (this.vacant) return { tasks: [], totalSize: 0, nextPageToken: "" };
      this.claim(scope);
      const page = this.store.page({
        state: params.state,
        statusTimestampAfter: params.statusTimestampAfter,
        pageSize: params.pageSize,
        pageToken: params.pageToken,
      });
      const options = {
        historyLength: params.historyLength,
        includeArtifacts: params.includeArtifacts,
      };
      const chars = this.agent.limits.listArtifactChars;
      const { tasks, read } = this.store.readPage(
        page.rows.map((r) => r.id),
        options,
        undefined,
        params.includeArtifacts ? { chars, atLeastOne: true } : undefined,
      );
      return {
        tasks,
        totalSize: page.totalSize,
        nextPageToken: read < page.rows.length ? page.tokenAfter(read - 1) : page.nextPageToken,
      };
    });
  }

  /** CancelTask: records the cancellation, then interrupts the running handler (B9). */
  cancelTask(scope: Scope, taskId: string, metadata?: JsonObject): Promise<Result<Task>> {
    return attempt("context object", async () => {
      if (this.vacant) throw taskNotFound(taskId);
      this.claim(scope);
      const state = this.store.state(taskId);
      if (state === null)
        throw new A2AError("TaskNotFound", `Task ${taskId} not found`, { taskId });
      if (isTerminal(state)) {
        throw new A2AError(
          "TaskNotCancelable",
          `Task ${taskId} is ${state} and can no longer be canceled`,
          { taskId, state },
        );
      }
      const reason = typeof metadata?.reason === "string" ? metadata.reason : "";
      this.publish(
        taskId,
        this.store.transition(taskId, "canceled", {
          metadata: reason ? { cancelReason: reason } : undefined,
        }),
      );
      this.runs.get(taskId)?.abort(new DOMException(reason || "Task canceled", "AbortError"));
      this.ctx.waitUntil(cancelChildren(this.children.open(taskId), this.env));
      return this.read(taskId);
    });
  }

  /**
   * SubscribeToTask. With `lastEventId` (an SSE reconnect), replays what came after that
   * event instead of sending a fresh task snapshot.
   */
  subscribe(
    scope: Scope,
    taskId: string,
    format: StreamFormat,
    lastEventId?: number,
  ): Promise<Result<ReadableStream<Uint8Array>>> {
    return attempt("context object", () => {
      if (this.vacant) throw taskNotFound(taskId);
      this.claim(scope);
      const state = this.store.state(taskId);
      if (state === null)
        throw new A2AError("TaskNotFound", `Task ${taskId} not found`, { taskId });
      if (lastEventId === undefined && isTerminal(state)) {
        throw new A2AError(
          "UnsupportedOperation",
          `Task ${taskId} is ${state}; a finished task has no updates to subscribe to`,
          { taskId, state },
        );
      }
      return lastEventId === undefined
        ? this.openStream(taskId, format, { snapshot: true })
        : this.openStream(taskId, format, { snapshot: false, afterSeq: lastEventId });
    });
  }

  /** A page of this conversation's history, oldest first (paged by position). */
  getHistory(
    scope: Scope,
    page: { after?: number; limit: number },
  ): Promise<Result<HistoryPage<Item>>> {
    return attempt("context object", () => {
      this.requireContext(scope);
      return this.store.history.page(page);
    });
  }

  /**
   * Compacts this conversation (E5–E9, E11) as a control call: the history model plans
   * the change, then only the rows it removes or adds are written, in one transaction.
   * A bad request, an unknown context or a failing summarizer changes nothing.
   */
  compactHistory(scope: Scope, input: unknown): Promise<Result<CompactionResult>> {
    // One at a time: a compaction plans from the rows it read, then awaits the summarizer
    // (a model call, during which other calls run); a second one planned from the same
    // rows would write a second summary of the same turns.
    const run = this.compacting.then(() => this.compactNow(scope, input));
    this.compacting = run.then(
      () => {},
      () => {},
    );
    return run;
  }

  private compacting: Promise<void> = Promise.resolve();

  private compactNow(scope: Scope, input: unknown): Promise<Result<CompactionResult>> {
    return attempt("context object", async () => {
      // Strict: compaction deletes history, and a misspelt limit must not fall back to
      // the default and delete more than the caller asked for.
      const parsed = CompactionRequest.strict().safeParse(input ?? {});
      if (!parsed.success) throw invalidParams(parsed.error.issues, "params");
      this.requireContext(scope);
      const summarizer = this.agent.summarizer;
      if (parsed.data.strategy === "summary" && !summarizer) {
        throw new A2AError(
          "UnsupportedOperation",
          "Summary compaction needs a summarizer; configure `summarizer` in defineAgent",
        );
      }
      const rows = this.store.history.all();
      const before = rows.map((r) => r.item);
      const taskOf = new Map(rows.map((r) => [r.item.id, r.taskId]));
      const conversation = Conversation.fromStored([...before]);
      const result = await conversation.compact(parsed.data, {
        summarizer: summarizer ?? undefined,
      });
      const diff = diffItems(before, [...conversation.items]);
      this.store.history.apply(diff, (item) => taskOf.get(item.id) ?? null);
      // Task messages may have gone with the compaction: read the tasks again.
      this.store.forgetTasks();
      return result;
    });
  }

  /** Retries index updates that could not be delivered; delivers push; prunes. */
  override async alarm(): Promise<void> {
    this.alarmAt = null;
    this.alarmOwned = false;
    this.wakes.clear();
    if (this.vacant) return;
    this.prune();
    await this.flushIndex();
    this.store.commitAcknowledgements();
    await this.deliverPush();
    if (this.pruneArmed) await this.wakeAt(Date.now() + PRUNE_AGAIN_MS, "prune");
    else await this.armRetention();
  }

  /** Set while the last batch of retention was full: the alarm prunes again soon. */
  private pruneArmed = false;

  /**
   * Asks the alarm for retention's next due time (`TaskStore.retentionDue`): soon when
   * more tasks are finished than `retainFinishedTasks`, else when the oldest finished task
   * passes `retainFinishedMs`, not after every finished task. Tasks finishing close
   * together share one prune, `PRUNE_DELAY_MS` later.
   */
  private async armRetention(): Promise<void> {
    const { retainFinishedTasks, retainFinishedMs } = this.agent.limits;
    const due = this.store.retentionDue(retainFinishedTasks, retainFinishedMs);
    if (due !== null) await this.wakeAt(Math.max(due, Date.now() + PRUNE_DELAY_MS), "prune");
  }

  /** One batch of retention (`limits.retainFinishedTasks`, `limits.retainFinishedMs`). */
  private prune(): void {
    const { retainFinishedTasks, retainFinishedMs } = this.agent.limits;
    const cutoff = new Date(Date.now() - retainFinishedMs).toISOString();
    const batch = 100;
    this.pruneArmed = this.store.prune(retainFinishedTasks, cutoff, batch) === batch;
  }

  // ---- push notifications ------------------------------------------------------------

  /** Registers a webhook for a task; its first delivery is the task as it is now. */
  createPushConfig(
    scope: Scope,
    taskId: string,
    input: PushConfigInput,
    issuer: string,
  ): Promise<Result<PushConfig>> {
    return attempt("context object", async () => {
      const push = this.requirePush(scope, taskId);
      const config = this.store.atomic(() =>
        this.registerConfig(push, taskId, input, issuer, this.read(taskId)),
      );
      await this.wakeAt(Date.now(), "push");
      return config;
    });
  }

  getPushConfig(scope: Scope, taskId: string, id: string): Promise<Result<PushConfig>> {
    return attempt("context object", () => {
      const config = this.requirePush(scope, taskId).config(taskId, id);
      if (!config) {
        throw new A2AError("TaskNotFound", `Push notification config ${id} not found`, {
          taskId,
          configId: id,
        });
      }
      return config;
    });
  }

  listPushConfigs(
    scope: Scope,
    taskId: string,
    page: { pageSize: number; pageToken?: string },
  ): Promise<Result<{ configs: PushConfig[]; nextPageToken: string }>> {
    return attempt("context object", () => {
      const rows = this.requirePush(scope, taskId).configs(taskId, {
        after: page.pageToken,
        limit: page.pageSize + 1,
      });
      const configs = rows.slice(0, page.pageSize);
      const more = rows.length > page.pageSize;
      return { configs, nextPageToken: more ? (configs.at(-1)?.id ?? "") : "" };
    });
  }

  /** Idempotent: deleting a config that is not there succeeds. */
  deletePushConfig(scope: Scope, taskId: string, id: string): Promise<Result<null>> {
    return attempt("context object", () => {
      this.requirePush(scope, taskId).deleteConfig(taskId, id);
      return null;
    });
  }

  /** A task's dead-lettered webhook deliveries, a page at a time (`after`: last seq seen). */
  deadDeliveries(
    scope: Scope,
    taskId: string,
    page: { after?: number; limit?: number } = {},
  ): Promise<Result<DeliveryRow[]>> {
    return attempt("context object", () => this.requirePush(scope, taskId).dead(taskId, page));
  }

  /** Queues a task's dead-lettered deliveries again; answers how many. */
  redeliver(scope: Scope, taskId: string): Promise<Result<number>> {
    return attempt("context object", async () => {
      const count = this.requirePush(scope, taskId).redeliver(taskId, Date.now());
      this.store.mergeMetadata(taskId, { pushDeadLetters: 0 });
      if (count > 0) await this.wakeAt(Date.now(), "push");
      return count;
    });
  }

  private requirePush(scope: Scope, taskId: string): PushStore {
    if (this.vacant) throw taskNotFound(taskId);
    this.claim(scope);
    if (!this.pushStore) {
      throw new A2AError(
        "PushNotificationNotSupported",
        "This agent does not send push notifications",
      );
    }
    if (this.store.state(taskId) === null) {
      throw new A2AError("TaskNotFound", `Task ${taskId} not found`, { taskId });
    }
    return this.pushStore;
  }

  private async deliverPush(): Promise<void> {
    if (!this.dispatcher) return;
    try {
      const next = await this.dispatcher.run();
      if (next !== null) await this.wakeAt(next, "push");
    } catch (error) {
      // Never left to the platform's alarm retries: log, and try again shortly.
      console.error("edgelink: push delivery failed; retrying", error);
      await this.wakeAt(Date.now() + 5_000, "push");
    }
  }

  /**
   * One alarm serves the index, push and retention: it is set to the earliest wake-up
   * asked for, and each part's request is remembered until the alarm runs.
   */
  private async wakeAt(at: number, reason: WakeReason): Promise<void> {
    const asked = this.wakes.get(reason);
    if (asked === undefined || at < asked) this.wakes.set(reason, at);
    // Known to be set early enough (every message asks for the index backstop): no call.
    if (this.alarmAt !== null && this.alarmAt <= at) return;
    if (this.alarmOwned) {
      this.alarmAt = at;
      await this.ctx.storage.setAlarm(at);
      return;
    }
    const current = await this.ctx.storage.getAlarm();
    if (current === null || at < current) {
      if (current !== null) this.wakes.set("found", current);
      this.alarmAt = at;
      this.alarmOwned = true;
      await this.ctx.storage.setAlarm(at);
    } else {
      this.alarmAt = current;
    }
  }

  /**
   * A part no longer needs its wake-up (the index sent every row before its backstop):
   * the alarm moves to the earliest wake-up still asked for, or is deleted when none is,
   * so a quiet conversation is not woken for nothing. Only an alarm this object set
   * itself is moved; one found set (by an earlier run of the object) may serve anything.
   * The memory is updated before the storage call, so a wake-up asked meanwhile is kept.
   */
  private async settle(reason: WakeReason): Promise<void> {
    if (!this.wakes.delete(reason) || this.alarmAt === null || !this.alarmOwned) return;
    const next = Math.min(...this.wakes.values());
    if (next === Number.POSITIVE_INFINITY) {
      this.alarmAt = null;
      this.alarmOwned = false;
      await this.ctx.storage.deleteAlarm();
    } else if (next > this.alarmAt) {
      this.alarmAt = next;
      await this.ctx.storage.setAlarm(next);
    }
  }

  /** The alarm as far as this object knows (null: ask storage). */
  private alarmAt: number | null = null;
  /** Whether `alarmAt` is an alarm this object set since it started (its reasons known). */
  private alarmOwned = false;
  /** The wake-ups each part asked for since the alarm last ran. */
  private readonly wakes = new Map<WakeReason, number>();

  // ---- tasks and runs ----------------------------------------------------------------

  /** Whether `input` repeats a message this conversation took (see `findSent`). */
  private findSent(input: Message) {
    return findSent(this.store.history, input, (taskId) => this.store.state(taskId) !== null);
  }

  /**
   * A message looked up before the reply hook is asked (a retry must not run it again);
   * null when no hook would be asked: `admit` looks then, in the same step as its writes.
   */
  private checkBeforeReply(scope: Scope, input: Message): Checked | null {
    if (this.vacant || !this.agent.reply || input.taskId) return null;
    this.claim(scope);
    return { sent: this.findSent(input), at: this.admitted };
  }

  /** Messages admitted by this instance: a lookup made before the last one may be stale. */
  private admitted = 0;

  /**
   * The agent's direct reply to a new message (A2A §3.1.1), or null when it wants a task.
   * Asked before admit, so a reply writes nothing: no task, no log, no index entry, not
   * even the object's schema. An inline push config or returnImmediately has no task to
   * apply to and is ignored, as the spec says.
   */
  private async directReply(scope: Scope, input: Message): Promise<Message | null> {
    const hook = this.agent.reply;
    if (!hook || input.taskId) return null;
    const contextId = scope.contextId;
    try {
      const result = await hook({ message: { ...input, contextId }, contextId, env: this.env });
      if (typeof result !== "string" && !Array.isArray(result)) return null;
      return replyMessage(result, contextId);
    } catch (error) {
      throw new A2AError("Internal", publicReason(error));
    }
  }

  /**
   * Creates a task for a new message, or resumes the interrupted task it names, then
   * starts the handler. Everything up to the start is synchronous, so two messages for
   * one task cannot both get in. `beforeRun` sees the task before its run begins.
   *
   * A message whose messageId this conversation already took is a client's retry: it
   * gets the task the first one went to, as it is now, and nothing is written or run
   * (`run` is then undefined). The check is here, synchronous with the writes, so two
   * copies of one message arriving together make one task.
   */
  private admit<T>(
    scope: Scope,
    input: Message,
    beforeRun?: (taskId: string, snapshot?: Snapshot, retried?: boolean) => T,
    push?: InlinePush,
    checked?: Checked | null,
  ): { taskId: string; run?: Promise<void>; opened?: T } {
    // A new conversation has no message to find: its first one skips the lookup.
    const fresh = this.vacant;
    if (this.vacant) {
      if (input.taskId) throw taskNotFound(input.taskId);
      // The object's first alarm makes the platform create its own metadata table: a
      // schema change, after which SQLite prepares every statement it had cached again
      // (the next turn paid that for each). A new conversation's first message asks for
      // the index backstop anyway, so it is asked for now, before any statement; an
      // object never written has no alarm, so this one is the object's own.
      this.alarmOwned = true;
      this.outbox.schedule();
      migrate(this.ctx.storage, CONTEXT_MIGRATIONS, CONTEXT_FRESH);
      this.store.history.created();
      this.vacant = false;
      this.created = true;
    }
    this.claim(scope);
    // Looked up before the reply hook and no message admitted since: still what it was.
    const sent = fresh
      ? { itemId: sentItemId(input.messageId) }
      : checked && checked.at === this.admitted
        ? checked.sent
        : this.findSent(input);
    if ("retryOf" in sent) {
      return { taskId: sent.retryOf, opened: beforeRun?.(sent.retryOf, undefined, true) };
    }
    this.admitted += 1;
    const full = this.agent.limits.historyItems;
    if (this.store.history.size() >= full) {
      throw new A2AError(
        "ConversationFull",
        `Conversation ${scope.contextId} holds ${full} history items, the most it may (limits.historyItems): compact it (history:compact) or start a new context`,
        { contextId: scope.contextId, limit: String(full) },
      );
    }
    const message: Message = { ...input, contextId: scope.contextId };
    const taskId = message.taskId;
    if (taskId) {
      const state = this.store.state(taskId);
      if (state === null)
        throw new A2AError("TaskNotFound", `Task ${taskId} not found`, { taskId });
      if (isTerminal(state)) {
        throw new A2AError(
          "UnsupportedOperation",
          `Task ${taskId} is ${state} and accepts no more messages; start a new task instead`,
          { taskId, state },
        );
      }
      if (this.runs.has(taskId)) {
        throw new A2AError(
          "UnsupportedOperation",
          `Task ${taskId} is still working; wait for it to ask for input or cancel it`,
          { taskId, state },
        );
      }
      this.store.atomic(() => {
        this.store.appendMessage(taskId, message, sent.itemId);
        if (push) this.registerInline(taskId, push.config, push.issuer, this.read(taskId));
      });
      const opened = beforeRun?.(taskId);
      return { taskId, run: this.start(taskId, message), opened };
    }
    // A new task: its row, its message and its move to working in one transaction; a
    // stream opened on it starts from the submitted task, before the first event.
    const id = scope.newTaskId ?? newTaskId(scope.contextId);
    message.taskId = id;
    const submitted = submittedTask(id, scope.contextId, message);
    const events = this.store.atomic(() => {
      if (push) this.registerInline(id, push.config, push.issuer, submitted);
      return this.store.create(submitted, true, push !== undefined, sent.itemId);
    });
    const opened = beforeRun?.(id, { task: submitted, seq: 0 });
    this.publish(id, events);
    return { taskId: id, run: this.run(id, message), opened };
  }

  /** A config sent inside SendMessage: saved before the run starts, so no event is missed. */
  private registerInline(
    taskId: string,
    input: PushConfigInput,
    issuer: string,
    snapshot: Task,
  ): void {
    if (!this.pushStore) {
      throw new A2AError(
        "PushNotificationNotSupported",
        "This agent does not send push notifications",
      );
    }
    this.registerConfig(this.pushStore, taskId, input, issuer, snapshot);
    this.store.pushQueued = true;
  }

  /**
   * Saves a config and queues the task snapshot as its first delivery. The snapshot is
   * written now, so every retry of that delivery sends the same body.
   */
  private registerConfig(
    push: PushStore,
    taskId: string,
    input: PushConfigInput,
    issuer: string,
    snapshot: Task,
  ): PushConfig {
    const config = resolvePushConfig(input, { taskId });
    const max = this.agent.limits.maxPushConfigsPerTask;
    if (!push.config(taskId, config.id) && push.configCount(taskId) >= max) {
      throw new A2AError(
        "InvalidParams",
        `Task ${taskId} already has ${max} push notification configs, the limit; delete one first`,
        { taskId, limit: String(max) },
      );
    }
    push.saveConfig(config);
    const body = JSON.stringify(snapshot);
    if (body.length > MAX_SNAPSHOT_CHARS) {
      throw new A2AError(
        "InvalidParams",
        `Task ${taskId} is ${body.length} characters of JSON, over the ${MAX_SNAPSHOT_CHARS} a webhook's first delivery keeps`,
        { taskId, limit: String(MAX_SNAPSHOT_CHARS) },
      );
    }
    push.enqueue(taskId, null, Date.now(), config.id, body);
    this.ctx.storage.sql.exec(
      "INSERT INTO meta (key, value) VALUES ('push_issuer', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
      issuer,
    );
    return config;
  }

  /** Moves an existing task back to working and runs the handler on `message`. */
  private start(taskId: string, message: Message): Promise<void> {
    this.publish(taskId, this.store.transition(taskId, "working"));
    return this.run(taskId, message);
  }

  private run(taskId: string, message: Message): Promise<void> {
    const controller = new AbortController();
    this.runs.set(taskId, controller);
    return this.execute(taskId, message, controller).finally(() => this.runs.delete(taskId));
  }

  private async execute(taskId: string, message: Message, controller: AbortController) {
    const task = this.store.snapshot(taskId);
    if (!task) throw new A2AError("TaskNotFound", `Task ${taskId} not found`, { taskId });
    const run = new TaskRun(
      task,
      message,
      controller.signal,
      this.env,
      this.store,
      (id, e) => this.publish(id, e),
      this.children,
    );
    try {
      const agent = this.agent;
      const result = agent.handler
        ? await agent.handler(run)
        : agent.model
          ? await runModelAgent(run, agent, {}, agent.memory ? this.memoryScope() : undefined)
          : await runDefaultExecution(run, agent);
      if (controller.signal.aborted) return;
      const state = this.store.state(taskId);
      if (state === null || isTerminal(state)) return;
      // The handler's answer and the end of the task: one transaction.
      this.store.atomic(() => {
        if (typeof result === "string" || Array.isArray(result)) {
          const parts = typeof result === "string" ? [Parts.text(result)] : result;
          run.artifact({ name: "result", parts });
        }
        if (state === "working") run.complete();
      });
    } catch (error) {
      if (controller.signal.aborted) return;
      this.failTask(taskId, publicReason(error));
    }
  }

  /** Who a model turn's long-term memory is for: this conversation's tenant and owner. */
  private memoryScope(): MemoryTurnScope {
    this.identity ??= this.readIdentity();
    return {
      tenant: this.identity?.tenant ?? "",
      owner: this.identity?.owner ?? "",
      background: (work) => this.ctx.waitUntil(work),
      mergeMetadata: (taskId, patch) => {
        const task = this.store.read(taskId);
        if (task) this.store.mergeMetadata(taskId, patch(task.metadata ?? {}));
      },
    };
  }

  private failTask(taskId: string, reason: string): void {
    const state = this.store.state(taskId);
    if (state === null || isTerminal(state)) return;
    const message: Message = {
      messageId: newId(),
      role: "agent",
      parts: [Parts.text(reason)],
      contextId: this.store.read(taskId)?.contextId,
      taskId,
      timestamp: nowIso(),
    };
    this.publish(
      taskId,
      this.store.transition(taskId, "failed", { message, metadata: { error: reason } }),
    );
  }

  /**
   * On wake nothing is running, so a task still submitted or working lost its run:
   * resume it if the agent allows, otherwise fail it with a clear reason.
   */
  private async recover(): Promise<void> {
    if (this.vacant) return;
    const orphans = this.store.idsInStates(["submitted", "working"]);
    for (const taskId of orphans) {
      // A task following children is resumed: its delegations re-attach instead of resending.
      const resume = this.agent.resumeOnRestart || this.children.open(taskId).length > 0;
      const message = resume ? this.store.lastUserMessage(taskId) : null;
      if (message) this.ctx.waitUntil(this.start(taskId, message));
      else this.failTask(taskId, RESTART_REASON);
    }
    // Rows a previous run answered for but could not send (torn down inside its window)
    // go now, with the failures just written, not at the backstop alarm. Not awaited:
    // requests do not wait for the index.
    this.ctx.waitUntil(this.outbox.flush());
  }

  /** A conversation exists once it has a task or a history item. */
  private requireContext(scope: Scope): void {
    const known =
      !this.vacant &&
      (this.ctx.storage.sql.exec("SELECT 1 FROM tasks LIMIT 1").toArray().length > 0 ||
        this.store.history.count() > 0);
    if (!known) {
      throw new A2AError("ContextNotFound", `Context ${scope.contextId} not found`, {
        contextId: scope.contextId,
      });
    }
    this.claim(scope);
  }

  private read(taskId: string, options: ReadOptions = {}): Task {
    const task = this.store.read(taskId, options);
    if (!task) throw new A2AError("TaskNotFound", `Task ${taskId} not found`, { taskId });
    return task;
  }

  private publish(taskId: string, events: LoggedEvent[]): void {
    if (events.length) this.hub.emit(taskId, events);
    if (events.some(endsTask)) {
      // A task finished: retention may have work, now or once it is old enough.
      this.armRetention().catch((error) =>
        console.error("edgelink: could not schedule retention", error),
      );
    }
    if (this.store.pushQueued) {
      this.store.pushQueued = false;
      this.wakeAt(Date.now(), "push").catch((error) =>
        console.error("edgelink: could not schedule push delivery", error),
      );
    }
  }

  // ---- tenant index ------------------------------------------------------------------

  /**
   * Records which tenant and conversation this object holds (first call wins), and, for a
   * new conversation, the index shard count its rows go to (in the same statement).
   */
  private claim(scope: Scope): void {
    if (this.claimed) return;
    this.claimed = true;
    const shards = this.created ? [String(this.agent.limits.indexShards)] : [];
    this.ctx.storage.sql.exec(
      `INSERT INTO meta (key, value) VALUES ('tenant', ?), ('context_id', ?), ('owner', ?)${shards.length ? ", ('index_shards', ?)" : ""} ON CONFLICT (key) DO NOTHING`,
      scope.tenant,
      scope.contextId,
      scope.owner ?? "",
      ...shards,
    );
  }

  /**
   * After `limits.indexShards` changed, this conversation's index rows sit in shards that
   * no listing reads (the count is part of their names): every task is marked to go
   * again, to its shard of the new count. A conversation from before shards sent its rows
   * to the one unsharded index. Runs when rows are sent, so a conversation heals with its
   * next state change; one that never changes again stays out of cross-context listings.
   */
  private reshard(shards: number): void {
    this.sentShards ??= Number(this.meta("index_shards") ?? "1");
    if (this.sentShards === shards) return;
    this.store.atomic(() => {
      this.store.resendAll();
      this.ctx.storage.sql.exec(
        "INSERT INTO meta (key, value) VALUES ('index_shards', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        String(shards),
      );
    });
    this.sentShards = shards;
    // The rows being sent now are among them; the rest go in the next window.
    this.outbox.schedule();
  }

  private readIdentity(): { tenant: string; contextId: string; owner: string } | null {
    const tenant = this.meta("tenant");
    const contextId = this.meta("context_id");
    if (tenant === null || contextId === null) return null;
    return { tenant, contextId, owner: this.meta("owner") ?? "" };
  }

  private meta(key: string): string | null {
    const row = this.ctx.storage.sql
      .exec<{ value: string }>("SELECT value FROM meta WHERE key = ?", key)
      .toArray()[0];
    return row ? row.value : null;
  }

  /** Where this conversation's index rows go (its shard), once the object knows its tenant. */
  private indexTarget(): { index: IndexRpc; contextId: string } | null {
    this.identity ??= this.readIdentity();
    if (!this.identity) return null;
    const { tenant, contextId, owner } = this.identity;
    const binding = (this.env as Record<string, unknown>)[this.agent.bindings.index] as
      | DurableObjectNamespace
      | undefined;
    if (!binding) throw new Error(`Missing Durable Object binding ${this.agent.bindings.index}`);
    const shards = this.agent.limits.indexShards;
    this.reshard(shards);
    return { index: indexShardFor(binding, { tenant, owner, shards }, contextId), contextId };
  }

  private flushIndex(): Promise<void> {
    return this.outbox.flush();
  }

  /** A task's open streams are capped (`limits.maxSubscribersPerTask`). */
  private checkSubscribers(taskId: string): void {
    const max = this.agent.limits.maxSubscribersPerTask;
    if (this.hub.count(taskId) >= max) {
      throw new A2AError(
        "UnsupportedOperation",
        `Task ${taskId} already has ${max} open streams, the limit; close one or poll with GetTask`,
        { taskId, limit: String(max) },
      );
    }
  }

  private openStream(taskId: string, format: StreamFormat, from: StreamStart, start?: Snapshot) {
    this.checkSubscribers(taskId);
    const { streamBufferBytes, backlogPageSize } = this.agent.limits;
    return openTaskStream({
      bufferBytes: streamBufferBytes,
      pageSize: backlogPageSize,
      taskId,
      format,
      from,
      store: this.store,
      hub: this.hub,
      snapshot: () => start ?? { task: this.read(taskId), seq: this.store.lastSeq(taskId) },
      keepAliveMs: this.agent.keepAliveMs,
    });
  }
}
