/** Small helpers around the official A2A JS SDK (@a2a-js/sdk 1.3) for the e2e tests. */
import {
  type Artifact,
  type Message,
  type Part,
  SendMessageRequest,
  type SendMessageResult,
  type StreamResponse,
  type Task,
  TaskState,
} from "@a2a-js/sdk";
import { type Client, ClientFactory, ClientFactoryOptions } from "@a2a-js/sdk/client";

/** The two A2A v1.0 protocol bindings Edgelink serves, as the SDK names them. */
export type Binding = "JSONRPC" | "HTTP+JSON";

/**
 * An SDK client built the way a real peer would: download the agent card from
 * `/.well-known/agent-card.json`, then pick the interface of the preferred binding.
 */
export async function sdkClient(baseUrl: string, binding: Binding): Promise<Client> {
  const options = ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    preferredTransports: [binding],
  });
  return new ClientFactory(options).createFromUrl(baseUrl);
}

export interface MessageOptions {
  /** A2A tenant (v1 `tenant` field; a `/{tenant}` path prefix on HTTP+JSON). */
  tenant?: string;
  taskId?: string;
  contextId?: string;
  returnImmediately?: boolean;
  historyLength?: number;
}

/** A SendMessageRequest with one user message made of `parts` (v1 ProtoJSON parts). */
export function sendRequest(parts: object[], options: MessageOptions = {}): SendMessageRequest {
  const configuration: Record<string, unknown> = {};
  if (options.returnImmediately !== undefined) {
    configuration.returnImmediately = options.returnImmediately;
  }
  if (options.historyLength !== undefined) configuration.historyLength = options.historyLength;
  return SendMessageRequest.fromJSON({
    ...(options.tenant ? { tenant: options.tenant } : {}),
    message: {
      messageId: crypto.randomUUID(),
      role: "ROLE_USER",
      parts,
      ...(options.taskId ? { taskId: options.taskId } : {}),
      ...(options.contextId ? { contextId: options.contextId } : {}),
    },
    configuration,
  });
}

/** A SendMessageRequest with one user text part. */
export function textRequest(text: string, options: MessageOptions = {}): SendMessageRequest {
  return sendRequest([{ text }], options);
}

/** SendMessage may answer with a Message or a Task; these tests always expect a Task. */
export function asTask(result: SendMessageResult): Task {
  if (!("status" in result) || !("id" in result)) {
    throw new Error(`Expected a Task, got a Message: ${JSON.stringify(result)}`);
  }
  return result;
}

/** Concatenated text of the text parts. */
export function textOf(parts: readonly Part[] | undefined): string {
  return (parts ?? []).map((p) => (p.content?.$case === "text" ? p.content.value : "")).join("");
}

export function stateOf(task: Task): TaskState | undefined {
  return task.status?.state;
}

/** Name of a TaskState for readable assertion failures, e.g. "TASK_STATE_COMPLETED". */
export function stateName(state: TaskState | undefined): string {
  return state === undefined ? "undefined" : TaskState[state];
}

/** Text of the message attached to a task's current status. */
export function statusText(task: Task): string {
  return textOf(task.status?.message?.parts);
}

export function artifactNamed(task: Task, name: string): Artifact | undefined {
  return task.artifacts.find((a) => a.name === name);
}

/** The `newState`s Edgelink records in the task metadata (`edgelink/stateHistory`, B6). */
export function stateHistory(task: Task): string[] {
  const history = task.metadata?.["edgelink/stateHistory"];
  if (!Array.isArray(history)) return [];
  return history.map((h: { newState?: unknown }) => String(h.newState));
}

export function roles(messages: readonly Message[]): number[] {
  return messages.map((m) => m.role);
}

/** Drains an SDK event stream into an array. */
export async function collect(stream: AsyncIterable<StreamResponse>): Promise<StreamResponse[]> {
  const events: StreamResponse[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

/** A short, readable label of a stream event, for assertion messages. */
export function describeEvent(event: StreamResponse): string {
  const p = event.payload;
  switch (p?.$case) {
    case "task":
      return `task:${stateName(p.value.status?.state)}`;
    case "statusUpdate":
      return `status:${stateName(p.value.status?.state)}:${textOf(p.value.status?.message?.parts)}`;
    case "artifactUpdate":
      return `artifact:${p.value.artifact?.name}:${JSON.stringify(textOf(p.value.artifact?.parts))}`;
    case "message":
      return `message:${textOf(p.value.parts)}`;
    default:
      return "empty";
  }
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Calls `fn` until `done(value)` holds; fails with the last value after `timeoutMs`. */
export async function pollUntil<T>(
  fn: () => Promise<T>,
  done: (value: T) => boolean,
  { timeoutMs = 10_000, intervalMs = 100 } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await fn();
    if (done(value)) return value;
    if (Date.now() > deadline) {
      throw new Error(
        `pollUntil timed out after ${timeoutMs} ms; last value: ${JSON.stringify(value)}`,
      );
    }
    await sleep(intervalMs);
  }
}

/** Runs `fn`, expecting it to reject; returns the rejection reason. */
export async function rejectionOf(fn: () => Promise<unknown>): Promise<unknown> {
  try {
    await fn();
  } catch (error) {
    return error;
  }
  throw new Error("Expected the call to fail, but it succeeded");
}
