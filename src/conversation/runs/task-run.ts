import type { Context } from "@opentelemetry/api";
import type {
  ApprovalAnswer,
  ApprovalRequest,
  QuestionAnswer,
  QuestionRequest,
} from "../../agent/access/approval-options";
import { handlerApproval, handlerQuestion } from "../../agent/approval/handler-approval";
import type { ApprovalDesk } from "../../agent/approval/held-calls";
import {
  type ChildLedger,
  type ChildTask,
  type DelegateOptions,
  type DelegateTarget,
  Delegator,
} from "../../agent/delegation";
import type {
  ArtifactUpdate,
  EndOptions,
  RunContext,
  StatusOptions,
} from "../../agent/run-context";
import { Conversation } from "../../history/conversation";
import { Item, type ItemInput, isBuiltItem } from "../../history/items";
import type { ReadonlyConversation } from "../../history/readonly";
import {
  type ConversationWindow,
  readWindow,
  type WindowPolicy,
} from "../../history/window-reader";
import { Artifact } from "../../protocol/artifact";
import type { LoggedEvent } from "../../protocol/events";
import { type JsonObject, newId, nowIso } from "../../protocol/json";
import type { Message, MessageInput } from "../../protocol/message";
import { type Part, Parts } from "../../protocol/part";
import type { Task } from "../../protocol/task";
import { isTerminal } from "../../protocol/task-state";
import { TRACE_CONTEXT } from "../../telemetry";
import { windowSource } from "../history/window-source";
import type { TaskStore } from "../tasks/task-store";

/** A text part with no other field (every streamed chunk): checked without an array of keys. */
function isPlainText(part: Part): boolean {
  if (part.type !== "text" || typeof part.content !== "string") return false;
  for (const key in part) if (key !== "type" && key !== "content") return false;
  return true;
}

/**
 * The RunContext a handler sees for one run: each call writes through the store and
 * publishes the logged events at once.
 */
export class TaskRun<Env> implements RunContext<Env> {
  /** The run's `invoke_agent` span context, when tracing is on (see `traceContextOf`). */
  [TRACE_CONTEXT]?: Context;
  readonly taskId: string;
  readonly contextId: string;
  readonly history: readonly Message[];

  constructor(
    readonly task: Task,
    readonly message: Message,
    readonly signal: AbortSignal,
    readonly env: Env,
    private readonly store: TaskStore,
    private readonly publish: (taskId: string, events: LoggedEvent[]) => void,
    private readonly children: ChildLedger | null = null,
    /** Where the run holds what it asks a person (absent: it cannot ask). */
    private readonly desk: () => ApprovalDesk | null = () => null,
  ) {
    this.taskId = task.id;
    this.contextId = task.contextId;
    this.history = task.history;
  }

  private loaded: ReadonlyConversation | null = null;
  private delegator: Delegator | null = null;

  delegate(
    target: DelegateTarget,
    message: string | Part[] | MessageInput,
    options?: DelegateOptions,
  ): ChildTask {
    this.guard();
    if (!this.children) throw new Error("delegate: this run has no place to record children");
    this.delegator ??= new Delegator(this, this.children);
    return this.delegator.delegate(target, message, options);
  }

  get conversation(): ReadonlyConversation {
    this.loaded ??= Conversation.fromStored(
      this.store.history.all().map((row) => row.item),
    ).readonly();
    return this.loaded;
  }

  /** The history item of `message`, looked up once per run (undefined: not yet). */
  private question: string | null | undefined = undefined;

  conversationWindow(policy: WindowPolicy): Promise<ConversationWindow> {
    // The question this run answers is always sent, however many items came after it
    // (a turn resumed after a restart, with its earlier rounds already recorded).
    this.question ??= this.store.cache.questionItemId(this.taskId, this.message.messageId);
    if (this.question === null || policy.keep?.has(this.question)) {
      return readWindow(windowSource(this.store.history), policy);
    }
    const keep = new Set(policy.keep);
    keep.add(this.question);
    return readWindow(windowSource(this.store.history), { ...policy, keep });
  }

