/**
 * What a conversation object lets an approver do with its owner's task (the Worker has
 * checked the approver rule and routed by the approver's id): see the pending request,
 * and answer it with a decision message. Nothing else: no history, no artifacts, no
 * webhook, no cancel, and once nothing waits for an approver the task is not found.
 */
import type { Message } from "../protocol/message";
import type { Task } from "../protocol/task";
import type { Admission } from "./admission";
import type { Scope } from "./context-identity";
import { taskNotFound } from "./task-rpc";
import type { ApprovalRows } from "./tasks/approval-rows";
import type { TaskStore } from "./tasks/task-store";

/** The object's parts an approver's calls use. */
export interface ApproverHost<Env> {
  readonly store: TaskStore;
  readonly approvals: ApprovalRows;
  readonly admission: Admission<Env>;
  vacant(): boolean;
  read(taskId: string, options: { historyLength: number }): Task;
  waitUntil(work: Promise<unknown>): void;
}

export class ApproverDesk<Env> {
  constructor(private readonly host: ApproverHost<Env>) {}

  /** Whether the task waits for approvals only (a question is its owner's to answer). */
  private awaitsApprover(taskId: string): boolean {
    if (this.host.store.state(taskId) !== "input-required") return false;
    const pending = this.host.approvals.pending(taskId);
    return pending.length > 0 && pending.every((c) => c.kind === "approval");
  }

  /** The task as an approver sees it: its id for them, its state and the pending request. */
  view(taskId: string, approverId: string): Task {
    if (this.host.vacant() || !this.awaitsApprover(taskId)) throw taskNotFound(approverId);
    return bare(this.host.read(taskId, { historyLength: 0 }), approverId, true);
  }

  /**
   * Admits an approver's decision message to the task (checked whole by admission, as the
   * owner's), and starts the resumed turn without waiting for it: the approver's answer is
   * the task's state, never its outcome. A retry of the same message gets the same answer.
   */
  decide(scope: Scope, message: Message, approverId: string): Task {
    const taskId = message.taskId ?? "";
    const retried = this.host.admission.retryOf(message);
    if (retried !== taskId) {
      if (this.host.vacant() || !this.awaitsApprover(taskId)) throw taskNotFound(approverId);
      const { run } = this.host.admission.admit(scope, message);
      if (run) this.host.waitUntil(run);
    }
    return bare(this.host.read(taskId, { historyLength: 0 }), approverId, false);
  }
}

/** A task stripped to what an approver may see; with `request`, the status message too. */
function bare(task: Task, approverId: string, request: boolean): Task {
  return {
    id: approverId,
    contextId: task.contextId,
    status: {
      state: task.status.state,
      // The request names the task by the approver's id: the owner's id is not theirs.
      message:
        request && task.status.message ? { ...task.status.message, taskId: approverId } : null,
      timestamp: task.status.timestamp,
    },
    history: [],
    artifacts: [],
    metadata: {},
    stateHistory: [],
    createdAt: task.createdAt,
    flowState: {},
  };
}
