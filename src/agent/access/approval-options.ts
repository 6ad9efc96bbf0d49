import type { JsonObject } from "../../protocol/json";
import { type ApproversRule, checkApprovers } from "./approvers";

// What the agent definition and a tool declare about approvals; the machinery that holds and
// resumes calls is in approval/ and builds on these.

/** Who a held call's decision is checked against: the task's tenant and owner. */
export interface ApprovalCaller {
  tenant: string;
  /** The task's owner ("" when the agent has no auth). */
  owner: string;
}

/** The agent's `approvals` option with its defaults applied. */
export interface ApprovalSettings {
  timeoutMs: number;
  onTimeout: "reject" | "fail";
  askUser: boolean;
  /** Who else may decide held approvals; null: the task's owner alone. */
  approvers: ApproversRule | null;
}

/** How long a held call waits for its decision when neither the tool nor the agent says. */
export const DEFAULT_APPROVAL_TIMEOUT_MS = 24 * 60 * 60 * 1000;

/** The agent's `approvals` option: how held tool calls wait (see docs/guides/approvals.md). */
export interface ApprovalsConfig {
  /** How long a held call waits for its decision, unless its tool says. Default 24 hours. */
  timeoutMs?: number;
  /** What a call's expiry does: reject it (the model is told) or fail the task. Default reject. */
  onTimeout?: "reject" | "fail";
  /** Offer the model the built-in `ask_user` tool, to ask the user a question. Default false. */
  askUser?: boolean;
  /**
   * Principals besides the task's owner who may approve or reject its held calls (by
   * scope, claim, API key or a function). Off by default; needs `auth`.
   */
  approvers?: ApproversRule;
}

export function resolveApprovals(config: ApprovalsConfig = {}): ApprovalSettings {
  const timeoutMs = config.timeoutMs ?? DEFAULT_APPROVAL_TIMEOUT_MS;
  if (!Number.isSafeInteger(timeoutMs) || timeoutMs <= 0) {
    throw new TypeError("approvals.timeoutMs must be a positive whole number of milliseconds");
  }
  const onTimeout = config.onTimeout ?? "reject";
  if (onTimeout !== "reject" && onTimeout !== "fail") {
    throw new TypeError('approvals.onTimeout must be "reject" or "fail"');
  }
  const approvers = config.approvers === undefined ? null : checkApprovers(config.approvers);
  return { timeoutMs, onTimeout, askUser: config.askUser ?? false, approvers };
}

/** What a handler asks a person to approve. */
export interface ApprovalRequest {
  /** Names this request within the task: the same id answers its decision on resume. */
  id: string;
  /** What would be done (shown to the person), e.g. "refund". */
  action: string;
  /** Its arguments; the person may approve with edited ones. */
  arguments?: JsonObject;
  /** Why approval is needed. */
  reason: string;
  /** How long it waits, over the agent's `approvals.timeoutMs`. */
  timeoutMs?: number;
}

/** A person's decision on an `ApprovalRequest`. */
export interface ApprovalAnswer {
  decision: "approve" | "reject" | "expired";
  /** The arguments to act on: the edited ones when the person changed them. */
  arguments: JsonObject;
  reason: string | null;
  /** Who decided ("deadline" on expiry). */
  by: string;
}

/** A question a handler asks the user. */
export interface QuestionRequest {
  id: string;
  question: string;
  /** When given, the answer is one of these. */
  choices?: string[];
  timeoutMs?: number;
}

/** The user's answer, or why there is none. */
export type QuestionAnswer =
  | { answered: true; answer: string; by: string }
  | { answered: false; decision: "reject" | "expired"; reason: string | null };
