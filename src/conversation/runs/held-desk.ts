/**
 * A run's desk for calls held for a person (`ApprovalDesk`): held calls stored with the
 * task's move to `input-required` in one transaction, read back when the task resumes,
 * released once answered; each hold wakes the alarm at its earliest deadline.
 */

import type { ApprovalCaller } from "../../agent/access/approval-options";
import type { ApprovalDesk, HeldCall, HeldOrigin } from "../../agent/approval/held-calls";
import { REQUEST_KIND } from "../../agent/approval/held-calls";
import type { Part } from "../../protocol/part";
import type { ApprovalRows } from "../tasks/approval-rows";
import type { TaskStore } from "../tasks/task-store";

export class HeldDesk implements ApprovalDesk {
  constructor(
    private readonly taskId: string,
    private readonly rows: ApprovalRows,
    private readonly store: TaskStore,
    /** Ends the run `input-required` with the request (the run's `requestInput`). */
    private readonly requestInput: (message: Part[]) => void,
    readonly caller: ApprovalCaller,
    readonly settings: ApprovalDesk["settings"],
    /** Asks the object's alarm to ring at a deadline. */
    private readonly wake: (at: number) => void,
    /** The id an approver answers this task by, when the agent names approvers. */
    private readonly approverTaskId: string | null = null,
  ) {}

  held(origin: HeldOrigin): HeldCall[] {
    return this.rows.held(this.taskId, origin);
  }

  hold(calls: readonly HeldCall[], message: Part[]): void {
    if (this.store.state(this.taskId) === "input-required") {
      throw new Error("A task asks one thing at a time: return once it asked for a decision");
    }
    const parts = this.approverTaskId ? withApproverId(message, this.approverTaskId) : message;
    this.store.atomic(() => {
      this.rows.insert(this.taskId, calls);
      this.requestInput(parts);
    });
    const deadlines = calls.flatMap((c) =>
      c.decision === null && c.deadline !== null ? [c.deadline] : [],
    );
    if (deadlines.length) this.wake(Math.min(...deadlines));
  }

  release(callIds: readonly string[]): void {
    this.rows.release(this.taskId, callIds);
  }
}

/** The request's data part also names the id an approver answers by ("how to answer"). */
function withApproverId(message: Part[], approverTaskId: string): Part[] {
  return message.map((part) => {
    const content = part.type === "data" ? part.content : null;
    if (!content || typeof content !== "object" || Array.isArray(content)) return part;
    if (content.kind !== REQUEST_KIND) return part;
    return { ...part, content: { ...content, approverTaskId } };
  });
}
