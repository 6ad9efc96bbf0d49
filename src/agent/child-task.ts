import type { A2AClient } from "../client/a2a-client";
import { answerOf } from "../client/convert";
import type { AgentEvent } from "../client/types";
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
import type {
  ChildLedger,
  ChildRecord,
  ChildTask,
  DelegateOptions,
  DelegationHost,
} from "./delegation";
import { connectTarget } from "./delegation-target";

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

/** A delegated child, followed from its ledger row: what a `delegate` call returns. */
export class Child implements ChildTask {
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
