/**
 * The runs of a conversation's agent handler: starting one on a task, ending its task with
 * the handler's answer or a failure, cutting it off on cancel, resuming or failing the
 * tasks a restart interrupted, and publishing the events they log.
 */

import type { ApprovalCaller } from "../../agent/access/approval-options";
import { APPROVER_TASK_ID } from "../../agent/approval/held-calls";
import type { Agent } from "../../agent/definition";
import type { MemoryTurnScope } from "../../agent/memory-source";
import { runModelAgent } from "../../agent/model/model-execution";
import { runDefaultExecution } from "../../agent/tools/default-execution";
import { A2AError, errorReference, UserFacingError } from "../../protocol/errors";
import type { LoggedEvent } from "../../protocol/events";
import { flatText, newId, nowIso } from "../../protocol/json";
import type { Message } from "../../protocol/message";
import { Parts } from "../../protocol/part";
import type { Task } from "../../protocol/task";
import { isTerminal } from "../../protocol/task-state";
import type { TraceCarrier } from "../../telemetry";
import { type LogFields, logEvent } from "../../telemetry/log";
import { inContext } from "../../telemetry/otel";
import type { ApprovalRows } from "../tasks/approval-rows";
import type { TaskStore } from "../tasks/task-store";
import type { ChildStore } from "./children";
import type { EventHub } from "./event-hub";
import { HeldDesk } from "./held-desk";
import { endRun, traceRun } from "./run-trace";
import { TaskRun } from "./task-run";

/** Reason recorded on a task whose run was cut off by an object restart. */
export const RESTART_REASON =
  "The agent restarted while this task was running, and the run could not be resumed";

const endsTask = ({ event }: LoggedEvent): boolean =>
  event.kind === "status-update" && isTerminal(event.status.state);

/**
 * What a failed task tells its clients: the message of a UserFacingError or protocol
 * error; for anything else a reference id, with the details logged under it.
 */
export function publicReason(error: unknown, where: LogFields): string {
  if (error instanceof UserFacingError || error instanceof A2AError) {
    return error.message || "The agent's handler failed";
  }
  const reference = errorReference();
  logEvent("error", `edgelink: handler error ${reference}`, { ...where, reference, error });
  return `The agent failed (reference ${reference})`;
}

/** The object's alarm, as a run's end asks it for work (the object's `ObjectAlarm`). */
export interface RunWakeups {
  armRetention(): Promise<void>;
  wakeSoon(at: number, reason: "push" | "approval", what: string): void;
}

export class HandlerRuns<Env> {
  constructor(
    private readonly store: TaskStore,
    private readonly hub: EventHub,
    private readonly alarm: RunWakeups,
    private readonly children: ChildStore,
    private readonly env: Env,
    /** The agent, read at each run (a test may replace it). */
    private readonly agent: () => Agent<Env>,
    /** Keeps the object alive for work the caller does not wait for. */
    private readonly waitUntil: (work: Promise<unknown>) => void,
    /** Where a log line happened: the object's tenant and conversation, and the task. */
    private readonly logIds: (taskId: string | null) => LogFields,
    /** Who a model turn's long-term memory is for (read only when the agent has memory). */
    private readonly memoryScope: () => MemoryTurnScope,
    /** The calls a task holds for a person. */
    private readonly approvals: ApprovalRows,
    /** Whom the conversation's tasks run for (a tool's approval rule sees it). */
    private readonly caller: () => ApprovalCaller,
  ) {}

  /** The runs under way, by task. */
  private readonly running = new Map<string, AbortController>();

  /** Whether a run of this task is under way. */
  has(taskId: string): boolean {
    return this.running.has(taskId);
  }

  /** Interrupts a task's run, if one is under way (the task was canceled). */
  abort(taskId: string, reason: string): void {
    this.running.get(taskId)?.abort(new DOMException(reason || "Task canceled", "AbortError"));
  }

  /**
   * Fans events out to the task's live streams, and wakes the alarm for what they ask:
   * retention when a task finished, push delivery when an event was queued for a webhook.
   */
  publish(taskId: string, events: LoggedEvent[]): void {
    if (events.length) this.hub.emit(taskId, events);
    if (events.some(endsTask)) {
      // A task finished: retention may have work, now or once it is old enough.
      this.alarm
        .armRetention()
        .catch((error) => logEvent("error", "edgelink: could not schedule retention", { error }));
    }
    if (this.store.pushQueued) {
      this.store.pushQueued = false;
      this.alarm.wakeSoon(Date.now(), "push", "schedule push delivery");
    }
  }

  /**
   * Moves an existing task back to working and runs the handler on `message` (see `run`:
   * undefined when the run already ended).
   */
  start(taskId: string, message: Message, trace?: TraceCarrier): Promise<void> | undefined {
    this.publish(taskId, this.store.transition(taskId, "working"));
    return this.run(taskId, message, trace);
  }

