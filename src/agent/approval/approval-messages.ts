/**
 * The approval request a task sends with `input-required`, and reading the client's answer:
 * one decision data part per held call, or plain text (a rejection, or a question's answer).
 * A client's answer is hostile input: anything short of a complete, valid set of decisions
 * is refused with InvalidParams naming the field, before anything is written.
 */
import * as z from "zod";
import { A2AError } from "../../protocol/errors";
import type { JsonObject, JsonValue } from "../../protocol/json";
import type { Message } from "../../protocol/message";
import { type Part, Parts } from "../../protocol/part";
import type { Tools } from "../tool";
import {
  DECISION_KIND,
  type HeldCall,
  type HeldDecision,
  MAX_HELD_ARGUMENT_CHARS,
  MAX_HELD_TEXT_CHARS,
  REQUEST_KIND,
} from "./held-calls";

/** The parts of a request for decisions: a data part a client can act on, and text. */
export function requestParts(calls: readonly Omit<HeldCall, "decision">[]): Part[] {
  const asked = calls.filter((c) => c.kind !== "auto");
  const data: JsonObject = {
    kind: REQUEST_KIND,
    calls: asked.map((c) => {
      const out: JsonObject = {
        callId: c.callId,
        tool: c.tool,
        arguments: parseObject(c.arguments) ?? {},
        reason: c.reason,
        type: c.kind,
      };
      if (c.choices) out.choices = c.choices;
      if (c.deadline !== null) out.deadline = new Date(c.deadline).toISOString();
      return out;
    }),
    waiting: calls.filter((c) => c.kind === "auto").map((c) => c.callId),
  };
  const relay = calls[0]?.relay;
  if (relay) data.relayed = { agent: relay.agent, taskId: relay.taskId };
  const lines = asked.map((c) =>
    c.kind === "question"
      ? `Question: ${c.reason}${c.choices ? ` (choices: ${c.choices.join(", ")})` : ""}`
      : `Approval needed to run ${c.tool}: ${c.reason}`,
  );
  const how = `Answer with one ${DECISION_KIND} data part per call (decision "approve" or "reject"; "answer" for a question), or with text: text rejects every approval with it as the reason and answers every question.`;
  const from = relay ? [`The agent ${relay.agent} asks (relayed):`] : [];
  return [Parts.text([...from, ...lines, how].join("\n")), Parts.data(data)];
}

const Decision = z
  .object({
    kind: z.literal(DECISION_KIND),
    callId: z.string().min(1).max(200),
    decision: z.enum(["approve", "reject", "answer"]),
    reason: z.string().max(MAX_HELD_TEXT_CHARS).optional(),
    answer: z.string().max(MAX_HELD_TEXT_CHARS).optional(),
    arguments: z.record(z.string(), z.unknown()).optional(),
  })
  .strict();

const invalid = (field: string, description: string) =>
  new A2AError("InvalidParams", `Invalid decision: ${field}: ${description}`, {}, [
    { field, description },
  ]);

/**
 * The decisions a message carries for a task's pending calls, checked against them: each
 * pending call decided once, no unknown call, edited arguments valid for the tool's schema
 * and within size. Throws InvalidParams naming the field; returns one decision per call.
 */
