import * as z from "zod";
import type { CompactionRequestInput, CompactionResult } from "../history/compaction";
import { Item } from "../history/items";
import { PROFILE_EXTENSION } from "../models/agent-card";
import type { TaskEvent } from "../models/events";
import type { JsonObject, JsonValue } from "../models/json";
import type { PeerCard, PeerInterface } from "../models/peer-card";
import { parsePeerCard } from "../models/peer-card";
import type { Task } from "../models/task";
import { isInterrupted, isTerminal } from "../models/task-state";
import { messageToV1, stateToV1, taskFromV1, V1Task } from "../models/wire-v1";
import { messageToV03, taskFromV03, V03Task } from "../models/wire-v03";
import { eventFromV03, V03StreamEvent } from "../models/wire-v03-events";
import { streamResponseToEvent, taskIdOf, V1StreamResponse } from "../push/stream-response";
import { compactConfig, isObj, pushToV1, pushToV03, read, toMessage } from "./convert";
import { A2AConnectionError, invalidResponse, UnsupportedOperationError } from "./errors";
import { MemoryClient } from "./memory";
import type { Binding, StreamItem, Transport, Version } from "./transport";
import type {
  AgentEvent,
  HistoryPage,
  ListTasksOptions,
  MessageLike,
  PushConfigInit,
  PushNotificationConfig,
  ResumeOptions,
  SendOptions,
  SendResult,
  StreamOptions,
  SubscribeOptions,
  TaskPage,
} from "./types";

export const DEFAULT_RESUME = { retries: 5, delayMs: 250, maxDelayMs: 4000 };
const CALL = { signal: undefined as AbortSignal | undefined };

const V1PushConfig = z.object({
  id: z.string().default(""),
  taskId: z.string().default(""),
  url: z.string(),
  token: z.string().optional(),
  authentication: z.object({ scheme: z.string(), credentials: z.string().optional() }).optional(),
});
const V03PushConfig = z.object({
  taskId: z.string(),
  pushNotificationConfig: z.object({
    id: z.string().default(""),
    url: z.string(),
    token: z.string().optional(),
    authentication: z
      .object({ schemes: z.array(z.string()), credentials: z.string().optional() })
      .optional(),
  }),
});

/** Whether an event ends a stream (terminal or interrupted task, or a direct message). */
function isFinal(event: TaskEvent): boolean {
  switch (event.kind) {
    case "message":
      return true;
    case "task":
      return isTerminal(event.task.status.state) || isInterrupted(event.task.status.state);
    case "status-update":
      return event.final || isTerminal(event.status.state) || isInterrupted(event.status.state);
    case "artifact-update":
      return false;
  }
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        reject(signal.reason);
      },
      { once: true },
    );
  });

/**
 * A connection to one A2A agent, made by `connect`. Speaks the binding and version chosen
 * from the agent's card; every method throws the typed errors of `./errors`.
 */
export class A2AClient {
  /** The agent's card (v0.3 cards are read into the v1 shape). */
  readonly card: PeerCard;
  /** The interface in use. */
  readonly endpoint: PeerInterface;
  /** True when the agent is an Edgelink agent (history and compaction calls work). */
  readonly isEdgelink: boolean;
  private readonly transport: Transport;
  private readonly resume: ResumeOptions | false;
  /** The agent's long-term memory routes, when it serves them (`memory({ api: true })`). */
  readonly memory: MemoryClient;

  constructor(
    card: PeerCard,
    endpoint: PeerInterface,
    transport: Transport,
    resume: ResumeOptions | false,
  ) {
    this.card = card;
    this.endpoint = endpoint;
    this.transport = transport;
    this.resume = resume;
    this.memory = new MemoryClient(transport);
    this.isEdgelink = (card.capabilities.extensions ?? []).some((e) => e.uri === PROFILE_EXTENSION);
  }

  get binding(): Binding {
    return this.transport.binding;
  }
  /** The protocol version spoken: "1.0", or "0.3" for a v0.3-only agent. */
  get version(): Version {
    return this.transport.version;
  }

