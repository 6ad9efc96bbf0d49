/**
 * A task's operational steps for the inspector's waterfall: where its delegations went and
 * how long they took, and each webhook delivery attempt. They name other agents and other
 * receivers, so they are kept out of the A2A task (which every client reading it and every
 * webhook receiver gets) in the owner-only `task_steps` table, served only by the
 * inspector's steps route, and written only while the inspector is on.
 */
import type { Agent } from "../../agent/definition";
import type { ChildRecord } from "../../agent/delegation";
import { compact, type JsonObject } from "../../protocol/json";
import { isTerminal, type TaskState } from "../../protocol/task-state";
import type { Scope } from "../../storage/ids";
import { taskRow } from "../../storage/task-keys";

/** How many of a task's delegations its steps keep (`delegations`), the latest. */
export const MAX_DELEGATIONS_SHOWN = 32;
/** How many of a task's latest delivery attempts its steps keep (`pushAttempts`). */
export const MAX_PUSH_ATTEMPTS_SHOWN = 20;
/** How many of a task's latest approval decisions its steps keep (`approvals`). */
export const MAX_DECISIONS_SHOWN = 32;

/** The variable that turns the inspector on or off without changing code. */
export const INSPECTOR_VAR = "EDGELINK_INSPECTOR";

/**
 * The inspector as the operator set it: the agent's `inspector` option, else the
 * `EDGELINK_INSPECTOR` variable ("true"/"false"); null when neither says (then it is on
 * only for requests to localhost, which is what `wrangler dev` serves).
 */
export function inspectorSetting(agent: Agent<unknown>, env: unknown): boolean | null {
  if (agent.inspector !== null) return agent.inspector;
  const value = (env as Record<string, unknown> | undefined)?.[INSPECTOR_VAR];
  if (value === "true" || value === "1") return true;
  if (value === "false" || value === "0") return false;
  return null;
}

/** A task's steps as the inspector's route answers them. */
export interface TaskStepsRecord {
  taskId: string;
  /** Per delegation: `key`, `target`, `childTaskId`, `state`, `at`, and `ms` once it ended. */
  delegations: JsonObject[];
  /** Per delivery attempt: `config`, `at`, `ms`, `status` (when answered) and `ok`. */
  pushAttempts: JsonObject[];
  /** Per decision on a held call: `callId`, `tool`, `decision`, `by`, `at`, `reason`, edited `arguments`. */
  approvals: JsonObject[];
  /**
   * The task's webhook health, read when asked (null without push): unhealthy config ids,
   * events coalesced for them, dead-lettered deliveries. Never in the task's metadata,
   * which every receiver gets.
   */
  push?: { unhealthyConfigs: string[]; skippedEvents: number; deadLetters: number } | null;
}

type Column = "delegations" | "push_attempts" | "approvals";

/**
 * A conversation's record of its tasks' steps, one `task_steps` row per task with two
 * bounded JSON lists; the row goes with its task (a trigger). Nothing is written unless
 * the inspector is on: by the operator's setting, or (set neither way) when the latest
 * request this object served had it on (a request to localhost). An object woken only by
 * its alarm since it started (a webhook retry) has served no request: with the inspector
 * left to the localhost default it records nothing then.
 */
export class TaskSteps {
  /** Whether the latest request this object served had the inspector on. */
  private requested = false;

  constructor(
    private readonly sql: SqlStorage,
    /** The operator's setting, read at each step (see `inspectorSetting`). */
    private readonly setting: () => boolean | null,
  ) {}

  /** Notes whether a request had the inspector on (the Worker says so in its scope). */
  seen(scope: Scope): void {
    this.requested = scope.inspector === true;
  }

  /** Whether steps are recorded now. */
  get enabled(): boolean {
    return this.setting() ?? this.requested;
  }

  /**
   * A delegation started, learned its child's id, or ended: where it went, the child's
   * task id once known, when it started and, once the child ended, how long it took.
   */
  noteDelegation(
    taskId: string,
    record: Pick<ChildRecord, "key"> & Partial<ChildRecord>,
    now = Date.now(),
  ): void {
    if (!this.enabled) return;
    this.update(taskId, "delegations", (list) => {
      const index = list.findIndex((entry) => entry.key === record.key);
      const entry: JsonObject = index >= 0 ? { ...list[index] } : { key: record.key, at: now };
      if (record.target !== undefined) entry.target = record.target;
      if (record.childTaskId) entry.childTaskId = record.childTaskId;
      if (record.state !== undefined) entry.state = record.state;
      if (record.state && isTerminal(record.state as TaskState) && typeof entry.at === "number") {
        entry.ms = now - entry.at;
      }
      const next = index >= 0 ? list.with(index, entry) : [...list, entry];
      return next.slice(-MAX_DELEGATIONS_SHOWN);
    });
  }

  /** One webhook delivery attempt: its config, start, duration and outcome. */
  noteAttempt(
    taskId: string,
    attempt: { config: string; at: number; ms: number; status?: number | null; ok: boolean },
  ): void {
    if (!this.enabled) return;
    const entry = compact({ ...attempt, status: attempt.status ?? undefined });
    this.update(taskId, "push_attempts", (list) =>
      [...list, entry].slice(-MAX_PUSH_ATTEMPTS_SHOWN),
    );
  }

  /**
   * Decisions taken on a task's held calls: who, when, what, edited arguments. Kept
   * whether or not the inspector is on: they are the record of who allowed what.
   */
  noteDecisions(taskId: string, entries: readonly JsonObject[]): void {
    if (entries.length === 0) return;
    this.update(taskId, "approvals", (list) => [...list, ...entries].slice(-MAX_DECISIONS_SHOWN));
  }

  /** A task's steps (empty lists when none were recorded). */
  read(taskId: string): TaskStepsRecord {
    const row = this.sql
      .exec<{ delegations: string; push_attempts: string; approvals: string }>(
        "SELECT delegations, push_attempts, approvals FROM task_steps WHERE task_id = ?",
        taskId,
      )
      .toArray()[0];
    return {
      taskId,
      delegations: row ? (JSON.parse(row.delegations) as JsonObject[]) : [],
      pushAttempts: row ? (JSON.parse(row.push_attempts) as JsonObject[]) : [],
      approvals: row ? (JSON.parse(row.approvals) as JsonObject[]) : [],
    };
  }

  /**
   * Called before a step is written: the task store writes its rows' pending changes, so
   * a task made in the open transaction is found (see `TaskStore.settle`).
   */
  beforeWrite: () => void = () => {};

  /** Rewrites one list of a task's row; a task no longer stored gets no row. */
  private update(taskId: string, column: Column, change: (list: JsonObject[]) => JsonObject[]) {
    this.beforeWrite();
    const row = this.sql
      .exec<{ list: string }>(`SELECT ${column} AS list FROM task_steps WHERE task_id = ?`, taskId)
      .toArray()[0];
    const list = row ? (JSON.parse(row.list) as JsonObject[]) : [];
    this.sql.exec(
      `INSERT INTO task_steps (task_id, ${column}) SELECT ?1, ?2 WHERE EXISTS (SELECT 1 FROM tasks WHERE ${taskRow()})
       ON CONFLICT (task_id) DO UPDATE SET ${column} = excluded.${column}`,
      taskId,
      JSON.stringify(change(list)),
    );
  }
}
