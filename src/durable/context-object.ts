/**
 * The conversation object's RPC surface: each A2A operation on one conversation, checked
 * and answered here, the work done by the parts it owns (the task store, the handler runs,
 * the index outbox, push, the alarm).
 */
import { DurableObject } from "cloudflare:workers";
import type { Agent } from "../agent/definition";
import { replyMessage } from "../agent/reply";
import { CompactionRequest, type CompactionResult } from "../history/compaction";
import { Conversation } from "../history/conversation";
import { diffItems } from "../history/diff";
import type { Item } from "../history/items";
import { A2AError, invalidParams } from "../models/errors";
import type { JsonObject } from "../models/json";
import type { Message } from "../models/message";
import { renderReplyResult, renderSendResult } from "../models/render";
import type { ListTasksParams, ProtocolVersion, SendParams } from "../models/requests";
import { replyStream, type StreamFormat } from "../models/stream";
import { submittedTask, type Task } from "../models/task";
import { isTerminal, type TaskState } from "../models/task-state";
import type { PushConfig, PushConfigInput } from "../push/config";
import { ObjectAlarm } from "./alarm";
import { ChildStore, cancelChildren } from "./children";
import { ContextIdentity, type Scope } from "./context-identity";
import { EventHub } from "./event-hub";
import { HandlerRuns, publicReason } from "./handler-runs";
import { type HistoryPage, HistoryStore } from "./history-store";
import { newTaskId } from "./ids";
import { IndexOutbox } from "./index-outbox";
import { PushDispatcher } from "./push-dispatcher";
import { PushRpc, pushNotSupported } from "./push-rpc";
import { type DeliveryRow, PushStore } from "./push-store";
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
import { type ListBudget, type ReadOptions, TaskStore } from "./task-store";
import { openTaskStream, type Snapshot, type StreamStart } from "./task-stream";

export type { Scope } from "./context-identity";
export { RESTART_REASON } from "./handler-runs";
export type { Result } from "./result";