  // ---- messages -------------------------------------------------------------------

  /**
   * SendMessage. Blocks until the task finishes or needs input, unless
   * `returnImmediately`.
   * @example
   * const result = await agent.send("What is 2 + 2?");
   * if (result.kind === "task") console.log(result.task.status.state, answerOf(result));
   */
  async send(input: MessageLike, options: SendOptions = {}): Promise<SendResult> {
    const result = await this.transport.call(
      "send",
      this.sendParams(input, options, options.returnImmediately ?? false),
      options.signal,
    );
    return this.sendResult(result);
  }

  /**
   * SendStreamingMessage: the task's events as they happen. If the connection drops once
   * the task is known, the stream resumes with SubscribeToTask and `Last-Event-ID`.
   * @example
   * for await (const event of agent.stream("tell me a story")) {
   *   if (event.kind === "artifact-update") process.stdout.write(textOf(event.artifact.parts));
   * }
   */
  stream(input: MessageLike, options: StreamOptions = {}): AsyncGenerator<AgentEvent> {
    const params = this.sendParams(input, options, false);
    return this.follow(
      (lastEventId) =>
        lastEventId === undefined
          ? this.transport.open("stream", params, { signal: options.signal })
          : undefined,
      { taskId: undefined, lastEventId: undefined, resume: options.resume, signal: options.signal },
    );
  }

  /**
   * SubscribeToTask: a running task's events, resuming automatically (with
   * `Last-Event-ID`) when the connection drops, up to the resume limit.
   * @example
   * for await (const event of agent.subscribe(taskId)) console.log(event.kind);
   */
  subscribe(taskId: string, options: SubscribeOptions = {}): AsyncGenerator<AgentEvent> {
    return this.follow(() => undefined, {
      taskId,
      lastEventId: options.lastEventId,
      resume: options.resume,
      signal: options.signal,
      resumeFirst: true,
    });
  }

  // ---- tasks ----------------------------------------------------------------------

  /** GetTask. @example const task = await agent.getTask(id, { historyLength: 10 }); */
  async getTask(id: string, options: { historyLength?: number; signal?: AbortSignal } = {}) {
    const params: JsonObject = { id };
    if (options.historyLength !== undefined) params.historyLength = options.historyLength;
    return this.taskOf(await this.transport.call("get", params, options.signal));
  }

  /** CancelTask; answers the task as it is after the cancel. */
  async cancel(id: string, options: { metadata?: JsonObject; signal?: AbortSignal } = {}) {
    const params: JsonObject = { id };
    if (options.metadata) params.metadata = options.metadata;
    return this.taskOf(await this.transport.call("cancel", params, options.signal));
  }

  /**
   * ListTasks, page after page (newest first), until the last page or until you stop.
   * @example
   * for await (const page of agent.listTasks({ pageSize: 20 })) {
   *   for (const task of page.tasks) console.log(task.id, task.status.state);
   *   break; // only the first page
   * }
   */
  async *listTasks(options: ListTasksOptions = {}): AsyncGenerator<TaskPage> {
    let pageToken = options.pageToken;
    for (;;) {
      const params: JsonObject = {};
      if (options.contextId) params.contextId = options.contextId;
      if (options.state) params.status = stateToV1(options.state);
      if (options.pageSize !== undefined) params.pageSize = options.pageSize;
      if (pageToken) params.pageToken = pageToken;
      if (options.historyLength !== undefined) params.historyLength = options.historyLength;
      if (options.statusTimestampAfter) params.statusTimestampAfter = options.statusTimestampAfter;
      if (options.includeArtifacts !== undefined)
        params.includeArtifacts = options.includeArtifacts;
      const raw = await this.transport.call("list", params, options.signal);
      const page = read(
        z.object({
          tasks: z.array(z.unknown()).default([]),
          nextPageToken: z.string().default(""),
          pageSize: z.number().optional(),
          totalSize: z.number().optional(),
        }),
        raw,
        "task list",
      );
      yield { ...page, tasks: page.tasks.map((t) => this.taskOf(t as JsonValue)) };
      if (!page.nextPageToken || page.nextPageToken === pageToken) return;
      pageToken = page.nextPageToken;
    }
  }

