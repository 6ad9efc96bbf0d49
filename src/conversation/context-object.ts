/**
 * The conversation object's RPC surface: each A2A operation on one conversation, checked
 * and answered here or by the calls of its parts (the task calls, the push calls), the
 * work done by the parts it owns (the task store, the handler runs, the index outbox,
 * push, the alarm).
 */
import { DurableObject } from "cloudflare:workers";
import type { Agent } from "../agent/definition";
import type { CompactionResult } from "../history/compaction";
import type { Item } from "../history/items";
import type { IndexOutbox } from "../index/index-outbox";
import type { A2AError, ErrorData } from "../protocol/errors";
import type { JsonObject } from "../protocol/json";
import type { Task } from "../protocol/task";
import type { TaskState } from "../protocol/task-state";
import { renderReplyResult, renderSendResult } from "../protocol/wire/render";
import type { ListTasksParams, ProtocolVersion, SendParams } from "../protocol/wire/requests";
import { replyStream, type StreamFormat } from "../protocol/wire/stream";
import type { PushConfig, PushConfigInput } from "../push/config";
import { attempt, attemptText, type Result } from "../storage/rpc-result";
import { type PackedSend, unpackSend } from "../storage/rpc-send";
import { CONTEXT_SCHEMA } from "../storage/schema";
import {
  createSchema,
  openSchema,
  type StorageReport,
  storageReport,
} from "../storage/schema-version";
import type { Admission, Checked, InlinePush } from "./admission";
import type { ObjectAlarm } from "./alarm";
import { ApproverDesk } from "./approver-desk";
import type { ContextIdentity, Scope } from "./context-identity";
import { buildParts } from "./conversation-parts";
import type { HistoryPage } from "./history/history-store";
import type { HistoryCompaction } from "./history-compaction";
import type { DeliveryRow } from "./push/push-deliveries";
import type { PushDispatcher } from "./push/push-dispatcher";
import type { PushStore } from "./push/push-store";
import type { HandlerRuns } from "./runs/handler-runs";
import type { TaskStreams } from "./runs/task-stream";
import { type TaskPage, type TaskRpc, taskNotFound } from "./task-rpc";
import type { ApprovalRows } from "./tasks/approval-rows";
import type { TaskSteps, TaskStepsRecord } from "./tasks/task-steps";
import type { ListBudget, ReadOptions, TaskStore } from "./tasks/task-store";

export type { Result } from "../storage/rpc-result";
export type { InlinePush } from "./admission";
export type { Scope } from "./context-identity";
export { RESTART_REASON } from "./runs/handler-runs";
export type { TaskPage } from "./task-rpc";

/**
 * The object's RPC surface as the Worker calls it. (The generated stub types recurse
 * too deeply over JSON values for the compiler, so stubs are typed with this.)
 */
export type ContextRpc = Pick<
  ContextObject,
  | "sendMessage"
  | "sendPlain"
  | "streamMessage"
  | "getTask"
  | "approverView"
  | "approverDecide"
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
  | "sendIndexRows"
  | "getTaskSteps"
>;

/**
 * One conversation (A2A context) of one tenant: its tasks, their messages, artifacts,
 * state history and event log as SQLite rows, and the runs of its agent's handler.
 * Conversations never share an object, so a busy one never slows another.
 */
export abstract class ContextObject<Env = unknown> extends DurableObject<Env> {
  /** The agent this object runs; supplied by the subclass `defineAgent` builds. */
  protected abstract get agent(): Agent<Env>;

