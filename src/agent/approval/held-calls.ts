/**
 * Calls held for a person: the shapes a conversation stores for a tool call that waits for
 * approval (or a question that waits for an answer), the decision taken on it, and the
 * desk a run asks and reads them through. The conversation object implements the desk;
 * the model loop and the handler context only use it.
 */
import type { Part } from "../../protocol/part";
import type { ApprovalCaller } from "../access/approval-options";

/** Why a call is held: it needs approval, it asks a question, or it waits with them. */
export type HeldKind = "approval" | "question" | "auto";

/** What was decided: approved, rejected, answered, or no decision before the deadline. */
export type Verdict = "approve" | "reject" | "answer" | "expired";

/** Who held the call: a model turn (consumed when the turn goes on) or a handler (kept). */
export type HeldOrigin = "model" | "handler";

/** The decision taken on a held call. */
export interface HeldDecision {
  verdict: Verdict;
  /** Edited arguments (JSON text) of an approval, or null to keep the asked ones. */
  arguments: string | null;
  /** A rejection's reason, or a question's answer. */
  reason: string | null;
  /** The principal that decided ("" when the agent has no auth; "deadline" on expiry). */
  by: string;
  at: number;
  /** The A2A message that carried it (null on expiry). */
  messageId: string | null;
}

/** Where a relayed call came from: an agent called as a tool that asked for input. */
export interface RelayedFrom {
  /** The agent tool's name (the parent's name for the child). */
  agent: string;
  /** The parent's call of that tool, whose result waits on the child. */
  callId: string;
  /** The child's task. */
  taskId: string;
  /** The child asked in words (no request data part): its answer goes back as text. */
  plain: boolean;
}

/** One held call, as stored. */
export interface HeldCall {
  callId: string;
  /** The tool's name (a handler's action name; `ask_user` for a question). */
  tool: string;
  /** The call's arguments, JSON text. */
  arguments: string;
  kind: HeldKind;
  origin: HeldOrigin;
  /** Why approval is needed, or the question asked; null for a call waiting with them. */
  reason: string | null;
  /** A question's choices, when it offered some. */
  choices: string[] | null;
  /** When the call expires unanswered (epoch ms), or null for a call waiting with them. */
  deadline: number | null;
  /** What expiry does: reject the call, or fail the task. */
  onTimeout: "reject" | "fail";
  decision: HeldDecision | null;
  /** Set when the call is a delegated agent's, relayed to this task's caller. */
  relay?: RelayedFrom | null;
}

/** Where a run stores and reads its held calls (the conversation object's rows). */
export interface ApprovalDesk {
  readonly caller: ApprovalCaller;
  /** The agent's deadline and expiry settings (its `approvals` option). */
  readonly settings: { timeoutMs: number; onTimeout: "reject" | "fail" };
  /** The task's held calls of this origin, in call order, decided or not. */
  held(origin: HeldOrigin): HeldCall[];
  /**
   * Stores calls and ends the run waiting on a person (`input-required`) with `message`,
   * in one transaction; the earliest deadline wakes the object's alarm.
   */
  hold(calls: readonly Omit<HeldCall, "decision">[], message: Part[]): void;
  /** A model turn's held calls are answered in its history: their rows go. */
  release(callIds: readonly string[]): void;
}

export { DECISION_KIND, REQUEST_KIND } from "../../protocol/approval";
/** The task metadata key, and request field, of the id an approver answers the task by. */
export const APPROVER_TASK_ID = "edgelink.approverTaskId";

/** The built-in tool's name (the `askUser` option) that asks the user a question. */
export const ASK_USER_TOOL = "ask_user";

/** Most calls one task may hold at once; calls past it are rejected without asking. */
export const MAX_HELD_CALLS = 16;
/** Largest arguments (JSON characters) a held call may have, asked or edited. */
export const MAX_HELD_ARGUMENT_CHARS = 16_384;
/** Longest reason, question, answer or choice kept (characters). */
export const MAX_HELD_TEXT_CHARS = 2_000;
