/**
 * A chat front end's answer to an approval request: `POST /chat` with
 * `{"taskId", "decisions": [{callId, decision, reason?, arguments?, answer?}],
 * "messageId"?}` becomes the ordinary A2A decision message to that task (one
 * `edgelink.approval.decision` data part per decision), so the task checks it exactly as
 * it checks one sent over A2A. Every field is checked here first, named as the client
 * sent it; the task's own refusals are renamed to these fields too.
 */
import { MAX_HELD_CALLS } from "../../agent/approval/held-calls";
import { DECISION_KIND } from "../../protocol/approval";
import { A2AError } from "../../protocol/errors";
import { newId } from "../../protocol/json";
import { clientIdProblem, isTaskIdString } from "../../protocol/limits";

const FIELDS = new Set(["callId", "decision", "reason", "arguments", "answer"]);
const VERDICTS = new Set(["approve", "reject", "answer"]);

/** Whether a chat body is a decision (it has `decisions`) rather than a message. */
export function isChatDecision(body: unknown): boolean {
  return typeof body === "object" && body !== null && !Array.isArray(body) && "decisions" in body;
}

/**
 * The A2A message (v1 wire form) a chat decision body stands for; a bad field is a 400
 * naming it (`sessionId` is left to the message's own check). The task's pending calls are
 * checked by the task itself.
 */
export function chatDecisionMessage(body: Record<string, unknown>): Record<string, unknown> {
  for (const key of Object.keys(body)) {
    if (!["taskId", "decisions", "messageId", "sessionId"].includes(key)) {
      throw invalid(key, "is not a field of a decision body (taskId, decisions, messageId)");
    }
  }
  const { taskId, decisions, messageId } = body;
  if (typeof taskId !== "string" || taskId === "") {
    throw invalid("taskId", "must name the task that waits for the decisions");
  }
  if (!isTaskIdString(taskId)) {
    throw invalid("taskId", "is no task id this agent issues (too long, or unprintable)");
  }
  if (messageId !== undefined) {
    const problem = typeof messageId === "string" ? clientIdProblem(messageId) : "must be a string";
    if (problem !== null) throw invalid("messageId", problem);
  }
  if (!Array.isArray(decisions) || decisions.length === 0) {
    throw invalid("decisions", "must be a non-empty array, one decision per pending call");
  }
  if (decisions.length > MAX_HELD_CALLS) {
    throw invalid("decisions", `at most ${MAX_HELD_CALLS} decisions (a task holds no more calls)`);
  }
  const parts = decisions.map((d: unknown, i) => {
    const field = `decisions[${i}]`;
    if (typeof d !== "object" || d === null || Array.isArray(d)) {
      throw invalid(field, "must be an object {callId, decision, reason?, arguments?, answer?}");
    }
    const unknown = Object.keys(d).find((k) => !FIELDS.has(k));
    if (unknown !== undefined) throw invalid(`${field}.${unknown}`, "unknown field");
    const { callId, decision } = d as { callId?: unknown; decision?: unknown };
    if (typeof callId !== "string" || callId === "") {
      throw invalid(`${field}.callId`, "must name a pending call");
    }
    if (typeof decision !== "string" || !VERDICTS.has(decision)) {
      throw invalid(`${field}.decision`, "must be approve, reject or answer");
    }
    return { data: { ...d, kind: DECISION_KIND } };
  });
  return { messageId: messageId ?? newId(), role: "ROLE_USER", taskId, parts };
}

/**
 * The task's refusal of a decision, with its field renamed from the A2A message's
 * (`message.parts[2].data.arguments.amount`) to the chat body's (`decisions[2].arguments.amount`).
 */
export function asChatDecisionError(error: A2AError): A2AError {
  const rename = (field: string) =>
    field
      .replace(/^message\.parts\[(\d+)\]\.data/, "decisions[$1]")
      .replace(/^message\.parts$/, "decisions");
  if (!error.fieldViolations.some((v) => rename(v.field) !== v.field)) return error;
  const violations = error.fieldViolations.map((v) => ({ ...v, field: rename(v.field) }));
  const message = error.message.replace(/message\.parts(\[\d+\]\.data)?/g, (m) => rename(m));
  return new A2AError(error.kind, message, error.metadata, violations);
}

function invalid(field: string, description: string): A2AError {
  return new A2AError("InvalidParams", `${field} ${description}`, {}, [{ field, description }]);
}