  private readonly store: TaskStore;
  private readonly outbox: IndexOutbox;
  private readonly pushStore: PushStore | null;
  private readonly dispatcher: PushDispatcher | null;
  /** The one alarm: index backstop and retries, push delivery, retention. */
  private readonly alarms: ObjectAlarm;
  /** Which tenant and conversation this is, and where its index rows go. */
  private readonly identity: ContextIdentity;
  private readonly runs: HandlerRuns<Env>;
  private readonly admission: Admission<Env>;
  private readonly streams: TaskStreams;
  /** The task calls: get, list, cancel, subscribe, a task's steps. */
  private readonly tasks: TaskRpc<Env>;
  private readonly compaction: HistoryCompaction<Env>;
  /** Delegations and webhook attempts of its tasks, for the inspector only. */
  private readonly steps: TaskSteps;
  /** The calls its tasks hold for a person. */
  private readonly approvals: ApprovalRows;
  /** What an approver may do with a task (see ApproverDesk). */
  private readonly approverDesk: ApproverDesk<Env>;
  /** True until the first write: the object holds nothing and has no schema. */
  private empty: boolean;
  /** Why this object's storage cannot be used (made by a development build or a later release), if so. */
  private readonly refused: A2AError | null;
  /**
   * True until the first write. Every entry point asks this before touching storage, so an
   * object whose storage is refused answers its refusal there, reading and writing nothing.
   */
  private get vacant(): boolean {
    if (this.refused) throw this.refused;
    return this.empty;
  }

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    // A read never creates storage: an object never written gets its schema on the first
    // write (admit), and until then every read answers "nothing here".
    const opened = openSchema(ctx.storage, CONTEXT_SCHEMA);
    this.empty = opened.vacant;
    this.refused = opened.refused;
    // The subclass supplies `agent` as a prototype getter, so it is readable here.
    const agent = (this as unknown as { agent: Agent<Env> }).agent;
    const parts = buildParts(ctx, env, agent, {
      agent: () => this.agent,
      vacant: () => this.vacant,
      create: () => this.create(),
      read: (taskId, options) => this.read(taskId, options),
    });
    this.store = parts.store;
    this.outbox = parts.outbox;
    this.pushStore = parts.pushStore;
    this.dispatcher = parts.dispatcher;
    this.alarms = parts.alarms;
    this.identity = parts.identity;
    this.runs = parts.runs;
    this.admission = parts.admission;
    this.streams = parts.streams;
    this.tasks = parts.tasks;
    this.compaction = parts.compaction;
    this.steps = parts.steps;
    this.approvals = parts.approvals;
    this.approverDesk = new ApproverDesk({
      store: this.store,
      approvals: this.approvals,
      admission: this.admission,
      vacant: () => this.vacant,
      read: (taskId, options) => this.read(taskId, options),
      waitUntil: (work) => this.ctx.waitUntil(work),
    });
    void ctx.blockConcurrencyWhile(() => this.recover());
  }

  /** Makes this vacant object a new conversation: its schema, before its first message. */
  private create(): void {
    // The object's first alarm makes the platform create its own metadata table: a
    // schema change, after which SQLite prepares every statement it had cached again
    // (the next turn paid that for each). A new conversation's first message asks for
    // the index backstop anyway, so it is asked for now, before any statement; an
    // object never written has no alarm, so this one is the object's own.
    this.alarms.ownFirst();
    this.outbox.schedule();
    createSchema(this.ctx.storage, CONTEXT_SCHEMA);
    this.store.created();
    this.empty = false;
    this.identity.created = true;
  }

  // ---- RPC ---------------------------------------------------------------------------

  /** The Worker's start-up check: is this object's storage what Edgelink needs? Writes nothing. */
  storageReport(): StorageReport {
    return storageReport(this.ctx.storage, this.refused);
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
    this.steps.seen(scope);
    return attempt("context object", () => this.send(scope, params, version, push));
  }

  /**
   * `sendMessage` for a plain message (text parts, nothing else), its call packed flat by
   * the Worker (`packSend`) and its answer the text alone, or the error: what crosses the
   * RPC boundary both ways is the least it can be.
   */
  sendPlain(call: PackedSend): string | ErrorData | Promise<string | ErrorData> {
    return attemptText("context object", () => {
      const { scope, params, version } = unpackSend(call);
      this.steps.seen(scope);
      return this.send(scope, params, version);
    });
  }

  /**
   * A message's answer: text at once when nothing is waited for (a handler that answered
   * without awaiting, a new task the index mark covers), so the object's part of a
   * blocking message takes no promise; a promise otherwise.
   */
  private send(
    scope: Scope,
    params: SendParams,
    version: ProtocolVersion,
    push?: InlinePush,
  ): string | Promise<string> {
    // A retry gets its task back without asking the reply hook again (see `admit`).
    const checked = this.admission.checkBeforeReply(scope, params.message);
    const retry = checked && "retryOf" in checked.sent ? checked.sent.retryOf : null;
    // No hook, no await: a message's answer takes no turn it does not need.
    const asks = retry === null && this.agent.reply !== null && !params.message.taskId;
    if (!asks) return this.sendToTask(scope, params, version, push, checked, retry);
    return this.admission
      .directReply(scope, params.message)
      .then((reply) =>
        reply
          ? JSON.stringify(renderReplyResult(reply, version))
          : this.sendToTask(scope, params, version, push, checked, retry),
      );
  }

  /** `send` once no direct reply answered: the task admitted (or the retry's), then its answer. */
  private sendToTask(
    scope: Scope,
    params: SendParams,
    version: ProtocolVersion,
    push: InlinePush | undefined,
    checked: Checked | null,
    retry: string | null,
  ): string | Promise<string> {
    const { taskId, run } =
      retry === null
        ? this.admission.admit(scope, params.message, undefined, push, checked)
        : { taskId: retry };
    if (params.returnImmediately) {
      if (run) this.ctx.waitUntil(run);
    } else if (run) {
      return run.then(() => this.answer(taskId, params, version));
    }
    return this.answer(taskId, params, version);
  }

  /**
   * The rendered task, once a listing shows it. Read-your-writes listing: a new task is
   * listed before its answer leaves (its row sent in a call shared with concurrent answers,
   * or covered by the conversation's mark: see IndexOutbox). A task continued by this
   * message is listed already; its change waits for the window with the rest.
   */
  private answer(
    taskId: string,
    params: SendParams,
    version: ProtocolVersion,
  ): string | Promise<string> {
    const render = () => {
      const task = this.read(taskId, { historyLength: params.historyLength });
      return JSON.stringify(renderSendResult(task, version, params));
    };
    const listed = params.message.taskId ? null : this.outbox.listed(taskId);
    return listed ? listed.then(render) : render();
  }

  /** An approver's view of a task that waits for a decision (see ApproverDesk). */
  approverView(scope: Scope, taskId: string, approverId: string): Promise<Result<Task>> {
    this.steps.seen(scope);
    return attempt("context object", () => this.approverDesk.view(taskId, approverId));
  }

  /** An approver's decision message; answers the rendered task, as `sendMessage` does. */
  approverDecide(
    scope: Scope,
    params: SendParams,
    version: ProtocolVersion,
    approverId: string,
  ): Promise<Result<string>> {
    this.steps.seen(scope);
    return attempt("context object", () => {
      const task = this.approverDesk.decide(scope, params.message, approverId);
      return JSON.stringify(renderSendResult(task, version));
    });
  }

  /** SendStreamingMessage: the task first, then its events until it ends or pauses. */
  streamMessage(
    scope: Scope,
    params: SendParams,
    format: StreamFormat,
    push?: InlinePush,
  ): Promise<Result<ReadableStream<Uint8Array>>> {
    this.steps.seen(scope);
    return attempt("context object", async () => {
      // Refused before the message is written, not after.
      this.streams.checkRoom(params.message.taskId);
      const checked = this.admission.checkBeforeReply(scope, params.message);
      if (checked && "retryOf" in checked.sent) {
        return this.streams.open(checked.sent.retryOf, format, { snapshot: true, retry: true });
      }
      const reply = await this.admission.directReply(scope, params.message);
      if (reply) return replyStream(reply, format);
      let opened: ReadableStream<Uint8Array> | undefined;
      try {
        const stream = this.admission.admit(
          scope,
          params.message,
          (taskId, start, retried) => {
            // A retry streams the task it finds as SubscribeToTask would, and ends at once
            // if that task already ended or paused.
            opened = this.streams.open(taskId, format, { snapshot: true, retry: retried }, start);
            return opened;
          },
          push,
          checked,
        );
        if (stream.run) this.ctx.waitUntil(stream.run);
        return stream.opened as ReadableStream<Uint8Array>;
      } catch (error) {
        // Opened inside a write that then rolled back: never returned, so it gives back
        // its place (and its listener) here.
        void opened?.cancel();
        throw error;
      }
    });
  }

  getTask(scope: Scope, taskId: string, options: ReadOptions = {}): Promise<Result<Task>> {
    return attempt("context object", () => this.tasks.get(scope, taskId, options));
  }

  /** A task's steps, for the inspector's waterfall (the Worker serves them only while it is on). */
  getTaskSteps(scope: Scope, taskId: string): Promise<Result<TaskStepsRecord>> {
    return attempt("context object", () => this.tasks.steps(scope, taskId));
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
    return this.tasks.getTasks(scope, taskIds, options, filter, within);
  }

  /** ListTasks for this conversation alone (a contextId filter needs no index). */
  listTasks(scope: Scope, params: ListTasksParams): Promise<Result<TaskPage>> {
    return attempt("context object", () => this.tasks.list(scope, params));
  }

  /** CancelTask: records the cancellation, then interrupts the running handler. */
  cancelTask(scope: Scope, taskId: string, metadata?: JsonObject): Promise<Result<Task>> {
    return attempt("context object", async () => this.tasks.cancel(scope, taskId, metadata));
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
    return attempt("context object", () =>
      this.tasks.subscribe(scope, taskId, format, lastEventId),
    );
  }

  /** A listing found this conversation marked in its index shard: its rows go now. */
  async sendIndexRows(_scope: Scope): Promise<void> {
    if (!this.vacant) await this.outbox.sendForListing();
  }

  /** A page of this conversation's history, oldest first (paged by position). */
  getHistory(
    scope: Scope,
    page: { after?: number; limit: number },
  ): Promise<Result<HistoryPage<Item>>> {
    return attempt("context object", () => {
      this.identity.requireContext(scope, this.vacant);
      return this.store.history.page(page);
    });
  }

  /**
   * Compacts this conversation as a control call (`HistoryCompaction`): a
   * bad request, an unknown context or a failing summarizer changes nothing.
   */
  compactHistory(scope: Scope, input: unknown): Promise<Result<CompactionResult>> {
    return this.compaction.compact(
      input,
      () => this.identity.requireContext(scope, this.vacant),
      scope.trace,
    );
  }

  /** Retries index updates that could not be delivered; delivers push; prunes. */
  override async alarm(): Promise<void> {
    this.alarms.rang();
    if (this.empty || this.refused) return;
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
      this.tasks.push(scope, taskId).create(taskId, input, issuer),
    );
  }

  getPushConfig(scope: Scope, taskId: string, id: string): Promise<Result<PushConfig>> {
    return attempt("context object", () => this.tasks.push(scope, taskId).get(taskId, id));
  }

  listPushConfigs(
    scope: Scope,
    taskId: string,
    page: { pageSize: number; pageToken?: string },
  ): Promise<Result<{ configs: PushConfig[]; nextPageToken: string }>> {
    return attempt("context object", () => this.tasks.push(scope, taskId).list(taskId, page));
  }

  /** Idempotent: deleting a config that is not there succeeds. */
  deletePushConfig(scope: Scope, taskId: string, id: string): Promise<Result<null>> {
    return attempt("context object", () => this.tasks.push(scope, taskId).delete(taskId, id));
  }

  /** A task's dead-lettered webhook deliveries, a page at a time (`after`: last seq seen). */
  deadDeliveries(
    scope: Scope,
    taskId: string,
    page: { after?: number; limit?: number } = {},
  ): Promise<Result<DeliveryRow[]>> {
    return attempt("context object", () => this.tasks.push(scope, taskId).dead(taskId, page));
  }

  /** Queues a task's dead-lettered deliveries again; answers how many. */
  redeliver(scope: Scope, taskId: string): Promise<Result<number>> {
    return attempt("context object", () => this.tasks.push(scope, taskId).redeliver(taskId));
  }

  // ---- tasks and runs ----------------------------------------------------------------

  /**
   * On wake nothing is running, so a task still submitted or working lost its run:
   * resume it if the agent allows, otherwise fail it with a clear reason.
   */
  private async recover(): Promise<void> {
    if (this.empty || this.refused) return;
    this.runs.recover();
    // The alarm survives a restart, but which part asked for it does not: the next
    // approval deadline is asked for again, so no other part's settling drops it.
    const deadline = this.approvals.nextDeadline();
    if (deadline !== null) {
      this.alarms.wakeSoon(deadline, "approval", "schedule an approval deadline");
    }
    // Rows a previous run answered for but could not send (torn down inside its window)
    // go now, with the failures just written, not at the backstop alarm. Not awaited:
    // requests do not wait for the index.
    this.ctx.waitUntil(this.outbox.flush());
  }

  private read(taskId: string, options: ReadOptions = {}): Task {
    const task = this.store.read(taskId, options);
    if (!task) throw taskNotFound(taskId);
    return task;
  }
}
