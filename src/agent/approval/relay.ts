/**
 * Relaying a delegated agent's request for input to the parent's caller. When an agent
 * called as a tool ends `input-required` (an approval request, or a plain question), the
 * parent's turn holds the child's calls as its own, marked with where they came from; the
 * caller's decisions on them are sent back to the child as its own decision message, and
 * the tool call goes on following the child to its result. The child's request is another
 * agent's output: it is checked and bounded before a caller ever sees it.
 */
import * as z from "zod";
import { type ApprovalDecision, DECISION_KIND, REQUEST_KIND } from "../../protocol/approval";
import type { JsonObject } from "../../protocol/json";
import { Parts, textOf } from "../../protocol/part";
import type { Task } from "../../protocol/task";
import type { ToolCall } from "../../providers/base/types";
import type { ChildRelay, RelayReply } from "../delegation";
import type { RunContext } from "../run-context";
import type { Tools } from "../tool";
import { runToolCalls, type ToolRunOptions } from "../tools/tool-runner";
import { parseObject, requestParts } from "./approval-messages";
import {
  type ApprovalDesk,
  type HeldCall,
  MAX_HELD_ARGUMENT_CHARS,
  MAX_HELD_CALLS,
  MAX_HELD_TEXT_CHARS,
  type RelayedFrom,
} from "./held-calls";

/** A child that asked for input during the round, as its agent tool saw it. */
export interface RelayAsk {
  /** The parent's call of the agent tool. */
  callId: string;
  agent: string;
  task: Task;
}

const ChildCall = z.object({
  callId: z.string().min(1).max(200),
  tool: z.string().min(1).max(200),
  arguments: z.record(z.string(), z.unknown()),
  reason: z.string().nullable().optional(),
  type: z.enum(["approval", "question"]),
  choices: z.array(z.string().max(MAX_HELD_TEXT_CHARS)).max(10).optional(),
  deadline: z.iso.datetime().optional(),
});
const ChildRequest = z.object({
  kind: z.literal(REQUEST_KIND),
  calls: z.array(ChildCall).min(1).max(MAX_HELD_CALLS),
});

/**
 * One turn's relays: the children that asked for input (filled by the agent tools as they
 * run) and the replies to send them (read from the decided rows when the turn resumes).
 */
export class TurnRelay implements ChildRelay {
  private readonly asks = new Map<string, RelayAsk>();
  private readonly replies = new Map<
    string,
    { reply: RelayReply; rows: string[]; agent: string }
  >();

  constructor(
    /** Removes relayed rows once their reply reached the child. */
    private readonly release: (callIds: readonly string[]) => void,
  ) {}

  /**
   * An agent tool's child asked for input: true when it is relayed (the call waits). One
   * request reaches the caller at a time: a second child asking in the same round is not
   * relayed (its words go back to the model, as before).
   */
  ask(callId: string, agent: string, task: Task): boolean {
    if (this.asks.size > 0 && !this.asks.has(callId)) return false;
    if (relayedRows(agent, callId, task, { timeoutMs: 0, onTimeout: "reject" }) === null) {
      return false;
    }
    this.asks.set(callId, { callId, agent, task });
    return true;
  }

  /** Whether this call's child asked for input (its call has no result yet). */
  asked(callId: string): boolean {
    return this.asks.has(callId);
  }

  /** The first child that asked this round (one request reaches the caller at a time). */
  first(): RelayAsk | undefined {
    return this.asks.values().next().value;
  }

  /**
   * Holds the first child's request as this task's: the task waits `input-required` for
   * the caller. A later child that asked in the same round has its call left without a
   * result: when the turn resumes, that call follows its child again and asks in turn.
   */
  hold(desk: ApprovalDesk): boolean {
    const ask = this.first();
    const rows = ask ? relayedRows(ask.agent, ask.callId, ask.task, desk.settings) : null;
    if (!rows) return false;
    desk.hold(rows, requestParts(rows));
    return true;
  }

  /**
   * A turn resumed with decisions on relayed rows: each child gets its reply, and the agent
   * tool's call follows the child on (to its result, recorded as the call's; or to another
   * request, which `hold` then holds).
   */
  async resume(
    rows: readonly HeldCall[],
    ctx: RunContext<unknown>,
    tools: Tools,
    options: ToolRunOptions,
  ): Promise<void> {
    const byCall = new Map<string, HeldCall[]>();
    for (const row of rows) {
      if (!row.relay) continue;
      const list = byCall.get(row.relay.callId) ?? [];
      list.push(row);
      byCall.set(row.relay.callId, list);
    }
    for (const [callId, list] of byCall) {
      const agent = list[0]?.relay?.agent ?? "";
      const reply = await replyTo(list);
      this.replies.set(callId, { reply, rows: list.map((r) => r.callId), agent });
    }
    if (this.replies.size === 0) return;
    // The agent tool re-attaches to its child by the call's id: its arguments are not needed.
    const calls: ToolCall[] = [...this.replies].map(([id, r]) => ({
      id,
      name: r.agent,
      arguments: "{}",
      input: {},
    }));
    const runs = await runToolCalls(calls, tools, options);
    const outputs = runs
      .filter((run) => !this.asked(run.toolCallId))
      .map((run) => ({
        type: "function_call_output" as const,
        name: run.name,
        callId: run.toolCallId,
        output: run.content,
        isError: run.isError,
      }));
    if (outputs.length) ctx.record(outputs);
    // Every reply's call has its result now (an error one, when the child was unreachable).
    for (const id of [...this.replies.keys()]) this.replied(id);
  }

