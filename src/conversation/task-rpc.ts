/**
 * A conversation's task calls (GetTask, the tasks of a listing page, ListTasks by
 * context, CancelTask, SubscribeToTask, the inspector's task steps) and the check before
 * a task's push calls, each checking the caller and the task first; the object's RPC
 * methods answer with them.
 */
import { A2AError } from "../protocol/errors";
import type { JsonObject } from "../protocol/json";
import type { Task } from "../protocol/task";
import { isTerminal, type TaskState } from "../protocol/task-state";
import type { ListTasksParams } from "../protocol/wire/requests";
import type { StreamFormat } from "../protocol/wire/stream";
import type { ContextIdentity, Scope } from "./context-identity";
import type { PartsHost } from "./conversation-parts";
import { type PushRpc, pushNotSupported } from "./push/push-rpc";
import { type ChildStore, cancelChildren } from "./runs/children";
import type { HandlerRuns } from "./runs/handler-runs";
import type { TaskStreams } from "./runs/task-stream";
import type { TaskSteps, TaskStepsRecord } from "./tasks/task-steps";
import type { ListBudget, ReadOptions, TaskStore } from "./tasks/task-store";

/** A page of ListTasks for one conversation. */
export interface TaskPage {
  tasks: Task[];
  totalSize: number;
  nextPageToken: string;
}

/** The error for a task this conversation does not hold. */
export const taskNotFound = (taskId: string) =>
  new A2AError("TaskNotFound", `Task ${taskId} not found`, { taskId });

/** The task calls of one conversation object. */
export class TaskRpc<Env> {
  constructor(
    private readonly store: TaskStore,
    private readonly identity: ContextIdentity,
    private readonly runs: HandlerRuns<Env>,
    private readonly streams: TaskStreams,
    private readonly children: ChildStore,
    private readonly taskSteps: TaskSteps,
    /** The push calls; null when the agent has push off. */
    private readonly pushRpc: PushRpc | null,
    private readonly ctx: DurableObjectState,
    private readonly env: Env,
    /** The object: whether it is vacant, its agent, a task as it is now. */
    private readonly host: PartsHost<Env>,
  ) {}

  get(scope: Scope, taskId: string, options: ReadOptions): Task {
    if (this.host.vacant()) throw taskNotFound(taskId);
    this.identity.claim(scope);
    return this.host.read(taskId, options);
  }

  /** The push calls on a task, once the caller, push and the task are checked. */
  push(scope: Scope, taskId: string): PushRpc {
    if (this.host.vacant()) throw taskNotFound(taskId);
    this.identity.claim(scope);
    if (!this.pushRpc) throw pushNotSupported();
    if (this.store.state(taskId) === null) throw taskNotFound(taskId);
    return this.pushRpc;
  }

  /** A task's steps, for the inspector's waterfall (see `ContextObject.getTaskSteps`). */
  steps(scope: Scope, taskId: string): TaskStepsRecord {
    if (this.host.vacant()) throw taskNotFound(taskId);
    this.identity.claim(scope);
    this.host.read(taskId, { historyLength: 0 });
    return { ...this.taskSteps.read(taskId), push: this.pushRpc?.health(taskId) ?? null };
  }

  /** See `ContextObject.getTasks`. */
  getTasks(
    scope: Scope,
    taskIds: string[],
    options: ReadOptions,
    filter: { state?: TaskState },
    within?: ListBudget,
  ): { tasks: Task[]; read: number } {
    if (this.host.vacant()) return { tasks: [], read: taskIds.length };
    this.identity.claim(scope);
    return this.store.cache.readPage(
      taskIds,
      options,
      (task) => !filter.state || task.status.state === filter.state,
      within,
    );
  }

  /** ListTasks for this conversation alone (a contextId filter needs no index). */
  list(scope: Scope, params: ListTasksParams): TaskPage {
    if (this.host.vacant()) return { tasks: [], totalSize: 0, nextPageToken: "" };
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
    const chars = this.host.agent().limits.listArtifactChars;
    const { tasks, read } = this.store.cache.readPage(
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
  }

  /** CancelTask: records the cancellation, then interrupts the running handler. */
  cancel(scope: Scope, taskId: string, metadata?: JsonObject): Task {
    if (this.host.vacant()) throw taskNotFound(taskId);
    this.identity.claim(scope);
    const state = this.store.state(taskId);
    if (state === null) throw taskNotFound(taskId);
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
    return this.host.read(taskId);
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
  ): ReadableStream<Uint8Array> {
    if (this.host.vacant()) throw taskNotFound(taskId);
    this.identity.claim(scope);
    const state = this.store.state(taskId);
    if (state === null) throw taskNotFound(taskId);
    if (lastEventId === undefined && isTerminal(state)) {
      throw new A2AError(
        "UnsupportedOperation",
        `Task ${taskId} is ${state}; a finished task has no updates to subscribe to`,
        { taskId, state },
      );
    }
    if (lastEventId === undefined) return this.streams.open(taskId, format, { snapshot: true });
    // An id past every seq used was never sent: resuming "after" it would stream the
    // events that follow with ids below it, and none of what the client missed.
    if (lastEventId >= this.store.events.floor()) {
      throw new A2AError(
        "InvalidRequest",
        `Last-Event-ID ${lastEventId} is past the last event sent; subscribe without it for the task as it is now`,
        {},
        [{ field: "Last-Event-ID", description: "past the last event sent" }],
      );
    }
    return this.streams.open(taskId, format, { snapshot: false, afterSeq: lastEventId });
  }
}