  private agentMessage(content: string | Part[]): Message {
    // A2A requires at least one part, so an empty message could not be sent to anyone.
    if (Array.isArray(content) && content.length === 0) {
      throw new TypeError("A message needs at least one part");
    }
    return {
      messageId: newId(),
      role: "agent",
      parts: typeof content === "string" ? [Parts.text(content)] : content,
      contextId: this.contextId,
      taskId: this.taskId,
      timestamp: nowIso(),
    };
  }

  /** Refuses writes once the run was canceled or the task has ended. */
  private guard(): void {
    this.signal.throwIfAborted();
    const state = this.store.state(this.taskId);
    if (state && isTerminal(state)) {
      throw new Error(`Task ${this.taskId} is ${state}; it accepts no more updates`);
    }
  }

  status(message: string | Part[], options: StatusOptions = {}): void {
    this.guard();
    const agentMessage = this.agentMessage(message);
    this.publish(this.taskId, [
      options.transient
        ? this.store.announce(this.taskId, agentMessage)
        : this.store.statusMessage(this.taskId, agentMessage),
    ]);
  }

  artifact(update: ArtifactUpdate): string {
    this.guard();
    if (update.parts.length === 0)
      throw new TypeError("An artifact update needs at least one part");
    const fields = {
      artifactId: update.artifactId ?? newId(),
      name: update.name ?? null,
      description: update.description ?? null,
      parts: update.parts,
      metadata: update.metadata ?? {},
      kind: update.kind ?? "result",
    };
    // Plain text parts (every streamed chunk) need no schema: the object is built as the
    // schema would build it. Anything else is validated.
    const artifact: Artifact = update.parts.every(isPlainText)
      ? { ...fields, timestamp: nowIso(), uri: null, mediaType: null, actionId: null }
      : Artifact.parse(fields);
    const logged = this.store.putArtifact(this.taskId, artifact, {
      append: update.append ?? false,
      lastChunk: update.lastChunk ?? false,
    });
    this.publish(this.taskId, [logged]);
    return artifact.artifactId;
  }

  record(items: ItemInput[]): Item[] {
    this.guard();
    const parsed = items.map((item, index) => {
      if (isBuiltItem(item)) return item;
      const result = Item.safeParse(item);
      if (result.success) return result.data;
      const why = result.error.issues.map(
        (i) => `items[${index}].${i.path.join(".")}: ${i.message}`,
      );
      throw new TypeError(`Invalid conversation item: ${why.join("; ")}`);
    });
    this.store.recordItems(this.taskId, parsed);
    // The next read of `conversation` must see what was just written.
    this.loaded = null;
    return parsed;
  }

  approval(request: ApprovalRequest): ApprovalAnswer | undefined {
    this.guard();
    return handlerApproval(this.requireDesk(), request);
  }

  ask(question: QuestionRequest): QuestionAnswer | undefined {
    this.guard();
    return handlerQuestion(this.requireDesk(), question);
  }

  private requireDesk(): ApprovalDesk {
    const desk = this.desk();
    if (!desk) throw new Error("This run has no place to hold an approval");
    return desk;
  }

  requestInput(question: string | Part[]): void {
    this.end("input-required", this.agentMessage(question));
  }

  requestAuth(explanation: string | Part[]): void {
    this.end("auth-required", this.agentMessage(explanation));
  }

  complete(message?: string | Part[], options: EndOptions = {}): void {
    this.end(
      "completed",
      message === undefined ? null : this.agentMessage(message),
      options.metadata,
    );
  }

  fail(message: string, options: EndOptions = {}): void {
    this.end("failed", this.agentMessage(message), { ...options.metadata, error: message });
  }

  reject(reason: string): void {
    this.end("rejected", this.agentMessage(reason), { rejectReason: reason });
  }

  private end(
    state: Task["status"]["state"],
    message: Message | null,
    metadata?: JsonObject,
  ): void {
    this.guard();
    const events = this.store.transition(this.taskId, state, { message, metadata });
    this.publish(this.taskId, events);
  }
}