  /** The reply waiting for this call's child, if the caller decided on its request. */
  replyFor(callId: string): RelayReply | undefined {
    return this.replies.get(callId)?.reply;
  }

  /** The child accepted the reply: its rows go. */
  replied(callId: string): void {
    const found = this.replies.get(callId);
    if (!found) return;
    this.replies.delete(callId);
    this.release(found.rows);
  }
}

/**
 * The parent's held rows for a child's request: its calls (approvals and questions), or
 * one question with the child's text when it asked in words. Null when the request is
 * malformed or past the limits (the child's words then go back to the model, as before).
 */
export function relayedRows(
  agent: string,
  callId: string,
  task: Task,
  settings: { timeoutMs: number; onTimeout: "reject" | "fail" },
  now = Date.now(),
): HeldCall[] | null {
  if (task.status.state !== "input-required") return null;
  const parts = task.status.message?.parts ?? [];
  const relay: RelayedFrom = { agent, callId, taskId: task.id, plain: false };
  const own = now + settings.timeoutMs;
  const marked = parts.find(
    (p) =>
      p.type === "data" &&
      typeof p.content === "object" &&
      p.content !== null &&
      !Array.isArray(p.content) &&
      p.content.kind === REQUEST_KIND,
  );
  if (!marked) {
    const text = textOf(parts).trim();
    if (!text || text.length > MAX_HELD_TEXT_CHARS) return null;
    return [
      {
        callId,
        tool: agent,
        arguments: "{}",
        kind: "question",
        origin: "model",
        reason: text,
        choices: null,
        deadline: own,
        onTimeout: settings.onTimeout,
        decision: null,
        relay: { ...relay, plain: true },
      },
    ];
  }
  const parsed = ChildRequest.safeParse(marked.content);
  if (!parsed.success) return null;
  const ids = new Set(parsed.data.calls.map((c) => c.callId));
  if (ids.size !== parsed.data.calls.length) return null;
  const rows: HeldCall[] = [];
  for (const c of parsed.data.calls) {
    const args = JSON.stringify(c.arguments);
    const reason = c.reason ?? null;
    if (args.length > MAX_HELD_ARGUMENT_CHARS) return null;
    if (reason !== null && reason.length > MAX_HELD_TEXT_CHARS) return null;
    const theirs = c.deadline ? Date.parse(c.deadline) : Number.POSITIVE_INFINITY;
    rows.push({
      callId: c.callId,
      tool: c.tool,
      arguments: args,
      kind: c.type,
      origin: "model",
      reason,
      choices: c.choices?.length ? c.choices : null,
      // Waiting past the child's own deadline would relay a decision it no longer takes.
      deadline: Math.min(own, theirs),
      onTimeout: settings.onTimeout,
      decision: null,
      relay,
    });
  }
  return rows;
}

/** The message that relays a caller's decisions on one child's request back to it. */
async function replyTo(rows: readonly HeldCall[]): Promise<RelayReply> {
  const first = rows[0];
  if (!first?.relay) throw new Error("no relayed rows to reply with");
  const seed = rows.map(
    (r) => `${r.callId}:${r.decision?.messageId ?? ""}:${r.decision?.at ?? ""}`,
  );
  const digest = await crypto.subtle.digest(
    "SHA-256",
    new TextEncoder().encode(`${first.relay.callId}\n${seed.join("\n")}`),
  );
  const messageId = `relay-${[...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("")}`;
  if (first.relay.plain) {
    const d = first.decision;
    const text =
      d?.verdict === "answer"
        ? (d.reason ?? "")
        : d?.verdict === "expired"
          ? "No answer was given before the deadline."
          : `Declined${d?.reason ? `: ${d.reason}` : "."}`;
    return { messageId, parts: [Parts.text(text || "(no answer)")] };
  }
  const parts = rows.map((row) =>
    Parts.data({ kind: DECISION_KIND, ...decisionOf(row) } as JsonObject),
  );
  return { messageId, parts };
}

function decisionOf(row: HeldCall): ApprovalDecision {
  const d = row.decision;
  const callId = row.callId;
  if (!d || d.verdict === "expired") {
    return { callId, decision: "reject", reason: "No decision was made before the deadline" };
  }
  if (d.verdict === "answer") return { callId, decision: "answer", answer: d.reason ?? "" };
  const out: ApprovalDecision = { callId, decision: d.verdict };
  if (d.reason !== null) out.reason = d.reason;
  const edited = d.arguments === null ? null : parseObject(d.arguments);
  if (edited) out.arguments = edited;
  return out;
}