  // ---- push notifications -----------------------------------------------------------

  /**
   * Registers a webhook for a task's events (CreateTaskPushNotificationConfig).
   * @example
   * await agent.createPushConfig(taskId, { url: "https://hooks.example.com/a2a", token: "t" });
   */
  async createPushConfig(
    taskId: string,
    config: PushConfigInit,
    options = CALL,
  ): Promise<PushNotificationConfig> {
    const params: JsonObject =
      this.version === "1.0"
        ? { ...pushToV1(config), taskId }
        : { taskId, pushNotificationConfig: pushToV03(config) };
    return this.pushConfigOf(await this.transport.call("pushCreate", params, options.signal));
  }

  async getPushConfig(taskId: string, id: string, options = CALL): Promise<PushNotificationConfig> {
    const params: JsonObject =
      this.version === "1.0" ? { taskId, id } : { id: taskId, pushNotificationConfigId: id };
    return this.pushConfigOf(await this.transport.call("pushGet", params, options.signal));
  }

  /** One page of a task's webhook configs (v0.3 agents answer all at once). */
  async listPushConfigs(
    taskId: string,
    options: { pageSize?: number; pageToken?: string; signal?: AbortSignal } = {},
  ): Promise<{ configs: PushNotificationConfig[]; nextPageToken: string }> {
    if (this.version === "0.3") {
      const raw = await this.transport.call("pushList", { id: taskId }, options.signal);
      const list = read(z.array(z.unknown()), raw, "push config list");
      return { configs: list.map((c) => this.pushConfigOf(c as JsonValue)), nextPageToken: "" };
    }
    const params: JsonObject = { taskId };
    if (options.pageSize !== undefined) params.pageSize = options.pageSize;
    if (options.pageToken) params.pageToken = options.pageToken;
    const raw = await this.transport.call("pushList", params, options.signal);
    const page = read(
      z.object({
        configs: z.array(z.unknown()).default([]),
        nextPageToken: z.string().default(""),
      }),
      raw,
      "push config list",
    );
    return {
      configs: page.configs.map((c) => this.pushConfigOf(c as JsonValue)),
      nextPageToken: page.nextPageToken,
    };
  }

  /** DeleteTaskPushNotificationConfig (deleting twice is fine). */
  async deletePushConfig(taskId: string, id: string, options = CALL): Promise<void> {
    const params: JsonObject =
      this.version === "1.0" ? { taskId, id } : { id: taskId, pushNotificationConfigId: id };
    await this.transport.call("pushDelete", params, options.signal);
  }

  // ---- cards ----------------------------------------------------------------------

  /** GetExtendedAgentCard (the card for authenticated callers). */
  async extendedCard(options = CALL): Promise<PeerCard> {
    const raw = await this.transport.call("extendedCard", {}, options.signal);
    try {
      return parsePeerCard(raw);
    } catch (error) {
      throw invalidResponse(`the extended card is malformed: ${(error as Error).message}`);
    }
  }

  // ---- Edgelink's own calls ---------------------------------------------------------

  /**
   * A conversation's history, page after page, oldest first (Edgelink agents only).
   * @example
   * for await (const page of agent.history(contextId, { pageSize: 50 })) console.log(page.items);
   */
  async *history(
    contextId: string,
    options: { pageSize?: number; pageToken?: string; signal?: AbortSignal } = {},
  ): AsyncGenerator<HistoryPage> {
    this.requireEdgelink("history");
    let pageToken = options.pageToken;
    for (;;) {
      const params: JsonObject = { contextId };
      if (options.pageSize !== undefined) params.pageSize = options.pageSize;
      if (pageToken) params.pageToken = pageToken;
      const raw = await this.transport.call("history", params, options.signal);
      const page = read(
        z.object({
          items: z.array(Item),
          nextPageToken: z.string().default(""),
          totalSize: z.number().optional(),
        }),
        raw,
        "history page",
      );
      yield page;
      if (!page.nextPageToken || page.nextPageToken === pageToken) return;
      pageToken = page.nextPageToken;
    }
  }

