/**
 * Admitting a message to a conversation: a client's retry found and answered with its
 * task, the agent's direct reply, or a new task (or an interrupted one resumed) written
 * and its handler run started.
 */
import { readDecisions } from "../agent/approval/approval-messages";
import { decisionRecord } from "../agent/approval/approval-round";
import { askUserTool } from "../agent/approval/ask-user";
import { APPROVER_TASK_ID, ASK_USER_TOOL, type HeldDecision } from "../agent/approval/held-calls";
import type { Agent } from "../agent/definition";
import { replyMessage } from "../agent/reply";
import { A2AError } from "../protocol/errors";
import type { Message } from "../protocol/message";
import { submittedTask, type Task } from "../protocol/task";
import { isTerminal } from "../protocol/task-state";
import type { PushConfigInput } from "../push/config";
import { keyedApproverTaskId } from "../storage/approver-ids";
import type { ContextIdentity, Scope } from "./context-identity";
import { type PushRpc, pushNotSupported } from "./push/push-rpc";
import { findSent, type Sent, sentItemId } from "./retried-messages";
import { type HandlerRuns, publicReason } from "./runs/handler-runs";
import type { Snapshot } from "./runs/task-stream";
import type { ApprovalRows } from "./tasks/approval-rows";
import type { TaskSteps } from "./tasks/task-steps";
import type { TaskStore } from "./tasks/task-store";

/** SQLite's refusal of a history row whose id is taken: a client's message seen before. */
const TAKEN_ITEM = /UNIQUE constraint failed: history_(items\.id|chunks\.item_id)/;

/** A webhook registered inside SendMessage, already checked by the server. */
export interface InlinePush {
  config: PushConfigInput;
  /** The agent's origin: the `iss` of delivery signatures. */
  issuer: string;
}

/** A message's lookup (`findSent`), made when `admitted` was `at`. */
export interface Checked {
  sent: Sent;
  at: number;
}

/** What admission works with: the object's parts and state. */
export interface AdmissionHost<Env> {
  readonly store: TaskStore;
  readonly identity: ContextIdentity;
  readonly runs: HandlerRuns<Env>;
  readonly pushRpc: PushRpc | null;
  readonly env: Env;
  /** The agent, read at each call (a test may replace it). */
  agent(): Agent<Env>;
  /** True until the first write: the object holds nothing and has no schema. */
  vacant(): boolean;
  /** Makes a vacant object a new conversation (its schema), before its first message. */
  create(): void;
  /** A task as it is now (TaskNotFound when it is not there). */
  read(taskId: string): Task;
  /** The calls tasks hold for a person: a message to such a task must decide them. */
  readonly approvals: ApprovalRows;
  readonly steps: TaskSteps;
}

const taskNotFound = (taskId: string) =>
  new A2AError("TaskNotFound", `Task ${taskId} not found`, { taskId });

export class Admission<Env> {
  constructor(private readonly host: AdmissionHost<Env>) {}

  /** Whether `input` repeats a message this conversation took (see `findSent`). */
  private findSent(input: Message): Sent {
    return findSent(
      this.host.store.history,
      input,
      (taskId) => this.host.store.state(taskId) !== null,
    );
  }

  /**
   * A message looked up before the reply hook is asked (a retry must not run it again);
   * null when no hook would be asked: `admit` looks then, in the same step as its writes.
   */
  checkBeforeReply(scope: Scope, input: Message): Checked | null {
    if (this.host.vacant() || !this.host.agent().reply || input.taskId) return null;
    this.host.identity.claim(scope);
    return { sent: this.findSent(input), at: this.admitted };
  }

  /** Messages admitted by this instance: a lookup made before the last one may be stale. */
  private admitted = 0;

  /**
   * The agent's direct reply to a new message (A2A §3.1.1), or null when it wants a task.
   * Asked before admit, so a reply writes nothing: no task, no log, no index entry, not
   * even the object's schema. An inline push config or returnImmediately has no task to
   * apply to and is ignored, as the spec says.
   */
  async directReply(scope: Scope, input: Message): Promise<Message | null> {
    const hook = this.host.agent().reply;
    if (!hook || input.taskId) return null;
    const contextId = scope.contextId;
    try {
      const result = await hook({
        message: { ...input, contextId },
        contextId,
        env: this.host.env,
      });
      if (typeof result !== "string" && !Array.isArray(result)) return null;
      return replyMessage(result, contextId);
    } catch (error) {
      throw new A2AError("Internal", publicReason(error, this.host.identity.logIds(null)));
    }
  }

