import * as z from "zod";

/**
 * Task states, spelled as A2A v0.3 and the seed spell them (decision 1: `canceled`).
 * `unknown` is accepted for compatibility and never produced by the server.
 */
export const TASK_STATES = [
  "submitted",
  "working",
  "input-required",
  "auth-required",
  "completed",
  "canceled",
  "failed",
  "rejected",
  "unknown",
] as const;
export const TaskState = z.enum(TASK_STATES);
export type TaskState = z.infer<typeof TaskState>;

/** States after which a task accepts no transition and is never executed again. */
export const TERMINAL_STATES: ReadonlySet<TaskState> = new Set([
  "completed",
  "canceled",
  "failed",
  "rejected",
]);
/** States where the agent waits on the client; a blocking send returns here. */
export const INTERRUPTED_STATES: ReadonlySet<TaskState> = new Set([
  "input-required",
  "auth-required",
]);

/**
 * Whether a task in this state is over: completed, canceled, failed or rejected.
 * @example
 * ```ts
 * if (isTerminal(task.status.state)) console.log("done:", task.status.state);
 * ```
 */
export const isTerminal = (state: TaskState): boolean => TERMINAL_STATES.has(state);
/**
 * Whether a task in this state waits on the client: input-required or auth-required.
 * @example
 * ```ts
 * if (isInterrupted(task.status.state)) await agent.send("Ada", { taskId: task.id });
 * ```
 */
export const isInterrupted = (state: TaskState): boolean => INTERRUPTED_STATES.has(state);

/**
 * The legal transitions. working→canceled is allowed (decision 2), and the A2A-only
 * states fit in where the protocol puts them: `rejected` ends a task the agent will not
 * do, `auth-required` is an interruption like `input-required`.
 */
const TRANSITIONS: Readonly<Record<TaskState, readonly TaskState[]>> = {
  submitted: ["working", "failed", "canceled", "rejected"],
  working: ["completed", "input-required", "auth-required", "failed", "canceled", "rejected"],
  "input-required": ["working", "failed", "canceled"],
  "auth-required": ["working", "failed", "canceled"],
  completed: [],
  canceled: [],
  failed: [],
  rejected: [],
  unknown: [],
};

export const canTransition = (from: TaskState, to: TaskState): boolean =>
  TRANSITIONS[from].includes(to);

/** Thrown when a lifecycle change is not in the transition table. */
export class InvalidTransitionError extends Error {
  override readonly name = "InvalidTransitionError";
  constructor(
    readonly from: TaskState,
    readonly to: TaskState,
  ) {
    super(`Invalid task state transition: ${from} -> ${to}`);
  }
}

/**
 * The state changes needed to reach `to` from `from`: `[]` for a same-state no-op,
 * `[to]` for a direct move, and `["working", to]` when `via: "working"` lets a
 * convenience transition pass through working. Throws on anything illegal, before
 * anything has changed.
 */
export function planTransition(
  from: TaskState,
  to: TaskState,
  options: { viaWorking?: boolean } = {},
): TaskState[] {
  if (from === to) return [];
  if (canTransition(from, to)) return [to];
  if (options.viaWorking && canTransition(from, "working") && canTransition("working", to)) {
    return ["working", to];
  }
  throw new InvalidTransitionError(from, to);
}
