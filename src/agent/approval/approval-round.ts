/**
 * A model turn's tool calls that wait for a person: which calls of a round need approval
 * (the round is then held, every call of it, and the turn ends `input-required`), and,
 * when the task resumes with the decisions, running what was approved and telling the
 * model what was not, so the loop goes on where it stopped.
 */
import type { JsonObject } from "../../protocol/json";
import type { ToolCall } from "../../providers/base/types";
import { traceContextOf } from "../../telemetry";
import { getSpan } from "../../telemetry/otel";
import type { ApprovalCaller, ApprovalSettings } from "../access/approval-options";
import type { RunContext } from "../run-context";
import type { Tools } from "../tool";
import { runToolCalls, type ToolRun, type ToolRunOptions } from "../tools/tool-runner";
import { parseObject, requestParts } from "./approval-messages";
import {
  type ApprovalDesk,
  ASK_USER_TOOL,
  type HeldCall,
  type HeldDecision,
  MAX_HELD_ARGUMENT_CHARS,
  MAX_HELD_CALLS,
  MAX_HELD_TEXT_CHARS,
} from "./held-calls";

const DEFAULT_REASON = "This tool needs approval before it runs";
/** Who "decided" a call refused by a limit, never asked. */
const LIMIT = "limit";

/**
 * The round's calls as held rows when at least one needs approval or asks a question;
 * null when none does (the round runs as usual). Calls that need nothing wait with them;
 * a call past `MAX_HELD_CALLS` or with oversized arguments is rejected without asking.
 */
export function planHold(
  calls: readonly ToolCall[],
  tools: Tools,
  settings: ApprovalSettings,
  caller: ApprovalCaller,
  now = Date.now(),
): HeldCall[] | null {
  let asked = 0;
  const rows = calls.map((call): HeldCall => {
    const need = needOf(call, tools, caller);
    const tool = Object.hasOwn(tools, call.name) ? tools[call.name] : undefined;
    const deadline = need ? now + (tool?.approvalTimeoutMs ?? settings.timeoutMs) : null;
    const row: HeldCall = {
      callId: call.id,
      tool: call.name,
      arguments: call.arguments,
      kind: need?.kind ?? "auto",
      origin: "model",
      reason: need?.reason ?? null,
      choices: need?.choices ?? null,
      deadline,
      onTimeout: settings.onTimeout,
      decision: null,
    };
    if (!need) return row;
    const refusal =
      call.arguments.length > MAX_HELD_ARGUMENT_CHARS
        ? `Not run: arguments over ${MAX_HELD_ARGUMENT_CHARS} characters cannot be held for approval`
        : asked >= MAX_HELD_CALLS
          ? `Not run: at most ${MAX_HELD_CALLS} calls may wait for approval`
          : null;
    if (refusal === null) asked++;
    else {
      row.decision = {
        verdict: "reject",
        arguments: null,
        reason: refusal,
        by: LIMIT,
        at: now,
        messageId: null,
      };
      row.arguments = "{}";
    }
    return row;
  });
  return asked > 0 ? rows : null;
}

/** Whether a call needs a person, and why; null when it runs (or is refused) as usual. */
function needOf(
  call: ToolCall,
  tools: Tools,
  caller: ApprovalCaller,
): { kind: "approval" | "question"; reason: string; choices?: string[] } | null {
  const tool = Object.hasOwn(tools, call.name) ? tools[call.name] : undefined;
  if (!tool || call.input === null) return null;
  const parsed = tool.input.safeParse(call.input);
  // Invalid arguments are refused by the runner: nothing to ask anyone about.
  if (!parsed.success) return null;
  if (call.name === ASK_USER_TOOL && tool.approval === ASK_USER_RULE) {
    const { question, choices } = parsed.data as { question: string; choices?: string[] };
    return { kind: "question", reason: question, ...(choices?.length ? { choices } : {}) };
  }
  const rule = tool.approval;
  if (rule === undefined || rule === false) return null;
  if (rule === true) return { kind: "approval", reason: DEFAULT_REASON };
  let verdict: boolean | string;
  try {
    verdict = rule(parsed.data, caller);
  } catch {
    // A rule that cannot decide asks: safe by default.
    return { kind: "approval", reason: DEFAULT_REASON };
  }
  if (verdict === false) return null;
  const reason = typeof verdict === "string" && verdict ? verdict : DEFAULT_REASON;
  return { kind: "approval", reason: reason.slice(0, MAX_HELD_TEXT_CHARS) };
}

