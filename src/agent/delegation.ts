import type { A2AClient } from "../client/a2a-client";
import { connect } from "../client/connect";
import { answerOf } from "../client/convert";
import type { AgentEvent } from "../client/types";
import type { PeerCard } from "../protocol/card/peer-card";
import type { JsonObject } from "../protocol/json";
import type { MessageInput } from "../protocol/message";
import type { Part } from "../protocol/part";
import type { Task } from "../protocol/task";
import { isInterrupted, isTerminal, type TaskState } from "../protocol/task-state";
import {
  A2A_TASK_ID,
  A2A_TASK_STATE,
  EDGELINK_DELEGATE_TARGET,
  endSpan,
  GEN_AI_CONVERSATION_ID,
  GEN_AI_OPERATION_NAME,
  inContext,
  OP_INVOKE_AGENT,
  SpanKind,
  startSpan,
  type Traced,
  traceContextOf,
  traceHeaders,
} from "../telemetry";
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

/** The stored form of a target: `url:`, `card:` or `binding:`. */
export function describeTarget(target: DelegateTarget, env: unknown): string {
  if (typeof target === "string" || target instanceof URL) return `url:${new URL(target).href}`;
  // A binding is found by identity among env's values: a service binding is an RPC stub
  // that claims to have every property, so its shape says nothing.
  const name = Object.entries((env ?? {}) as Record<string, unknown>).find(
    ([, value]) => value === target,
  )?.[0];
  if (name) return `binding:${name}`;
  if (Object.getPrototypeOf(target) !== Object.prototype) {
    throw new TypeError(
      "delegate: a service binding target must be one of this Worker's env bindings (pass env.NAME)",
    );
  }
  const binding = (target as { binding?: unknown }).binding;
  if (typeof binding === "string") return `binding:${binding}`;
  const card = JSON.stringify(target);
  if (card.length > 64 * 1024) throw new TypeError("delegate: the agent card is over 64 KiB");
  return `card:${card}`;
}

function isFetcher(target: unknown): target is Fetcher {
  return (
    typeof target === "object" &&
    target !== null &&
    typeof (target as { fetch?: unknown }).fetch === "function"
  );
}