  /**
   * Creates a task for a new message, or resumes the interrupted task it names, then
   * starts the handler. Everything up to the start is synchronous, so two messages for
   * one task cannot both get in. `beforeRun` sees the task before its run begins.
   *
   * A message whose messageId this conversation already took is a client's retry: it
   * gets the task the first one went to, as it is now, and nothing is written or run
   * (`run` is then undefined). The check is here, synchronous with the writes, so two
   * copies of one message arriving together make one task.
   */
  admit<T>(
    scope: Scope,
    input: Message,
    beforeRun?: (taskId: string, snapshot?: Snapshot, retried?: boolean) => T,
    push?: InlinePush,
    checked?: Checked | null,
  ): { taskId: string; run?: Promise<void>; opened?: T } {
    // A new conversation has no message to find: its first one skips the lookup.
    const fresh = this.host.vacant();
    if (fresh) {
      if (input.taskId) throw taskNotFound(input.taskId);
      this.host.create();
    }
    this.host.identity.claim(scope);
    const retried = (taskId: string) => ({
      taskId,
      opened: beforeRun?.(taskId, undefined, true),
    });
    // Looked up before the reply hook and no message admitted since: still what it was.
    const known = checked && checked.at === this.admitted ? checked.sent : null;
    // A new task's message is not looked up first: its history row is keyed by its
    // messageId, so a retry's insert fails, the transaction rolls back, and the lookup
    // is made then. A message to a task is looked up first: the task's state decides.
    const optimistic = !fresh && known === null && !input.taskId;
    const sent =
      fresh || optimistic
        ? { itemId: sentItemId(input.messageId) }
        : (known ?? this.findSent(input));
    if ("retryOf" in sent) return retried(sent.retryOf);
    this.admitted += 1;
    const full = this.host.agent().limits.historyItems;
    if (this.host.store.history.size() >= full) {
      const again = optimistic ? this.findSent(input) : null;
      if (again && "retryOf" in again) return retried(again.retryOf);
      throw new A2AError(
        "ConversationFull",
        `Conversation ${scope.contextId} holds ${full} history items, the most it may (limits.historyItems): compact it (history:compact) or start a new context`,
        { contextId: scope.contextId, limit: String(full) },
      );
    }
    const message: Message = { ...input, contextId: scope.contextId };
    const taskId = message.taskId;
    if (taskId) {
      const state = this.host.store.state(taskId);
      if (state === null)
        throw new A2AError("TaskNotFound", `Task ${taskId} not found`, { taskId });
      if (isTerminal(state)) {
        throw new A2AError(
          "UnsupportedOperation",
          `Task ${taskId} is ${state} and accepts no more messages; start a new task instead`,
          { taskId, state },
        );
      }
      if (this.host.runs.has(taskId)) {
        throw new A2AError(
          "UnsupportedOperation",
          `Task ${taskId} is still working; wait for it to ask for input or cancel it`,
          { taskId, state },
        );
      }
      // A task holding calls for a person resumes only with a decision on each: anything
      // less is refused here, before anything is written, and the task keeps waiting.
      const decided = this.decisions(taskId, message, scope);
      // One transaction, as for a new task (below).
      return this.startIn(
        () => taskId,
        () => {
          this.host.store.appendMessage(taskId, message, sent.itemId, false, decided !== null);
          if (decided) this.recordDecisions(taskId, decided);
          if (push) this.registerInline(taskId, push.config, push.issuer, this.host.read(taskId));
          const opened = beforeRun?.(taskId);
          return { taskId, run: this.host.runs.start(taskId, message, scope.trace), opened };
        },
      );
    }
    // A new task: its row, its message and its move to working in one transaction; a
    // stream opened on it starts from the submitted task, before the first event.
    // Only the Worker can make a task id's sealed part (it holds the key): a caller that
    // names none has a bug, and a made-up id would route nowhere. The object adds the row's
    // key to it (see task-keys.ts), so its id finds the row with no index of ids.
    const sealed = scope.newTaskId;
    if (!sealed) {
      throw new Error("a new task needs the id the Worker sealed for it (scope.newTaskId)");
    }
    let id = sealed;
    let created = false;
    try {
      return this.startIn(
        () => id,
        () => {
          id = this.host.store.listing.mintTaskId(sealed);
          message.taskId = id;
          const submitted = submittedTask(id, scope.contextId, message);
          // Kept with the task so that every request for a decision can name it (see
          // HeldDesk); it carries the task's key as the task's id does.
          if (scope.newApproverTaskId) {
            submitted.metadata[APPROVER_TASK_ID] = keyedApproverTaskId(scope.newApproverTaskId, id);
          }
          if (push) this.registerInline(id, push.config, push.issuer, submitted);
          const events = this.host.store.create(submitted, true, push !== undefined, sent.itemId);
          created = true;
          const opened = beforeRun?.(id, { task: submitted, seq: 0 });
          this.host.runs.publish(id, events);
          return { taskId: id, run: this.host.runs.run(id, message, scope.trace), opened };
        },
      );
    } catch (error) {
      if (created || !optimistic || !TAKEN_ITEM.test(String((error as Error)?.message))) {
        throw error;
      }
      this.host.store.pushQueued = false;
      const again = this.findSent(input);
      if ("retryOf" in again) return retried(again.retryOf);
      throw error;
    }
  }