/** A webhook registered inside SendMessage, already checked by the server. */
export interface InlinePush {
  config: PushConfigInput;
  /** The agent's origin: the `iss` of delivery signatures. */
  issuer: string;
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

/** A message's lookup (`findSent`), made when `admitted` was `at`. */
interface Checked {
  sent: Sent;
  at: number;
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
  private readonly outbox: IndexOutbox;
  private readonly pushStore: PushStore | null;
  /** Delegations of this context's tasks to other agents. */
  private readonly children: ChildStore;
  private readonly dispatcher: PushDispatcher | null;
  /** The one alarm: index backstop and retries, push delivery, retention. */
  private readonly alarms: ObjectAlarm;
  /** Which tenant and conversation this is, and where its index rows go. */
  private readonly identity: ContextIdentity;
  private readonly runs: HandlerRuns<Env>;
  /** The push calls; null when the agent has push off. */
  private readonly pushRpc: PushRpc | null;
  /** True until the first write: the object holds nothing and has no schema. */
  private vacant: boolean;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    // The subclass supplies `agent` as a prototype getter, so it is readable here.
    const agent = (this as unknown as { agent: Agent<Env> }).agent;
    const limits = () => this.agent.limits;
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
      this.store.index,
      {
        target: () => this.identity.indexTarget(),
        keepAlive: (work) => ctx.waitUntil(work),
        wakeAt: (at) => this.alarms.wakeAt(at, "index"),
        settled: () =>
          this.alarms
            .settle("index")
            .catch((error) => console.error("edgelink: could not move the alarm", error)),
      },
      () => this.agent.limits.indexFlushMs,
    );
    this.store.index.onPending = () => this.outbox.schedule();
    this.identity = new ContextIdentity(
      ctx.storage,
      this.store,
      env,
      () => this.agent,
      () => this.outbox.schedule(),
    );
    this.dispatcher = this.pushStore
      ? new PushDispatcher(
          this.pushStore,
          this.store,
          agent as Agent<unknown>,
          env,
          () => this.identity.meta("push_issuer") ?? agent.card.url ?? "edgelink",
          (taskId) => this.read(taskId),
        )
      : null;
    this.alarms = new ObjectAlarm(ctx.storage, {
      store: this.store,
      outbox: this.outbox,
      dispatcher: this.dispatcher,
      limits,
    });
    this.pushRpc = this.pushStore
      ? new PushRpc(ctx.storage, this.pushStore, this.store, this.alarms, limits, (taskId) =>
          this.read(taskId),
        )
      : null;
    // A read never creates storage: an object never written gets its schema on the first
    // write (admit), and until then every read answers "nothing here".
    this.vacant = !hasSchema(ctx.storage);
    if (!this.vacant) migrate(ctx.storage, CONTEXT_MIGRATIONS, CONTEXT_FRESH);
    this.children = new ChildStore(ctx.storage.sql);
    this.runs = new HandlerRuns(
      this.store,
      this.hub,
      this.alarms,
      this.children,
      env,
      () => this.agent,
      (work) => ctx.waitUntil(work),
    );
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
      this.identity.claim(scope);
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
    this.identity.claim(scope);
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
      this.identity.claim(scope);
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
      this.identity.claim(scope);
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
      this.runs.publish(
        taskId,
        this.store.transition(taskId, "canceled", {
          metadata: reason ? { cancelReason: reason } : undefined,
        }),
      );
      this.runs.abort(taskId, reason);
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
      this.identity.claim(scope);
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
    this.alarms.rang();
    if (this.vacant) return;
    await this.alarms.run();
  }

  // ---- push notifications ------------------------------------------------------------

  /** Registers a webhook for a task; its first delivery is the task as it is now. */
  createPushConfig(
    scope: Scope,
    taskId: string,
    input: PushConfigInput,
    issuer: string,
  ): Promise<Result<PushConfig>> {
    return attempt("context object", () =>
      this.requirePush(scope, taskId).create(taskId, input, issuer),
    );
  }

  getPushConfig(scope: Scope, taskId: string, id: string): Promise<Result<PushConfig>> {
    return attempt("context object", () => this.requirePush(scope, taskId).get(taskId, id));
  }

  listPushConfigs(
    scope: Scope,
    taskId: string,
    page: { pageSize: number; pageToken?: string },
  ): Promise<Result<{ configs: PushConfig[]; nextPageToken: string }>> {
    return attempt("context object", () => this.requirePush(scope, taskId).list(taskId, page));
  }

  /** Idempotent: deleting a config that is not there succeeds. */
  deletePushConfig(scope: Scope, taskId: string, id: string): Promise<Result<null>> {
    return attempt("context object", () => this.requirePush(scope, taskId).delete(taskId, id));
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
    return attempt("context object", () => this.requirePush(scope, taskId).redeliver(taskId));
  }

  private requirePush(scope: Scope, taskId: string): PushRpc {
    if (this.vacant) throw taskNotFound(taskId);
    this.identity.claim(scope);
    if (!this.pushRpc) throw pushNotSupported();
    if (this.store.state(taskId) === null) {
      throw new A2AError("TaskNotFound", `Task ${taskId} not found`, { taskId });
    }
    return this.pushRpc;
  }

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
    this.identity.claim(scope);
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
      this.alarms.ownFirst();
      this.outbox.schedule();
      migrate(this.ctx.storage, CONTEXT_MIGRATIONS, CONTEXT_FRESH);
      this.store.history.created();
      this.vacant = false;
      this.identity.created = true;
    }
    this.identity.claim(scope);
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
      return { taskId, run: this.runs.start(taskId, message), opened };
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
    this.runs.publish(id, events);
    return { taskId: id, run: this.runs.run(id, message), opened };
  }

  /** A config sent inside SendMessage: saved before the run starts, so no event is missed. */
  private registerInline(
    taskId: string,
    input: PushConfigInput,
    issuer: string,
    snapshot: Task,
  ): void {
    if (!this.pushRpc) throw pushNotSupported();
    this.pushRpc.registerInline(taskId, input, issuer, snapshot);
  }

  /**
   * On wake nothing is running, so a task still submitted or working lost its run:
   * resume it if the agent allows, otherwise fail it with a clear reason.
   */
  private async recover(): Promise<void> {
    if (this.vacant) return;
    this.runs.recover();
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
    this.identity.claim(scope);
  }

  private read(taskId: string, options: ReadOptions = {}): Task {
    const task = this.store.read(taskId, options);
    if (!task) throw new A2AError("TaskNotFound", `Task ${taskId} not found`, { taskId });
    return task;
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
      snapshot: () => start ?? { task: this.read(taskId), seq: this.store.events.lastSeq(taskId) },
      keepAliveMs: this.agent.keepAliveMs,
    });
  }
}
