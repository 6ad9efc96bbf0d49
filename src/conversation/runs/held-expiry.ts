/**
 * The approval deadline, enforced by the object's alarm: a held call still undecided at
 * its deadline is rejected as expired (its task resumes once nothing else waits) or, when
 * the agent says so, fails its task. Runs on the alarm, which survives restarts.
 */
import { decisionRecord } from "../../agent/approval/approval-round";
import type { HeldDecision } from "../../agent/approval/held-calls";
import type { ApprovalRows } from "../tasks/approval-rows";
import type { TaskSteps } from "../tasks/task-steps";
import type { TaskStore } from "../tasks/task-store";
import type { HandlerRuns } from "./handler-runs";

/** What a task failed by an expired approval says. */
export const EXPIRED_REASON = "No decision was made before the approval deadline";

export class HeldExpiry<Env> {
  constructor(
    private readonly rows: ApprovalRows,
    private readonly store: TaskStore,
    private readonly runs: HandlerRuns<Env>,
    private readonly steps: TaskSteps,
    private readonly waitUntil: (work: Promise<unknown>) => void,
  ) {}

  /** Expires what is due; answers the next deadline still pending, or null. */
  expire(now = Date.now()): number | null {
    for (const taskId of this.rows.due(now)) {
      if (this.runs.has(taskId)) continue;
      if (this.store.state(taskId) !== "input-required") {
        // The task ended another way (canceled): its calls wait for nothing.
        this.rows.clear(taskId);
        continue;
      }
      const pending = this.rows.pending(taskId);
      const due = pending.filter((c) => c.deadline !== null && c.deadline <= now);
      if (due.some((c) => c.onTimeout === "fail")) {
        this.runs.fail(taskId, EXPIRED_REASON);
        this.rows.clear(taskId);
        continue;
      }
      const expired: HeldDecision = {
        verdict: "expired",
        arguments: null,
        reason: null,
        by: "deadline",
        at: now,
        messageId: null,
      };
      this.store.atomic(() => {
        this.rows.decide(taskId, new Map(due.map((c) => [c.callId, expired])));
        this.steps.noteDecisions(
          taskId,
          due.map((c) => decisionRecord({ ...c, decision: expired })).filter((r) => r !== null),
        );
      });
      if (due.length < pending.length) continue;
      const message = this.store.lastUserMessage(taskId);
      const resumed = message ? this.runs.start(taskId, message) : null;
      if (resumed) this.waitUntil(resumed);
      else if (!message) this.runs.fail(taskId, EXPIRED_REASON);
    }
    return this.rows.nextDeadline();
  }
}