  /**
   * Compacts a conversation's history (Edgelink agents only).
   * @example
   * const { removed } = await agent.compact(contextId, { strategy: "recent", maxMessages: 4 });
   */
  async compact(
    contextId: string,
    request: CompactionRequestInput = {},
    options = CALL,
  ): Promise<CompactionResult> {
    this.requireEdgelink("compact");
    const raw = await this.transport.call(
      "compact",
      { ...(request as JsonObject), contextId },
      options.signal,
    );
    return read(
      z.object({
        strategy: z.enum(["recent", "tokens", "summary"]),
        beforeMessages: z.number(),
        afterMessages: z.number(),
        removed: z.number(),
        beforeTokens: z.number(),
        afterTokens: z.number(),
        summaryCreated: z.boolean(),
      }),
      raw,
      "compaction result",
    );
  }

  /** Webhook deliveries of a task that were given up on (Edgelink agents only). */
  async deadLetters(taskId: string, options = CALL): Promise<JsonObject[]> {
    this.requireEdgelink("deadLetters");
    const raw = await this.transport.call("deadLetters", { id: taskId }, options.signal);
    return read(
      z.object({ deliveries: z.array(z.record(z.string(), z.unknown())) }),
      raw,
      "dead letters",
    ).deliveries as JsonObject[];
  }

  /** Queues a task's dead-lettered deliveries again; answers how many (Edgelink agents only). */
  async redeliver(taskId: string, options = CALL): Promise<number> {
    this.requireEdgelink("redeliver");
    const raw = await this.transport.call("redeliver", { id: taskId }, options.signal);
    return read(z.object({ redelivered: z.number() }), raw, "redelivery").redelivered;
  }

  // ---- internals ------------------------------------------------------------------

  private requireEdgelink(what: string): void {
    if (this.isEdgelink) return;
    throw new UnsupportedOperationError({
      message: `${what} is an Edgelink call, and ${this.card.name} is not an Edgelink agent`,
      code: -32004,
      httpStatus: 0,
    });
  }

  private sendParams(
    input: MessageLike,
    options: SendOptions,
    returnImmediately: boolean,
  ): JsonObject {
    const message = toMessage(input, options);
    const configuration: JsonObject = {};
    if (options.acceptedOutputModes)
      configuration.acceptedOutputModes = options.acceptedOutputModes;
    if (options.historyLength !== undefined) configuration.historyLength = options.historyLength;
    if (this.version === "1.0") {
      if (returnImmediately) configuration.returnImmediately = true;
      if (options.pushConfig)
        configuration.taskPushNotificationConfig = pushToV1(options.pushConfig);
    } else {
      configuration.blocking = !returnImmediately;
      if (options.pushConfig) configuration.pushNotificationConfig = pushToV03(options.pushConfig);
    }
    const params: JsonObject = {
      message: this.version === "1.0" ? messageToV1(message) : messageToV03(message),
    };
    if (Object.keys(configuration).length) params.configuration = configuration;
    if (options.metadata) params.metadata = options.metadata;
    return params;
  }

  private sendResult(raw: JsonValue): SendResult {
    if (this.version === "1.0") {
      if (isObj(raw) && raw.message !== undefined && raw.task === undefined) {
        const event = this.eventOf(raw);
        if (event.kind === "message") return { kind: "message", message: event.message };
      }
      const body = isObj(raw) && raw.task !== undefined ? raw.task : raw;
      return { kind: "task", task: this.taskOf(body) };
    }
    const event = this.eventOf(raw);
    if (event.kind === "message") return event;
    if (event.kind === "task") return event;
    throw invalidResponse(
      `SendMessage answered a ${event.kind} event instead of a task or message`,
    );
  }