/** The marker of the built-in question tool's rule (see `askUserTool`). */
export const ASK_USER_RULE = (): boolean => true;

/** Holds the round: its calls stored, the task `input-required` with the request. */
export function holdRound(desk: ApprovalDesk, rows: HeldCall[]): void {
  desk.hold(rows, requestParts(rows));
}

/**
 * A task resumed with decisions on a held round: approved calls (and those that waited
 * with them) run, rejected, expired and answered ones get their results, all in call
 * order, recorded in the history; the rows go. False when the task held nothing.
 */
export async function resumeHeld(
  ctx: RunContext<unknown>,
  desk: ApprovalDesk,
  tools: Tools,
  options: ToolRunOptions,
): Promise<boolean> {
  // Calls relayed from a delegated agent are answered by that agent (see TurnRelay).
  const rows = desk.held("model").filter((r) => !r.relay);
  if (rows.length === 0) return false;
  // A round resumed before every call was decided cannot go on: it waits still.
  if (rows.some((r) => r.kind !== "auto" && r.decision === null)) return false;
  const trace = traceContextOf(ctx);
  const span = trace ? getSpan(trace) : undefined;
  const runnable: ToolCall[] = [];
  const settled = new Map<string, ToolRun>();
  for (const row of rows) {
    const d = row.decision;
    if (d && span) span.addEvent("edgelink.approval.decision", decisionAttributes(row, d));
    if (row.kind === "auto" || d?.verdict === "approve") {
      const text = d?.arguments ?? row.arguments;
      runnable.push({ id: row.callId, name: row.tool, arguments: text, input: parseObject(text) });
    } else if (d) {
      settled.set(row.callId, outcome(row, d));
    }
  }
  const ran = runnable.length ? await runToolCalls(runnable, tools, options) : [];
  for (const run of ran) settled.set(run.toolCallId, run);
  const outputs = rows.flatMap((row) => {
    const run = settled.get(row.callId);
    return run
      ? [
          {
            type: "function_call_output" as const,
            name: run.name,
            callId: run.toolCallId,
            output: run.content,
            isError: run.isError,
          },
        ]
      : [];
  });
  ctx.record(outputs);
  desk.release(rows.map((r) => r.callId));
  return true;
}

/** What the model is told about a call a person did not approve (or answered). */
function outcome(row: HeldCall, d: HeldDecision): ToolRun {
  const base = { toolCallId: row.callId, name: row.tool, durationMs: 0, threw: false };
  if (d.verdict === "answer") {
    const answer = d.reason ?? "";
    return { ...base, content: answer, isError: false, value: answer };
  }
  const content =
    d.verdict === "expired"
      ? "Not run: no decision was made before the approval deadline"
      : d.by === LIMIT
        ? (d.reason ?? "Not run")
        : `Rejected by the user${d.reason ? `: ${d.reason}` : ""}. The call was not run.`;
  return { ...base, content, isError: true, value: null };
}

function decisionAttributes(row: HeldCall, d: HeldDecision): Record<string, string | number> {
  const out: Record<string, string | number> = {
    "edgelink.approval.call_id": row.callId,
    "edgelink.approval.tool": row.tool,
    "edgelink.approval.decision": d.verdict,
    "edgelink.approval.by": d.by,
    "edgelink.approval.at": d.at,
  };
  if (d.arguments !== null) out["edgelink.approval.edited"] = 1;
  return out;
}

/** A decision as the task's steps record it: who, when, what, edited arguments. */
export function decisionRecord(row: HeldCall): JsonObject | null {
  const d = row.decision;
  if (!d) return null;
  const out: JsonObject = {
    callId: row.callId,
    tool: row.tool,
    decision: d.verdict,
    by: d.by,
    at: new Date(d.at).toISOString(),
  };
  if (d.reason !== null) out.reason = d.reason;
  if (d.arguments !== null) out.arguments = parseObject(d.arguments);
  return out;
}