  /**
   * Writes a message's admission and starts its run in one transaction: the handler's first
   * step runs inside it, so a handler that answers at once ends the task in it too (see
   * `HandlerRuns.run`). What the handler does after an await comes after the commit.
   */
  private startIn<R extends { run?: Promise<void> }>(taskId: () => string, admit: () => R): R {
    let started = false;
    try {
      return this.host.store.atomic(() => {
        const admitted = admit();
        started = admitted.run !== undefined;
        return admitted;
      });
    } catch (error) {
      // Rolled back after its run began (a write failed inside the handler's first step,
      // and the handler caught it): nothing of the message was kept, so its run stops.
      if (started) this.host.runs.abort(taskId(), "The message could not be stored");
      throw error;
    }
  }

  /** The decisions a message carries for its task's held calls; null when none is held. */
  private decisions(
    taskId: string,
    message: Message,
    scope: Scope,
  ): Map<string, HeldDecision> | null {
    const pending = this.host.approvals.pending(taskId);
    if (pending.length === 0) return null;
    const agent = this.host.agent();
    const tools = agent.approvals.askUser
      ? { ...agent.tools, [ASK_USER_TOOL]: askUserTool }
      : agent.tools;
    // An approver decides as itself: the record names who allowed what.
    return readDecisions(message, pending, tools, scope.approver ?? scope.owner ?? "");
  }

  /**
   * The task a message repeats, when this conversation took it before (a client's retry);
   * null for a new message. Reads only.
   */
  retryOf(input: Message): string | null {
    if (this.host.vacant()) return null;
    const sent = this.findSent(input);
    return "retryOf" in sent ? sent.retryOf : null;
  }

  /** Decisions stored on their calls, and kept in the task's steps (who, when, what). */
  private recordDecisions(taskId: string, decided: Map<string, HeldDecision>): void {
    const pending = this.host.approvals.pending(taskId);
    this.host.approvals.decide(taskId, decided);
    const records = pending.map((c) =>
      decisionRecord({ ...c, decision: decided.get(c.callId) ?? null }),
    );
    this.host.steps.noteDecisions(
      taskId,
      records.filter((r) => r !== null),
    );
  }

  /** A config sent inside SendMessage: saved before the run starts, so no event is missed. */
  private registerInline(
    taskId: string,
    input: PushConfigInput,
    issuer: string,
    snapshot: Task,
  ): void {
    const push = this.host.pushRpc;
    if (!push) throw pushNotSupported();
    push.registerInline(taskId, input, issuer, snapshot);
  }
}
