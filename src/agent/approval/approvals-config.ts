import type { ApprovalSettings } from "./approval-round";
import { DEFAULT_APPROVAL_TIMEOUT_MS } from "./held-calls";

/** The agent's `approvals` option: how held tool calls wait (see docs/guides/approvals.md). */
export interface ApprovalsConfig {
  /** How long a held call waits for its decision, unless its tool says. Default 24 hours. */
  timeoutMs?: number;
  /** What a call's expiry does: reject it (the model is told) or fail the task. Default reject. */
  onTimeout?: "reject" | "fail";
  /** Offer the model the built-in `ask_user` tool, to ask the user a question. Default false. */
  askUser?: boolean;
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
  return { timeoutMs, onTimeout, askUser: config.askUser ?? false };
}
