import type { AgentEvent } from "../client/types";
import type { PeerCard } from "../protocol/card/peer-card";
import type { JsonObject } from "../protocol/json";
import type { MessageInput } from "../protocol/message";
import type { Part } from "../protocol/part";
import type { Task } from "../protocol/task";
import { Child } from "./child-task";
import { describeTarget } from "./delegation-target";
import type { ArtifactUpdate } from "./run-context";

/**
 * Another agent to delegate to: its URL (the card is read from it), its card, a service
 * binding to another Worker (`env.PEER`, called without a network hop), or a binding's
 * name (`{ binding: "PEER" }`, the form `agents` takes since env is known only per task).
 */
export type DelegateTarget = string | URL | PeerCard | JsonObject | Fetcher | { binding: string };

export interface DelegateOptions {
  /**
   * Identifies this delegation within the task. A handler that runs again after a restart
   * of the object re-attaches to the child with the same key instead of sending again.
   * Default: the order of the `delegate` calls in the run (`"1"`, `"2"`, ...).
   */
  key?: string;
  /** Continue the child's conversation. */
  contextId?: string;
  /**
   * Headers for every call to the other agent (auth, for example). They go only to the
   * origin of the target's URL (or of the endpoint of a card you pass), never after a
   * redirect; a service binding gets them whatever its card says.
   */
  headers?: Record<string, string>;
  /**
   * Other origins the headers may go to: those of a peer whose card, read from its URL,
   * names an endpoint on another host. Default: none.
   */
  trustedOrigins?: readonly string[];
  metadata?: JsonObject;
  /**
   * Stops following the child, and cancels it, when aborted (a tool timeout, say). The
   * task's own cancellation needs nothing: the task's object cancels its children.
   */
  signal?: AbortSignal;
}

/** A task delegated to another agent, followed durably by the parent's object. */
export interface ChildTask extends AsyncIterable<AgentEvent> {
  /** The child's task id, once the other agent answered. */
  readonly taskId: string | undefined;
  /**
   * The child's events, from where this parent last was (after a restart: the events it
   * had not seen yet). One consumer only; `result()` and `forward()` consume them too.
   */
  events(): AsyncGenerator<AgentEvent>;
  /** Waits for the child to finish (or to need input) and returns its task. */
  result(): Promise<Task>;
  /** `result()`, as text: its artifacts' text, else its status message's. */
  answer(): Promise<string>;
  /**
   * Forwards the child's progress into this task as it happens: its status messages as
   * status updates, its artifacts (chunks included) as artifacts of this task. Returns the
   * child's final task. After a restart, only what was not forwarded yet is forwarded.
   */
  forward(): Promise<Task>;
  /**
   * Answers a child that ended `input-required` (a decision on its held calls, say):
   * sends it `message` and follows it from there; read the outcome with `result()`,
   * `answer()`, `events()` or `forward()` again. A child no longer waiting is only
   * followed. Give the message a `messageId` that is the same when this run runs again:
   * the child takes a message sent twice once.
   * @example
   * let task = await child.result();
   * if (task.status.state === "input-required") task = await child.reply("Yes").result();
   */
  reply(message: string | Part[] | MessageInput): ChildTask;
}

/** The message a caller's decision is relayed to a child with. */
export interface RelayReply {
  /** The same when the run runs again, so a reply sent twice is taken once. */
  messageId: string;
  parts: Part[];
}

/**
 * Where agents called as tools relay a request for input to the parent's caller (the
 * parent's turn holds it) and find the caller's answer to send back to the child.
 */
export interface ChildRelay {
  /** The answer to send the child of this call, when the caller gave one. */
  replyFor(callId: string): RelayReply | undefined;
  /** The child took the answer. */
  replied(callId: string): void;
  /** The child of this call asks for input: true when relayed (the call waits for it). */
  ask(callId: string, agent: string, task: Task): boolean;
  /** Whether the child of this call asked (its call has no result yet). */
  asked(callId: string): boolean;
  /** Whether any child asked this round. */
  first(): unknown;
}

/** A child row as the parent's object keeps it. */
export interface ChildRecord {
  key: string;
  target: string;
  childTaskId: string | null;
  childContextId: string | null;
  lastEventId: string | null;
  state: string;
}

/** Where a parent's children are kept (its Durable Object's SQLite). */
export interface ChildLedger {
  get(parentTaskId: string, key: string): ChildRecord | null;
  create(parentTaskId: string, record: ChildRecord): void;
  update(parentTaskId: string, key: string, change: Partial<ChildRecord>): void;
}

/** What delegation needs from the parent's run. */
export interface DelegationHost {
  readonly taskId: string;
  readonly signal: AbortSignal;
  readonly env: unknown;
  status(message: string | Part[]): void;
  artifact(update: ArtifactUpdate): string;
}

/** Makes delegations for one run of a parent task. */
export class Delegator {
  private calls = 0;

  constructor(
    private readonly host: DelegationHost,
    private readonly ledger: ChildLedger,
  ) {}

  delegate(
    target: DelegateTarget,
    message: string | Part[] | MessageInput,
    options: DelegateOptions = {},
  ): ChildTask {
    this.calls += 1;
    const key = options.key ?? String(this.calls);
    const parent = this.host.taskId;
    let record = this.ledger.get(parent, key);
    if (!record) {
      record = {
        key,
        target: describeTarget(target, this.host.env),
        childTaskId: null,
        childContextId: null,
        lastEventId: null,
        state: "sending",
      };
      this.ledger.create(parent, record);
    }
    return new Child(this.host, this.ledger, record, message, options);
  }
}