  /**
   * Runs the handler on a task already working. Undefined when the run ended before this
   * returns (a handler that answers without awaiting): the caller has nothing to wait for,
   * and a blocking message's answer takes no promise, turn or await of the run's.
   */
  run(taskId: string, message: Message, trace?: TraceCarrier): Promise<void> | undefined {
    const controller = new AbortController();
    this.running.set(taskId, controller);
    const pending = this.execute(taskId, message, controller, trace);
    if (!pending) {
      this.running.delete(taskId);
      return undefined;
    }
    return pending.finally(() => this.running.delete(taskId));
  }

  /** Starts the handler; undefined when its run ended at once (see `run`). */
  private execute(
    taskId: string,
    message: Message,
    controller: AbortController,
    trace?: TraceCarrier,
  ): Promise<void> | undefined {
    const task = this.store.cache.snapshot(taskId);
    if (!task) {
      return Promise.reject(new A2AError("TaskNotFound", `Task ${taskId} not found`, { taskId }));
    }
    const approverTaskId = approverTaskIdOf(task);
    // Made on first use: most runs hold no call for approval, and an instant answer
    // should not pay for the desk's object and closures.
    let desk: HeldDesk | null = null;
    const deskOf = (): HeldDesk =>
      (desk ??= new HeldDesk(
        taskId,
        this.approvals,
        this.store,
        (parts) => run.requestInput(parts),
        this.caller(),
        this.agent().approvals,
        (at) => this.alarm.wakeSoon(at, "approval", "schedule an approval deadline"),
        approverTaskId,
      ));
    const run: TaskRun<Env> = new TaskRun(
      task,
      message,
      controller.signal,
      this.env,
      this.store,
      (id, e) => this.publish(id, e),
      this.children,
      deskOf,
    );
    const traced = traceRun(this.store, run, this.agent() as Agent<unknown>, trace);
    const end = (outcome: RunOutcome) => this.end(taskId, run, controller, traced, outcome);
    let answer: unknown;
    try {
      const agent = this.agent();
      // Active for a context manager too, so instrumented `fetch` calls join the run's span.
      answer = inContext(traced?.ctx, () =>
        agent.handler
          ? agent.handler(run)
          : agent.model
            ? runModelAgent(run, agent, {}, agent.memory ? this.memoryScope() : undefined, deskOf())
            : runDefaultExecution(run, agent),
      );
    } catch (error) {
      return endNow(() => end({ error }));
    }
    if (isThenable(answer)) {
      return Promise.resolve(answer).then(
        (result) => end({ result }),
        (error: unknown) => end({ error }),
      );
    }
    // A handler that answers at once is not awaited: its task ends before `run` returns,
    // inside the caller's transaction when there is one (a new task's admission), so the
    // message is one transaction. Nothing asynchronous ran in between.
    return endNow(() => end({ result: answer }));
  }

  /** The handler's answer (or its failure) ends the task, unless it ended or was canceled. */
  private end(
    taskId: string,
    run: TaskRun<Env>,
    controller: AbortController,
    traced: ReturnType<typeof traceRun>,
    outcome: RunOutcome,
  ): void {
    let failure: unknown;
    try {
      if ("error" in outcome) throw outcome.error;
      const result = outcome.result;
      if (controller.signal.aborted) return;
      const state = this.store.state(taskId);
      if (state === null || isTerminal(state)) return;
      // The handler's answer and the end of the task: one transaction.
      this.store.atomic(() => {
        if (typeof result === "string" || Array.isArray(result)) {
          const parts = typeof result === "string" ? [Parts.text(flatText(result))] : result;
          run.artifact({ name: "result", parts });
        }
        if (state === "working") run.complete();
      });
    } catch (error) {
      failure = error;
      if (controller.signal.aborted) return;
      this.fail(taskId, publicReason(error, this.logIds(taskId)));
    } finally {
      if (traced) endRun(traced, this.store.state(taskId), failure);
    }
  }

  /** Fails a task that is not running (a restart cut its run, or its approval expired). */
  fail(taskId: string, reason: string): void {
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
  recover(): void {
    const orphans = this.store.idsInStates(["submitted", "working"]);
    for (const taskId of orphans) {
      // A task following children is resumed: its delegations re-attach instead of resending.
      const resume = this.agent().resumeOnRestart || this.children.open(taskId).length > 0;
      const message = resume ? this.store.lastUserMessage(taskId) : null;
      const pending = message ? this.start(taskId, message) : null;
      if (pending) this.waitUntil(pending);
      else if (!message) this.fail(taskId, RESTART_REASON);
    }
  }
}

/** What a handler's run came to: its answer, or what it threw or rejected with. */
type RunOutcome = { result: unknown } | { error: unknown };

/**
 * Ends a run that answered at once, as the rest of a run would have ended in an async
 * function: an error of its own end rejects the run's promise (it never throws into the
 * caller's transaction, which commits the task as it stands).
 */
function endNow(end: () => void): Promise<void> | undefined {
  try {
    end();
    return undefined;
  } catch (error) {
    return Promise.reject(error);
  }
}

const isThenable = (value: unknown): value is PromiseLike<unknown> =>
  typeof (value as PromiseLike<unknown> | null)?.then === "function";

/** The id approvers answer a task by, kept in its metadata when it was created. */
function approverTaskIdOf(task: Task): string | null {
  const id = task.metadata?.[APPROVER_TASK_ID];
  return typeof id === "string" ? id : null;
}
