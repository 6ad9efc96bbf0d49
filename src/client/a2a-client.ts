import * as z from "zod";
import type { CompactionRequestInput, CompactionResult } from "../history/compaction";
import { PROFILE_EXTENSION } from "../protocol/card/agent-card";
import type { PeerCard, PeerInterface } from "../protocol/card/peer-card";
import { parsePeerCard } from "../protocol/card/peer-card";
import type { JsonObject, JsonValue } from "../protocol/json";
import { stateToV1 } from "../protocol/wire/wire-v1";
import {
  CompactionAnswer,
  DeadLettersAnswer,
  HistoryPageAnswer,
  pushConfigOf,
  pushConfigPageOf,
  sendResultOf,
  TaskListPage,
  taskOf,
} from "./answers";
import { pushToV1, pushToV03, read } from "./convert";
import { invalidResponse, UnsupportedOperationError } from "./errors";
import { MemoryClient } from "./memory";
import type { Binding, Version } from "./operations";
import { paged, pushConfigRef, sendParams } from "./requests";
import { followStream, type StreamSource } from "./resume";
import type { Transport } from "./transport";
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

const CALL = { signal: undefined as AbortSignal | undefined };

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
    const params = sendParams(this.version, input, options, options.returnImmediately ?? false);
    return sendResultOf(this.version, await this.transport.call("send", params, options.signal));
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
    const params = sendParams(this.version, input, options, false);
    const { resume, signal } = options;
    const first = this.transport.open("stream", params, { signal });
    return followStream(this.streamSource(), first, {
      taskId: undefined,
      lastEventId: undefined,
      resume,
      signal,
    });
  }

  /**
   * SubscribeToTask: a running task's events, resuming automatically (with
   * `Last-Event-ID`) when the connection drops, up to the resume limit.
   * @example
   * for await (const event of agent.subscribe(taskId)) console.log(event.kind);
   */
  subscribe(taskId: string, options: SubscribeOptions = {}): AsyncGenerator<AgentEvent> {
    const { lastEventId, resume, signal } = options;
    return followStream(this.streamSource(), undefined, { taskId, lastEventId, resume, signal });
  }

  // ---- tasks ----------------------------------------------------------------------

  /** GetTask. @example const task = await agent.getTask(id, { historyLength: 10 }); */
  async getTask(id: string, options: { historyLength?: number; signal?: AbortSignal } = {}) {
    const params: JsonObject = { id };
    if (options.historyLength !== undefined) params.historyLength = options.historyLength;
    return taskOf(this.version, await this.transport.call("get", params, options.signal));
  }

  /** CancelTask; answers the task as it is after the cancel. */
  async cancel(id: string, options: { metadata?: JsonObject; signal?: AbortSignal } = {}) {
    const params: JsonObject = { id };
    if (options.metadata) params.metadata = options.metadata;
    return taskOf(this.version, await this.transport.call("cancel", params, options.signal));
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
      paged(params, options.pageSize, pageToken);
      if (options.historyLength !== undefined) params.historyLength = options.historyLength;
      if (options.statusTimestampAfter) params.statusTimestampAfter = options.statusTimestampAfter;
      if (options.includeArtifacts !== undefined)
        params.includeArtifacts = options.includeArtifacts;
      const raw = await this.transport.call("list", params, options.signal);
      const page = read(TaskListPage, raw, "task list");
      yield { ...page, tasks: page.tasks.map((t) => taskOf(this.version, t as JsonValue)) };
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
    const raw = await this.transport.call("pushCreate", params, options.signal);
    return pushConfigOf(this.version, raw);
  }

  async getPushConfig(taskId: string, id: string, options = CALL): Promise<PushNotificationConfig> {
    const params = pushConfigRef(this.version, taskId, id);
    return pushConfigOf(this.version, await this.transport.call("pushGet", params, options.signal));
  }

  /** One page of a task's webhook configs (v0.3 agents answer all at once). */
  async listPushConfigs(
    taskId: string,
    options: { pageSize?: number; pageToken?: string; signal?: AbortSignal } = {},
  ): Promise<{ configs: PushNotificationConfig[]; nextPageToken: string }> {
    const params =
      this.version === "1.0"
        ? paged({ taskId }, options.pageSize, options.pageToken)
        : { id: taskId };
    const raw = await this.transport.call("pushList", params, options.signal);
    return pushConfigPageOf(this.version, raw);
  }

  /** DeleteTaskPushNotificationConfig (deleting twice is fine). */
  async deletePushConfig(taskId: string, id: string, options = CALL): Promise<void> {
    const params = pushConfigRef(this.version, taskId, id);
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
      const params = paged({ contextId }, options.pageSize, pageToken);
      const raw = await this.transport.call("history", params, options.signal);
      const page = read(HistoryPageAnswer, raw, "history page");
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
    return read(CompactionAnswer, raw, "compaction result");
  }

  /** Webhook deliveries of a task that were given up on (Edgelink agents only). */
  async deadLetters(taskId: string, options = CALL): Promise<JsonObject[]> {
    this.requireEdgelink("deadLetters");
    const raw = await this.transport.call("deadLetters", { id: taskId }, options.signal);
    return read(DeadLettersAnswer, raw, "dead letters").deliveries as JsonObject[];
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

  private streamSource(): StreamSource {
    return {
      transport: this.transport,
      url: this.endpoint.url,
      resume: this.resume,
      getTask: (id, signal) => this.getTask(id, { signal }),
    };
  }
}