  private taskOf(raw: JsonValue | undefined): Task {
    return this.version === "1.0"
      ? taskFromV1(read(V1Task, raw, "task"))
      : taskFromV03(read(V03Task, raw, "task"));
  }

  private eventOf(raw: JsonValue): TaskEvent {
    return this.version === "1.0"
      ? streamResponseToEvent(read(V1StreamResponse, raw, "stream event"))
      : eventFromV03(read(V03StreamEvent, raw, "stream event"));
  }

  private pushConfigOf(raw: JsonValue | undefined): PushNotificationConfig {
    if (this.version === "1.0") {
      const c = read(V1PushConfig, raw, "push config");
      return compactConfig({ ...c });
    }
    const c = read(V03PushConfig, raw, "push config");
    const p = c.pushNotificationConfig;
    return compactConfig({
      id: p.id,
      taskId: c.taskId,
      url: p.url,
      token: p.token,
      authentication: p.authentication && {
        scheme: p.authentication.schemes[0] ?? "",
        ...(p.authentication.credentials ? { credentials: p.authentication.credentials } : {}),
      },
    });
  }

  /**
   * The resume loop shared by `stream` and `subscribe`. `first` opens the initial
   * connection (undefined: start with SubscribeToTask). After a drop (an
   * `A2AConnectionError`, or a body that ends before a final event) it resubscribes with
   * the last event id, up to `retries` times in a row; each new event resets the count.
   */
  private async *follow(
    first: (lastEventId: string | undefined) => AsyncGenerator<StreamItem> | undefined,
    state: {
      taskId: string | undefined;
      lastEventId: string | undefined;
      resume: ResumeOptions | false | undefined;
      signal: AbortSignal | undefined;
      resumeFirst?: boolean;
    },
  ): AsyncGenerator<AgentEvent> {
    const resume = state.resume ?? this.resume;
    const limits = resume === false ? null : { ...DEFAULT_RESUME, ...resume };
    let { taskId, lastEventId } = state;
    let failures = 0;
    let opened = first(lastEventId);
    for (;;) {
      let lost: unknown;
      try {
        const items =
          opened ??
          this.transport.open(
            "subscribe",
            { id: taskId ?? "" },
            {
              lastEventId,
              signal: state.signal,
            },
          );
        opened = undefined;
        for await (const item of items) {
          // An event seen already (a peer replaying after a reconnection) is no progress.
          if (item.id !== undefined && item.id === lastEventId) continue;
          const event = this.eventOf(item.payload);
          if (item.id !== undefined) lastEventId = item.id;
          taskId ??= taskIdOf(event);
          // New events reset the retry count; a bare snapshot after a reconnection does
          // not, so a peer that drops every connection after its snapshot is given up on.
          if (event.kind !== "task") failures = 0;
          yield item.id === undefined ? event : { ...event, eventId: item.id };
          if (isFinal(event)) return;
        }
        lost = new A2AConnectionError(
          `the stream of ${taskId ? `task ${taskId}` : "the message"} ended before the task finished`,
          this.endpoint.url,
        );
      } catch (error) {
        if (!(error instanceof A2AConnectionError) || state.signal?.aborted) {
          // A resubscription refused because the task finished meanwhile (servers that
          // keep no event log): its final state is what the caller missed.
          if (error instanceof UnsupportedOperationError && failures > 0 && taskId) {
            yield { kind: "task", task: await this.getTask(taskId, { signal: state.signal }) };
            return;
          }
          throw error;
        }
        lost = error;
      }
      if (!limits || !taskId || failures >= limits.retries) throw lost;
      failures++;
      limits.onRetry?.(failures, lost);
      await sleep(Math.min(limits.maxDelayMs, limits.delayMs * 2 ** (failures - 1)), state.signal);
    }
  }
}