export function readDecisions(
  message: Message,
  pending: readonly HeldCall[],
  tools: Tools,
  by: string,
): Map<string, HeldDecision> {
  const at = Date.now();
  const base = { by, at, messageId: message.messageId };
  const byId = new Map(pending.map((c) => [c.callId, c]));
  const decided = new Map<string, HeldDecision>();
  const marked = message.parts.flatMap((part, index) =>
    part.type === "data" && isDecisionShaped(part.content) ? [{ part, index }] : [],
  );
  if (marked.length === 0) {
    const text = message.parts
      .flatMap((p) => (p.type === "text" && typeof p.content === "string" ? [p.content] : []))
      .join("\n")
      .trim();
    if (!text) {
      throw invalid("message.parts", `expected one ${DECISION_KIND} data part per pending call`);
    }
    const reason = text.slice(0, MAX_HELD_TEXT_CHARS);
    for (const call of pending) {
      if (call.kind === "question" && call.choices && !call.choices.includes(reason)) {
        throw invalid("message.parts", `the answer to ${call.callId} must be one of its choices`);
      }
      const verdict = call.kind === "question" ? "answer" : "reject";
      decided.set(call.callId, { ...base, verdict, arguments: null, reason });
    }
    return decided;
  }
  for (const { part, index } of marked) {
    const field = `message.parts[${index}].data`;
    const parsed = Decision.safeParse(part.content);
    if (!parsed.success) {
      const issue = parsed.error.issues[0] ?? { path: [], message: "invalid" };
      const keys = (issue as { keys?: string[] }).keys;
      const path = [...issue.path.map(String), ...(keys?.length ? [keys[0]] : [])];
      throw invalid([field, ...path].join("."), keys?.length ? "unknown field" : issue.message);
    }
    const d = parsed.data;
    const call = byId.get(d.callId);
    if (!call) throw invalid(`${field}.callId`, `no pending call ${d.callId} on this task`);
    if (decided.has(d.callId)) throw invalid(`${field}.callId`, `${d.callId} is decided twice`);
    decided.set(d.callId, decide(call, d, field, tools, base));
  }
  const missing = pending.filter((c) => !decided.has(c.callId)).map((c) => c.callId);
  if (missing.length) {
    throw invalid("message.parts", `no decision for pending call(s) ${missing.join(", ")}`);
  }
  return decided;
}

function decide(
  call: HeldCall,
  d: z.output<typeof Decision>,
  field: string,
  tools: Tools,
  base: Pick<HeldDecision, "by" | "at" | "messageId">,
): HeldDecision {
  if (call.kind === "question") {
    if (d.decision === "approve") throw invalid(`${field}.decision`, "a question is answered");
    if (d.decision === "reject") {
      return { ...base, verdict: "reject", arguments: null, reason: d.reason ?? null };
    }
    const answer = d.answer ?? d.reason;
    if (answer === undefined) throw invalid(`${field}.answer`, "required to answer a question");
    if (call.choices && !call.choices.includes(answer)) {
      throw invalid(`${field}.answer`, `must be one of: ${call.choices.join(", ")}`);
    }
    return { ...base, verdict: "answer", arguments: null, reason: answer };
  }
  if (d.decision === "answer") throw invalid(`${field}.decision`, "must be approve or reject");
  if (d.decision === "reject") {
    if (d.arguments) throw invalid(`${field}.arguments`, "only an approval edits arguments");
    return { ...base, verdict: "reject", arguments: null, reason: d.reason ?? null };
  }
  let edited: string | null = null;
  if (d.arguments) {
    edited = JSON.stringify(d.arguments);
    if (edited.length > MAX_HELD_ARGUMENT_CHARS) {
      throw invalid(`${field}.arguments`, `at most ${MAX_HELD_ARGUMENT_CHARS} characters of JSON`);
    }
    // A handler's action has no schema: its edited arguments are only size-checked; a
    // relayed call's tool is the child's, which checks them when the decision reaches it.
    const tool =
      call.origin === "model" && !call.relay && Object.hasOwn(tools, call.tool)
        ? tools[call.tool]
        : undefined;
    const checked = tool?.input.safeParse(d.arguments);
    if (checked && !checked.success) {
      const issue = checked.error.issues[0] ?? { path: [], message: "invalid" };
      throw invalid([`${field}.arguments`, ...issue.path.map(String)].join("."), issue.message);
    }
  }
  return { ...base, verdict: "approve", arguments: edited, reason: d.reason ?? null };
}

function isDecisionShaped(content: JsonValue): boolean {
  return (
    typeof content === "object" &&
    content !== null &&
    !Array.isArray(content) &&
    content.kind === DECISION_KIND
  );
}

/** A JSON object from its text, or null. */
export function parseObject(text: string): JsonObject | null {
  try {
    const value = JSON.parse(text) as unknown;
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? (value as JsonObject)
      : null;
  } catch {
    return null;
  }
}