/** Connects to a stored target (a binding is looked up in env again: it survives restarts). */
export function connectTarget(
  stored: string,
  env: unknown,
  options: {
    headers?: Record<string, string>;
    trustedOrigins?: readonly string[];
    signal?: AbortSignal;
    /** For a URL or card target (a binding has its own). */
    fetch?: typeof fetch;
  } = {},
): Promise<A2AClient> {
  if (stored.startsWith("binding:")) {
    const name = stored.slice("binding:".length);
    const binding = (env as Record<string, unknown> | undefined)?.[name];
    if (!isFetcher(binding)) {
      throw new TypeError(`delegate: env.${name} is not a service binding of this Worker`);
    }
    // The host is arbitrary: a service binding delivers whatever URL it is given.
    return connect(`https://${name.toLowerCase()}.binding/`, {
      ...options,
      fetch: (input, init) => binding.fetch(input as RequestInfo, init),
      // Whatever origin the peer's card names, the binding delivers to that one Worker.
      trustedOrigins: "any",
    });
  }
  if (stored.startsWith("card:"))
    return connect(JSON.parse(stored.slice(5)) as JsonObject, options);
  return connect(stored.slice(4), options);
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

/** The CLIENT span of one delegation (the child's whole run as this agent follows it). */
function startDelegation(host: DelegationHost, record: ChildRecord): Traced | undefined {
  const parent = traceContextOf(host);
  if (!parent) return undefined;
  const target = record.target.startsWith("card:") ? "card" : targetName(record.target);
  return startSpan(`${OP_INVOKE_AGENT} ${target}`, SpanKind.CLIENT, parent, {
    [GEN_AI_OPERATION_NAME]: OP_INVOKE_AGENT,
    [EDGELINK_DELEGATE_TARGET]: target,
    ...(record.childTaskId ? { [A2A_TASK_ID]: record.childTaskId } : {}),
  });
}

/** A stored target as a span shows it: the binding's name, or the URL's origin. */
function tracedFetch(traced: Traced): typeof fetch {
  return (input, init) => inContext(traced.ctx, () => fetch(input, init));
}

function targetName(stored: string): string {
  if (stored.startsWith("binding:")) return stored;
  try {
    return new URL(stored.slice(4)).origin;
  } catch {
    return "url";
  }
}

function endDelegation(traced: Traced | undefined, record: ChildRecord, error?: unknown): void {
  if (!traced) return;
  if (record.childTaskId) traced.span.setAttribute(A2A_TASK_ID, record.childTaskId);
  if (record.childContextId) {
    traced.span.setAttribute(GEN_AI_CONVERSATION_ID, record.childContextId);
  }
  traced.span.setAttribute(A2A_TASK_STATE, record.state);
  endSpan(traced, error);
}

const FINAL = (state: string) =>
  isTerminal(state as TaskState) || isInterrupted(state as TaskState);

class Child implements ChildTask {
  private consumed = false;
  private final: Task | null = null;
  /** The answer `reply()` sends before following the child again. */
  private replying: string | Part[] | MessageInput | null = null;

  constructor(
    private readonly host: DelegationHost,
    private readonly ledger: ChildLedger,
    private readonly record: ChildRecord,
    private readonly message: string | Part[] | MessageInput,
    private readonly options: DelegateOptions,
  ) {}

  get taskId(): string | undefined {
    return this.record.childTaskId ?? undefined;
  }

  [Symbol.asyncIterator](): AsyncIterator<AgentEvent> {
    return this.events();
  }

  async *events(): AsyncGenerator<AgentEvent> {
    if (this.consumed) throw new Error("delegate: a child's events can be read only once");
    this.consumed = true;
    const record = this.record;
    const reply = isInterrupted(record.state as TaskState) ? this.replying : null;
    this.replying = null;
    // Seen to its end before a restart: nothing left to read (`result()` fetches the task).
    if (record.childTaskId && FINAL(record.state) && reply === null) return;
    const traced = startDelegation(this.host, record);
    let client: A2AClient;
    try {
      client = await this.client(traced);
    } catch (error) {
      endDelegation(traced, record, error);
      throw error;
    }
    const own = this.options.signal;
    const signal = own ? AbortSignal.any([this.host.signal, own]) : this.host.signal;
    if (reply !== null && record.childTaskId !== null) {
      // Sent, then followed from the last event seen: a stream would open with the task
      // as it waited, which reads as its end.
      try {
        await client.send(reply, { taskId: record.childTaskId, returnImmediately: true, signal });
      } catch (error) {
        endDelegation(traced, record, error);
        throw error;
      }
    }
    const source =
      record.childTaskId === null
        ? client.stream(this.message, {
            contextId: this.options.contextId ?? record.childContextId ?? undefined,
            metadata: this.options.metadata,
            signal,
          })
        : client.subscribe(record.childTaskId, {
            lastEventId: record.lastEventId ?? undefined,
            signal,
          });
    // An event is marked seen when the consumer asks for the next one, in the same
    // synchronous stretch as the consumer's own writes for it (one implicit transaction of
    // the object): what `forward()` wrote and the cursor commit together, and what a
    // consumer was handling when the object stopped is handed to it again.
    let failure: unknown;
    try {
      for await (const event of source) {
        const change = this.progress(event);
        if (change.childTaskId && record.childTaskId === null) {
          // The child's id is saved at once: without it a restart would send again.
          this.save({ childTaskId: change.childTaskId, childContextId: change.childContextId });
        }
        // A reply's stream opens with the task as it waited: only the last word counts.
        if (event.kind === "task") this.final = FINAL(event.task.status.state) ? event.task : null;
        else if (event.kind === "status-update") this.final = null;
        yield event;
        this.save(change);
      }
    } catch (error) {
      failure = error;
      if (own?.aborted && !this.host.signal.aborted && record.childTaskId) {
        // Given up on (best effort: it may have ended meanwhile).
        await client.cancel(record.childTaskId).catch(() => {});
      }
      throw error;
    } finally {
      endDelegation(traced, record, failure);
    }
  }

  /** The ledger change an event makes. */
  private progress(event: AgentEvent): Partial<ChildRecord> {
    const change: Partial<ChildRecord> = {};
    if (event.eventId !== undefined) change.lastEventId = event.eventId;
    if (event.kind === "task") {
      change.childTaskId = event.task.id;
      change.childContextId = event.task.contextId;
      change.state = event.task.status.state;
    } else if (event.kind === "status-update") {
      change.childTaskId = event.taskId;
      change.childContextId = event.contextId;
      change.state = event.status.state;
    } else if (event.kind === "artifact-update") {
      change.childTaskId = event.taskId;
      change.childContextId = event.contextId;
    } else {
      // A direct message answer: no task to follow.
      change.state = "completed";
    }
    return change;
  }

  private save(change: Partial<ChildRecord>): void {
    Object.assign(this.record, change);
    this.ledger.update(this.host.taskId, this.record.key, change);
  }

  reply(message: string | Part[] | MessageInput): ChildTask {
    if (!this.record.childTaskId)
      throw new Error("delegate: a child is answered once it has a task");
    this.replying = message;
    this.consumed = false;
    this.final = null;
    return this;
  }

  async result(): Promise<Task> {
    if (!this.consumed) for await (const _ of this.events());
    return this.finalTask();
  }

  async answer(): Promise<string> {
    return answerOf(await this.result());
  }

  async forward(): Promise<Task> {
    const prefix = `${this.record.key}/`;
    for await (const event of this.events()) {
      if (event.kind === "status-update" && event.status.message && !FINAL(event.status.state)) {
        this.host.status(event.status.message.parts);
      } else if (event.kind === "artifact-update") {
        // A deterministic id per child artifact, so chunks after a restart extend the same one.
        this.host.artifact({
          artifactId: `${prefix}${event.artifact.artifactId}`,
          name: event.artifact.name ?? undefined,
          description: event.artifact.description ?? undefined,
          parts: event.artifact.parts,
          append: event.append,
          lastChunk: event.lastChunk,
        });
      }
    }
    return this.finalTask();
  }

  private async finalTask(): Promise<Task> {
    if (this.final) return this.final;
    if (!this.record.childTaskId)
      throw new Error("delegate: the other agent answered with no task");
    const client = await this.client();
    this.final = await client.getTask(this.record.childTaskId, { signal: this.host.signal });
    return this.final;
  }

  private clientPromise: Promise<A2AClient> | null = null;
  private client(traced?: Traced): Promise<A2AClient> {
    // While tracing, the child's requests carry this delegation's span: one trace.
    const trace = traceHeaders(traced?.ctx);
    this.clientPromise ??= connectTarget(this.record.target, this.host.env, {
      headers: trace ? { ...this.options.headers, ...trace } : this.options.headers,
      // An instrumented `fetch` (otel-cf-workers) takes its parent from the active context.
      ...(traced ? { fetch: tracedFetch(traced) } : {}),
      trustedOrigins: this.options.trustedOrigins,
      signal: this.host.signal,
    });
    return this.clientPromise;
  }
}
