/**
 * Answering a task that waits for a person: the calls it holds, read from its status, and
 * the parts of a message that decides them (approve, reject, approve with edited
 * arguments, answer a question).
 */
import {
  type ApprovalDecision,
  DECISION_KIND,
  type PendingCall,
  REQUEST_KIND,
} from "../protocol/approval";
import type { JsonObject } from "../protocol/json";
import { type Part, Parts } from "../protocol/part";
import type { Task } from "../protocol/task";

/**
 * The calls a task waits on for a decision: empty unless it is `input-required` with an
 * approval request in its status message.
 * @example
 * const result = await agent.send("Refund order 7");
 * if (result.kind === "task") for (const call of pendingCalls(result.task)) console.log(call.tool, call.reason);
 */
export function pendingCalls(task: Task): PendingCall[] {
  if (task.status.state !== "input-required") return [];
  for (const part of task.status.message?.parts ?? []) {
    const content = part.type === "data" ? part.content : null;
    if (
      content &&
      typeof content === "object" &&
      !Array.isArray(content) &&
      content.kind === REQUEST_KIND &&
      Array.isArray(content.calls)
    ) {
      return content.calls as unknown as PendingCall[];
    }
  }
  return [];
}

/**
 * The parts of a message that decides a task's pending calls: one data part per call.
 * Send them to the task (`{ taskId }`); every pending call needs a decision.
 * @example
 * await agent.send(decisionParts([approve(call.callId)]), { taskId: task.id });
 */
export function decisionParts(decisions: readonly ApprovalDecision[]): Part[] {
  return decisions.map((d) => Parts.data({ kind: DECISION_KIND, ...d } as JsonObject));
}

/**
 * Approves a call, optionally with edited arguments (checked against the tool's schema).
 * @example
 * decisionParts([approve("call_1", { amount: 90 })]);
 */
export function approve(callId: string, editedArguments?: JsonObject): ApprovalDecision {
  return editedArguments
    ? { callId, decision: "approve", arguments: editedArguments }
    : { callId, decision: "approve" };
}

/**
 * Rejects a call; the model is told it was rejected and why.
 * @example
 * decisionParts([reject("call_1", "Too large")]);
 */
export function reject(callId: string, reason?: string): ApprovalDecision {
  return reason === undefined
    ? { callId, decision: "reject" }
    : { callId, decision: "reject", reason };
}

/**
 * Answers a question (`ask_user`, or a handler's `ctx.ask`).
 * @example
 * decisionParts([answer("call_2", "France")]);
 */
export function answer(callId: string, text: string): ApprovalDecision {
  return { callId, decision: "answer", answer: text };
}
