/**
 * The `approvals` table, its one writer: a task's calls held for a person (a model
 * round's tool calls, a handler's questions), the decision taken on each, and their
 * deadlines. A model round's rows go once its turn has recorded their results; a
 * handler's stay with the task (its run reads them again when it resumes); all go with
 * the task (a trigger).
 */
import type {
  HeldCall,
  HeldDecision,
  HeldOrigin,
  RelayedFrom,
} from "../../agent/approval/held-calls";

interface Row extends Record<string, SqlStorageValue> {
  call_id: string;
  tool: string;
  arguments: string;
  kind: string;
  origin: string;
  reason: string | null;
  choices: string | null;
  deadline: number | null;
  on_timeout: string;
  verdict: string | null;
  decided_arguments: string | null;
  decided_reason: string | null;
  decided_by: string | null;
  decided_at: number | null;
  message_id: string | null;
  relay: string | null;
}

const COLUMNS =
  "call_id, tool, arguments, kind, origin, reason, choices, deadline, on_timeout, verdict, decided_arguments, decided_reason, decided_by, decided_at, message_id, relay";

export class ApprovalRows {
  constructor(private readonly sql: SqlStorage) {}

  /** A task's held calls, in the order they were held (of one origin, when given). */
  held(taskId: string, origin?: HeldOrigin): HeldCall[] {
    const rows = origin
      ? this.sql.exec<Row>(
          `SELECT ${COLUMNS} FROM approvals WHERE task_id = ? AND origin = ? ORDER BY seq`,
          taskId,
          origin,
        )
      : this.sql.exec<Row>(
          `SELECT ${COLUMNS} FROM approvals WHERE task_id = ? ORDER BY seq`,
          taskId,
        );
    return rows.toArray().map(fromRow);
  }

  /** The calls of a task still waiting for a decision. */
  pending(taskId: string): HeldCall[] {
    return this.sql
      .exec<Row>(
        `SELECT ${COLUMNS} FROM approvals WHERE task_id = ? AND verdict IS NULL AND kind <> 'auto' ORDER BY seq`,
        taskId,
      )
      .toArray()
      .map(fromRow);
  }

  /** Stores held calls after the task's others. */
  insert(taskId: string, calls: readonly HeldCall[]): void {
    const [{ next }] = this.sql
      .exec<{ next: number }>(
        "SELECT COALESCE(MAX(seq), 0) + 1 AS next FROM approvals WHERE task_id = ?",
        taskId,
      )
      .toArray() as [{ next: number }];
    calls.forEach((c, index) => {
      const d = c.decision;
      this.sql.exec(
        `INSERT INTO approvals (task_id, seq, ${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        taskId,
        next + index,
        c.callId,
        c.tool,
        c.arguments,
        c.kind,
        c.origin,
        c.reason,
        c.choices ? JSON.stringify(c.choices) : null,
        c.deadline,
        c.onTimeout,
        d?.verdict ?? null,
        d?.arguments ?? null,
        d?.reason ?? null,
        d?.by ?? null,
        d?.at ?? null,
        d?.messageId ?? null,
        c.relay ? JSON.stringify(c.relay) : null,
      );
    });
  }

  /** Records decisions on a task's pending calls (a call decided already is left as it is). */
  decide(taskId: string, decisions: ReadonlyMap<string, HeldDecision>): void {
    for (const [callId, d] of decisions) {
      this.sql.exec(
        "UPDATE approvals SET verdict = ?, decided_arguments = ?, decided_reason = ?, decided_by = ?, decided_at = ?, message_id = ? WHERE task_id = ? AND call_id = ? AND verdict IS NULL",
        d.verdict,
        d.arguments,
        d.reason,
        d.by,
        d.at,
        d.messageId,
        taskId,
        callId,
      );
    }
  }

  /** Removes a task's held calls once answered in its history. */
  release(taskId: string, callIds: readonly string[]): void {
    for (const callId of callIds) {
      this.sql.exec("DELETE FROM approvals WHERE task_id = ? AND call_id = ?", taskId, callId);
    }
  }

  /** Removes every held call of a task (it ended another way). */
  clear(taskId: string): void {
    this.sql.exec("DELETE FROM approvals WHERE task_id = ?", taskId);
  }

  /** Tasks with a pending call whose deadline has passed (at most `limit`). */
  due(now: number, limit = 50): string[] {
    return this.sql
      .exec<{ task_id: string }>(
        "SELECT DISTINCT task_id FROM approvals WHERE verdict IS NULL AND deadline <= ? LIMIT ?",
        now,
        limit,
      )
      .toArray()
      .map((r) => r.task_id);
  }

  /** The earliest deadline still pending, or null. */
  nextDeadline(): number | null {
    const [row] = this.sql
      .exec<{ at: number | null }>(
        "SELECT MIN(deadline) AS at FROM approvals WHERE verdict IS NULL AND deadline IS NOT NULL",
      )
      .toArray();
    return row?.at ?? null;
  }
}

function fromRow(r: Row): HeldCall {
  return {
    callId: r.call_id,
    tool: r.tool,
    arguments: r.arguments,
    kind: r.kind as HeldCall["kind"],
    origin: r.origin as HeldOrigin,
    reason: r.reason,
    choices: r.choices ? (JSON.parse(r.choices) as string[]) : null,
    deadline: r.deadline,
    onTimeout: r.on_timeout === "fail" ? "fail" : "reject",
    relay: r.relay ? (JSON.parse(r.relay) as RelayedFrom) : null,
    decision:
      r.verdict === null
        ? null
        : {
            verdict: r.verdict as HeldDecision["verdict"],
            arguments: r.decided_arguments,
            reason: r.decided_reason,
            by: r.decided_by ?? "",
            at: r.decided_at ?? 0,
            messageId: r.message_id,
          },
  };
}
