import type { Item, ItemInput } from "../history/items";
import type { ReadonlyConversation } from "../history/readonly";
import type { ConversationWindow, WindowPolicy } from "../history/window-reader";
import type { JsonObject } from "../protocol/json";
import type { Message, MessageInput } from "../protocol/message";
import type { Part } from "../protocol/part";
import type { Task } from "../protocol/task";
import type {
  ApprovalAnswer,
  ApprovalRequest,
  QuestionAnswer,
  QuestionRequest,
} from "./access/approval-options";
import type { ChildTask, DelegateOptions, DelegateTarget } from "./delegation";
import type { HandlerMemory } from "./memory-source";

/** What an artifact update carries; `append` adds parts to an artifact already sent. */
export interface ArtifactUpdate {
  /** Reuse an id with `append: true` to stream chunks into one artifact. */
  artifactId?: string;
  name?: string;
  description?: string;
  parts: Part[];
  append?: boolean;
  lastChunk?: boolean;
  metadata?: JsonObject;
  kind?: string;
}

/** How a status message is kept. */
export interface StatusOptions {
  /** Stream it to watching clients without storing it as the status or in the history. */
  transient?: boolean;
}

/** Extra task metadata written with the final state, in the same transaction. */
export interface EndOptions {
  metadata?: JsonObject;
}

/**
 * Everything a handler gets for one run of a task. Every method writes to the task's
 * Durable Object at once (a SQLite row and an event-log entry), so subscribers see it
 * immediately and nothing is lost if the object restarts. (Called `TaskContext` before;
 * that name is kept as a deprecated alias.)
 * @example
 * const handler: AgentHandler = async (ctx: RunContext) => {
 *   ctx.status("Looking it up");
 *   return `You said: ${textOf(ctx.message.parts)}`;
 * };
 */
export interface RunContext<Env = unknown> {
  readonly taskId: string;
  readonly contextId: string;
  /** The message that started or resumed this run. */
  readonly message: Message;
  /** The task's messages so far, oldest first, `message` last. */
  readonly history: readonly Message[];
  /** Snapshot of the task when the run started. */
  readonly task: Task;
  /**
   * The whole conversation of this context (every earlier task's turns too), read-only,
   * loaded on first use.
   */
  readonly conversation: ReadonlyConversation;
  /**
   * The part of the conversation a model call sends, read back from its end without
   * loading the rest: the stored running summary, then the newest items within the
   * policy's budget. Over budget with a summarizer, the older part is summarized into a
   * new running summary (stored for later turns), then the window is truncated.
   * The user message this run answers is always in the window, however far back.
   * @example
   * const { items } = await ctx.conversationWindow({ maxTokens: 8000, summarizer });
   */
  conversationWindow(policy: WindowPolicy): Promise<ConversationWindow>;
  /** Aborted when the task is canceled; pass it to fetch and check it in loops. */
  readonly signal: AbortSignal;
  /** The worker's bindings and secrets. */
  readonly env: Env;
  /**
   * The caller's long-term memory, for a handler of its own when the agent has
   * `memory({...})` (`edgelink/memory`): recall and write it deliberately. Absent when memory
   * is off or the caller has none (anonymous). Model turns recall on their own.
   * @example
   * const recalled = await ctx.memory?.recall("What does the user drink?");
   */
  readonly memory?: HandlerMemory;
  /**
   * A progress message; the task stays working. `transient` ones are only streamed (and
   * pushed), not kept as the task's status or in its history.
   */
  status(message: string | Part[], options?: StatusOptions): void;
  /** Adds or extends an artifact; returns its id (for appending more chunks). */
  artifact(update: ArtifactUpdate): string;
  /** Ends the run waiting on the client (input-required) with a question. */
  requestInput(question: string | Part[]): void;
  /**
   * Asks a person to approve an action, durably: the first call with an `id` stores the
   * request and ends the run `input-required` (return right after); when the task resumes
   * with the decision, the handler runs again and the same call answers it.
   * @example
   * const d = ctx.approval({ id: "refund", action: "refund", arguments: { amount }, reason: "Over 100" });
   * if (!d) return; // asked: the task waits for the decision
   * if (d.decision !== "approve") return `Not refunded: ${d.reason ?? d.decision}`;
   */
  approval(request: ApprovalRequest): ApprovalAnswer | undefined;
  /**
   * Asks the user a question (optionally with choices), like `approval`: undefined once
   * asked, the answer when the task resumes.
   * @example
   * const a = ctx.ask({ id: "size", question: "Which size?", choices: ["S", "M", "L"] });
   * if (!a) return;
   */
  ask(question: QuestionRequest): QuestionAnswer | undefined;
  /** Ends the run waiting on credentials (auth-required). */
  requestAuth(explanation: string | Part[]): void;
  /**
   * Appends items to the context's conversation history under this task: what a model
   * needs on the next turn (its tool calls, their outputs, its answer). A message item
   * also shows in the task's A2A history. Validated before anything is written; returns
   * the stored items (ids and timestamps filled in).
   * @example
   * ctx.record([{ type: "function_call", name: "search", arguments: "{}", callId: "c1" }]);
   */
  record(items: ItemInput[]): Item[];
  /** Completes the task, optionally with a final agent message and metadata to merge. */
  complete(message?: string | Part[], options?: EndOptions): void;
  /** Fails the task; `message` is stored as `metadata.error`. */
  fail(message: string, options?: EndOptions): void;
  /** Rejects the task: the agent will not do it. */
  reject(reason: string): void;
  /**
   * Gives work to another agent: creates a child task there and returns a handle to
   * follow it (`for await` its events, `result()`, `answer()`, or `forward()` its progress
   * into this task). The child is recorded in this task's object, so after a restart the
   * handler runs again and the same call re-attaches to the same child (by `key`, by
   * default the call's order) and continues from the last event seen. Canceling this task
   * cancels its children.
   * @example
   * const child = ctx.delegate(ctx.env.WRITER, "Draft a haiku about the sea");
   * const task = await child.forward(); // its artifacts become this task's
   * return task.status.state === "completed" ? undefined : ctx.fail("the writer failed");
   */
  delegate(
    target: DelegateTarget,
    message: string | Part[] | MessageInput,
    options?: DelegateOptions,
  ): ChildTask;
}

/**
 * The former name of {@link RunContext}, kept so code written against it still compiles.
 * @deprecated Use `RunContext`: the object is per run of a handler, not the conversation
 * (which the A2A wire calls the context). This alias will be removed in a later major release.
 * @example
 * import type { RunContext } from "edgelink";
 * async function greet(ctx: RunContext): Promise<string> {
 *   return `Hello from task ${ctx.taskId}`;
 * }
 */
export type TaskContext<Env = unknown> = RunContext<Env>;

/**
 * A handler runs one turn of a task. Return nothing, a string or parts: a string or
 * parts become a `result` artifact, and a task still working afterwards is completed.
 * Throwing fails the task with the error's message.
 */
export type AgentHandler<Env = unknown> = (
  ctx: RunContext<Env>,
) => HandlerResult | Promise<HandlerResult>;

// `void` so that a handler with no return statement type-checks, async or not.
// biome-ignore lint/suspicious/noConfusingVoidType: see above
export type HandlerResult = string | Part[] | undefined | void;
