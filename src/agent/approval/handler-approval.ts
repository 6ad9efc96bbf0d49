/**
 * The handler's side of held calls: `ctx.approval()` and `ctx.ask()`. The first call with
 * an id asks (the task waits `input-required`; the handler returns); when the task resumes
 * the handler runs again and the same call answers the decision, read back from storage.
 */
import type {
  ApprovalAnswer,
  ApprovalRequest,
  QuestionAnswer,
  QuestionRequest,
} from "../access/approval-options";
import { parseObject, requestParts } from "./approval-messages";
import {
  type ApprovalDesk,
  type HeldCall,
  MAX_HELD_ARGUMENT_CHARS,
  MAX_HELD_CALLS,
  MAX_HELD_TEXT_CHARS,
} from "./held-calls";

const MAX_ID_CHARS = 200;

/** The decision on a request, or undefined once asked (the task now waits). */
export function handlerApproval(
  desk: ApprovalDesk,
  request: ApprovalRequest,
): ApprovalAnswer | undefined {
  const found = ask(desk, request.id, request.timeoutMs, () => ({
    tool: request.action,
    arguments: JSON.stringify(request.arguments ?? {}),
    kind: "approval",
    reason: request.reason,
    choices: null,
  }));
  const d = found?.decision;
  if (!found || !d) return undefined;
  return {
    decision: d.verdict === "approve" ? "approve" : d.verdict === "expired" ? "expired" : "reject",
    arguments: parseObject(d.arguments ?? found.arguments) ?? {},
    reason: d.reason,
    by: d.by,
  };
}

/** The answer to a question, or undefined once asked (the task now waits). */
export function handlerQuestion(
  desk: ApprovalDesk,
  request: QuestionRequest,
): QuestionAnswer | undefined {
  const found = ask(desk, request.id, request.timeoutMs, () => ({
    tool: "ask_user",
    arguments: JSON.stringify({ question: request.question }),
    kind: "question",
    reason: request.question,
    choices: request.choices?.length ? request.choices : null,
  }));
  const d = found?.decision;
  if (!found || !d) return undefined;
  if (d.verdict === "answer") return { answered: true, answer: d.reason ?? "", by: d.by };
  return {
    answered: false,
    decision: d.verdict === "expired" ? "expired" : "reject",
    reason: d.reason,
  };
}

function ask(
  desk: ApprovalDesk,
  id: string,
  timeoutMs: number | undefined,
  make: () => Pick<HeldCall, "tool" | "arguments" | "kind" | "reason" | "choices">,
): HeldCall | undefined {
  const held = desk.held("handler");
  const found = held.find((c) => c.callId === id);
  if (found) return found;
  if (!id || id.length > MAX_ID_CHARS)
    throw new TypeError(`An approval id has 1 to ${MAX_ID_CHARS} characters`);
  if (held.length >= 4 * MAX_HELD_CALLS) {
    throw new Error(`A task may ask at most ${4 * MAX_HELD_CALLS} approvals and questions`);
  }
  const call: HeldCall = {
    ...make(),
    callId: id,
    origin: "handler",
    deadline: Date.now() + (timeoutMs ?? desk.settings.timeoutMs),
    onTimeout: desk.settings.onTimeout,
    decision: null,
  };
  if (call.arguments.length > MAX_HELD_ARGUMENT_CHARS) {
    throw new TypeError(`Approval arguments over ${MAX_HELD_ARGUMENT_CHARS} characters`);
  }
  if ((call.reason ?? "").length > MAX_HELD_TEXT_CHARS) {
    throw new TypeError(`An approval's reason or question over ${MAX_HELD_TEXT_CHARS} characters`);
  }
  desk.hold([call], requestParts([call]));
  return undefined;
}
