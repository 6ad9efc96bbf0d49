import * as z from "zod";
import { Artifact } from "./artifact";
import { JsonObject, newId, nowIso } from "./json";
import { Message, Messages } from "./message";
import type { Parts } from "./part";
import { InvalidTransitionError, isTerminal, planTransition, TaskState } from "./task-state";

export const StateChange = z.object({
  previousState: TaskState,
  newState: TaskState,
  timestamp: z.iso.datetime(),
});
export type StateChange = z.infer<typeof StateChange>;

export const TaskStatus = z.object({
  /** A missing state means submitted. */
  state: TaskState.default("submitted"),
  message: Message.nullable().default(null),
  timestamp: z.iso.datetime().default(() => nowIso()),
});
export type TaskStatus = z.infer<typeof TaskStatus>;

/**
 * A task: a unit of work with an enforced lifecycle. This is the stored and
 * in-memory shape; the wire shapes live in `wire-v1.ts` and `wire-v03.ts`.
 * A missing state means submitted; an unknown state string is an error.
 */
export const Task = z.object({
  id: z
    .string()
    .min(1)
    .default(() => newId()),
  contextId: z
    .string()
    .min(1)
    .default(() => newId()),
  status: TaskStatus.default(() => ({
    state: "submitted" as const,
    message: null,
    timestamp: nowIso(),
  })),
  history: z.array(Message).default([]),
  artifacts: z.array(Artifact).default([]),
  metadata: JsonObject.default({}),
  stateHistory: z.array(StateChange).default([]),
  createdAt: z.iso.datetime().default(() => nowIso()),
  /** Orchestration scratch space; never persisted or sent. */
  flowState: z.record(z.string(), z.unknown()).default({}),
});
export type Task = z.infer<typeof Task>;
export type TaskInput = z.input<typeof Task>;

/**
 * A new submitted task holding one message, built as it is (no parsing): for a caller
 * whose id and message are already checked, like the conversation object admitting one.
 * A function of its own, not one of `Tasks`, so a Worker that needs only this bundles
 * only this.
 * @example
 * const task = submittedTask("t1", "c1", Messages.user("hello"));
 */
export function submittedTask(
  id: string,
  contextId: string,
  message: Message,
  timestamp = nowIso(),
): Task {
  return {
    id,
    contextId,
    status: { state: "submitted", message: null, timestamp },
    history: [message],
    artifacts: [],
    metadata: {},
    stateHistory: [],
    createdAt: timestamp,
    flowState: {},
  };
}

// Newest message or artifact per task, kept on each add so lookup never scans.
const lastItems = new WeakMap<Task, Message | Artifact>();

function move(task: Task, to: TaskState, viaWorking: boolean): Task {
  const steps = planTransition(task.status.state, to, { viaWorking });
  for (const next of steps) {
    const timestamp = nowIso();
    task.stateHistory.push({ previousState: task.status.state, newState: next, timestamp });
    task.status = { state: next, message: null, timestamp };
  }
  return task;
}

/**
 * The convenience ops have side effects (a message, metadata), so on a finished task
 * they refuse rather than act as a same-state no-op: a finished task accepts nothing,
 * which wins over "the same state changes nothing".
 */
function refuseIfTerminal(task: Task, to: TaskState): void {
  if (isTerminal(task.status.state)) throw new InvalidTransitionError(task.status.state, to);
}

/**
 * Pure task lifecycle operations. Each mutates and returns the task for chaining, and a
 * rejected change throws before anything changed.
 * @example
 * const task = Tasks.create(Messages.user("hello"));
 * Tasks.complete(task, "hi there"); // submitted → working → completed
 */
export const Tasks = {
  /** A new submitted task holding one message. */
  create: (message: Message, init: Partial<Pick<Task, "id" | "contextId">> = {}): Task => {
    const task = Task.parse({ ...init });
    return Tasks.addMessage(task, message);
  },
  /** A new task whose single user message holds one infer part. */
  createInfer: (content: Parameters<typeof Parts.infer>[0] = {}): Task =>
    Tasks.create(Messages.infer(content)),
  addMessage: (task: Task, message: Message): Task => {
    task.history.push(message);
    lastItems.set(task, message);
    return task;
  },
  /** Adding an artifact never changes the state. */
  addArtifact: (task: Task, artifact: Artifact): Task => {
    task.artifacts.push(artifact);
    lastItems.set(task, artifact);
    return task;
  },
  lastItem: (task: Task): Message | Artifact | null => {
    const cached = lastItems.get(task);
    if (cached) return cached;
    // A task rebuilt from storage has no cache entry: the newer of the two tails wins.
    const message = task.history.at(-1);
    const artifact = task.artifacts.at(-1);
    if (!message || !artifact) return message ?? artifact ?? null;
    return artifact.timestamp > message.timestamp ? artifact : message;
  },
  updateState: (task: Task, state: TaskState): Task => move(task, TaskState.parse(state), false),
  begin: (task: Task): Task => move(task, "working", false),
  requireInput: (task: Task, message?: Message): Task => {
    move(task, "input-required", true);
    if (message) Tasks.addMessage(task, message);
    return task;
  },
  complete: (task: Task, responseText: string): Task => {
    refuseIfTerminal(task, "completed");
    move(task, "completed", true);
    return Tasks.addMessage(task, Messages.agent(responseText));
  },
  fail: (task: Task, errorMessage: string): Task => {
    refuseIfTerminal(task, "failed");
    move(task, "failed", true);
    task.metadata.error = errorMessage;
    return task;
  },
  cancel: (task: Task, reason?: string | null): Task => {
    refuseIfTerminal(task, "canceled");
    move(task, "canceled", false);
    if (reason) task.metadata.cancelReason = reason;
    return task;
  },
} as const;
