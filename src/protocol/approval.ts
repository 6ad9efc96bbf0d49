/**
 * The wire shapes of approvals: the data part a task sends with `input-required` when
 * calls wait for a person, and the data part a client answers each call with. Any A2A
 * client can read and write them (see docs/guides/approvals.md).
 */
import type { JsonObject } from "./json";

/** The data part kind of a request for decisions, sent with `input-required`. */
export const REQUEST_KIND = "edgelink.approval.request";
/** The data part kind of one decision, sent back by the client. */
export const DECISION_KIND = "edgelink.approval.decision";

/** One call a task waits on, as its request lists it. */
export interface PendingCall {
  callId: string;
  /** The tool (or a handler's action; `ask_user` for a question). */
  tool: string;
  arguments: JsonObject;
  /** Why approval is needed, or the question. */
  reason: string | null;
  type: "approval" | "question";
  /** A question's choices, when it offers some. */
  choices?: string[];
  /** When the call expires undecided (ISO 8601). */
  deadline?: string;
}

/** One decision on a pending call, as a client sends it. */
export interface ApprovalDecision {
  callId: string;
  decision: "approve" | "reject" | "answer";
  /** Why it was rejected (or approved). */
  reason?: string;
  /** An approval's edited arguments, checked against the tool's schema. */
  arguments?: JsonObject;
  /** A question's answer. */
  answer?: string;
}
