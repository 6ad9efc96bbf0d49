import type { Agent } from "../../agent/definition";
import type { TaskStepsRecord } from "../../conversation/tasks/task-steps";
import { listIndex } from "../../index/index-shards";
import { A2AError } from "../../protocol/errors";
import type { JsonObject } from "../../protocol/json";
import type { Task } from "../../protocol/task";
import type { TaskList } from "../../protocol/wire/render";
import {
  encodeHistoryToken,
  type HistoryParams,
  type ListTasksParams,
  type ProtocolVersion,
  type SendParams,
  type TaskIdParams,
} from "../../protocol/wire/requests";
import type { StreamFormat } from "../../protocol/wire/stream";
import { type PushConfig, parsePushConfig } from "../../push/config";
import { isApproverTaskId } from "../../storage/approver-ids";
import { decodeCursor } from "../../storage/ids";
import { unwrap, unwrapText } from "../../storage/rpc-result";
import { packSend } from "../../storage/rpc-send";
import { A2A_TASK_STATE } from "../../telemetry";
import { newTaskIdOfRendered, newTaskIdOfStream, stateOfRendered } from "../tracing";
import { ContextRouting } from "./context-routing";
import { requireAcceptedParts, requireInputFormats } from "./negotiation";

function withoutPush(params: SendParams & { pushConfig?: JsonObject }): SendParams {
  const { pushConfig: _, ...rest } = params;
  return rest;
}

/**
 * The A2A operations, independent of binding and version: they validate routing facts
 * (which object, which tenant; see `ContextRouting`), call the Durable Objects and
 * return models.
 */
export class Operations<Env> extends ContextRouting<Env> {
  /** SendMessage; answers the result already rendered as JSON text for `version`. */
  async sendMessage(
    params: SendParams & { pushConfig?: JsonObject },
    version: ProtocolVersion,
  ): Promise<string> {
    requireInputFormats(params.message.parts, this.agent as Agent<unknown>);
    requireAcceptedParts(params.message.parts, this.agent as Agent<unknown>);
    const taskId = params.message.taskId;
    if (taskId && isApproverTaskId(taskId)) return this.approverDecides(params, taskId, version);
    const push = this.inlinePush(params.pushConfig, version);
    const { stub, scope } = await this.route(params);
    // The object gets the config parsed (`push`), not the client's raw one again.
    const sent = params.pushConfig === undefined ? params : withoutPush(params);
    // A plain message crosses packed, its answer the text alone (see rpc-send.ts).
    const packed = push === undefined ? packSend(scope, sent, version) : null;
    const rendered = packed
      ? unwrapText(await stub.sendPlain(packed))
      : unwrap(await stub.sendMessage(scope, sent, version, push));
    stateOfRendered(this.trace, rendered);
    if (scope.newTaskId) newTaskIdOfRendered(this.trace, rendered, scope.newTaskId);
    return rendered;
  }

  /** SendStreamingMessage; `contextField` names the context id in errors (see `route`). */
  async streamMessage(
    params: SendParams & { pushConfig?: JsonObject },
    format: StreamFormat,
    contextField?: string,
  ): Promise<ReadableStream> {
    this.requireStreaming();
    requireInputFormats(params.message.parts, this.agent as Agent<unknown>);
    requireAcceptedParts(params.message.parts, this.agent as Agent<unknown>);
    const taskId = params.message.taskId;
    if (taskId && isApproverTaskId(taskId)) {
      await this.approverContext(taskId);
      throw new A2AError(
        "UnsupportedOperation",
        "An approver answers with SendMessage (not streaming): its answer is the decision alone",
        { taskId },
      );
    }
    const push = this.inlinePush(params.pushConfig, format.version);
    const { stub, scope } = await this.route(params, contextField);
    const stream = unwrap(await stub.streamMessage(scope, params, format, push));
    return scope.newTaskId ? newTaskIdOfStream(this.trace, stream, scope.newTaskId) : stream;
  }

  async getTask(params: TaskIdParams): Promise<Task> {
    if (isApproverTaskId(params.id)) {
      const { stub, scope, taskId } = await this.approverContext(params.id);
      return unwrap(await stub.approverView(scope, taskId, params.id));
    }
    const { stub, scope } = await this.contextOfTask(params.id);
    const task = unwrap(
      await stub.getTask(scope, params.id, { historyLength: params.historyLength }),
    );
    this.trace?.span.setAttribute(A2A_TASK_STATE, task.status.state);
    return task;
  }

  /**
   * An approver's decision on another principal's task: only a decision message, no
   * webhook, no context of its own; its answer shows no more than the task's state.
   */
  private async approverDecides(
    params: SendParams & { pushConfig?: JsonObject },
    approverId: string,
    version: ProtocolVersion,
  ): Promise<string> {
    const { stub, scope, taskId } = await this.approverContext(approverId);
    if (params.pushConfig !== undefined) {
      const field =
        version === "1.0"
          ? "params.configuration.taskPushNotificationConfig"
          : "params.configuration.pushNotificationConfig";
      throw new A2AError(
        "InvalidParams",
        `${field}: an approver registers no webhook on the task it decides`,
        {},
        [{ field, description: "not accepted from an approver" }],
      );
    }
    const { contextId } = params.message;
    if (contextId !== undefined && contextId !== scope.contextId) {
      throw new A2AError(
        "InvalidParams",
        `params.message.contextId ${contextId} does not match the context of task ${approverId}`,
        { taskId: approverId, contextId },
        [{ field: "params.message.contextId", description: "does not match the task's context" }],
      );
    }
    const message = { ...params.message, taskId, contextId: scope.contextId };
    const rendered = unwrap(
      await stub.approverDecide(scope, { ...params, message }, version, approverId),
    );
    stateOfRendered(this.trace, rendered);
    return rendered;
  }

  /** A task's steps for the inspector's waterfall: found as GetTask finds the task. */
  async taskSteps(taskId: string): Promise<TaskStepsRecord> {
    const { stub, scope } = await this.contextOfTask(taskId);
    return unwrap(await stub.getTaskSteps(scope, taskId));
  }

  async cancelTask(params: TaskIdParams): Promise<Task> {
    const { stub, scope } = await this.contextOfTask(params.id);
    const task = unwrap(await stub.cancelTask(scope, params.id, params.metadata));
    this.trace?.span.setAttribute(A2A_TASK_STATE, task.status.state);
    return task;
  }

  async subscribe(
    params: TaskIdParams,
    format: StreamFormat,
    lastEventId?: number,
  ): Promise<ReadableStream> {
    this.requireStreaming();
    const { stub, scope } = await this.contextOfTask(params.id);
    return unwrap(await stub.subscribe(scope, params.id, format, lastEventId));
  }

  /**
   * ListTasks. With a contextId the conversation's own object answers. Without one, the
   * tenant index (its shards merged) picks the page and each conversation object fills
   * in its tasks.
   */
  async listTasks(params: ListTasksParams): Promise<TaskList> {
    if (params.contextId) {
      if (params.pageToken && !decodeCursor(params.pageToken)) {
        throw new A2AError("InvalidParams", "pageToken is not a token this server issued", {}, [
          { field: "params.pageToken", description: "unknown page token" },
        ]);
      }
      // A context not issued to this caller, or a client-chosen id this agent never
      // accepts, holds none of its tasks: an empty page, and no object reached. A filter
      // asks a question; it claims nothing, so it is answered rather than refused.
      const named = await this.scope.contextId(params.contextId, "params.contextId", "filter");
      if (named === null)
        return { tasks: [], nextPageToken: "", pageSize: params.pageSize, totalSize: 0 };
      const { stub, scope } = this.context(named);
      const page = unwrap(await stub.listTasks(scope, params));
      return { ...page, pageSize: params.pageSize };
    }
    const ns = this.namespace(this.agent.bindings.index);
    const shards = this.agent.limits.indexShards;
    const page = await listIndex(
      ns,
      { tenant: this.tenant, owner: this.owner, shards },
      {
        state: params.state,
        statusTimestampAfter: params.statusTimestampAfter,
        pageSize: params.pageSize,
        pageToken: params.pageToken,
      },
      (marked) =>
        Promise.all(
          marked.map((contextId) => {
            const { stub, scope } = this.context(contextId);
            return stub.sendIndexRows(scope);
          }),
        ).then(() => {}),
    );
    const byContext = new Map<string, string[]>();
    for (const row of page.rows) {
      byContext.set(row.contextId, [...(byContext.get(row.contextId) ?? []), row.taskId]);
    }
    const options = {
      historyLength: params.historyLength,
      includeArtifacts: params.includeArtifacts,
    };
    // With artifacts, the page carries at most limits.listArtifactChars of them (and its
    // first task whatever its size). Read in parallel, each conversation gets a share (the
    // first row's conversation the whole budget), so the reads stay within twice the
    // budget and one task; the page ends before the first task a conversation did not read.
    const budget = params.includeArtifacts ? this.agent.limits.listArtifactChars : 0;
    const share = Math.floor(budget / Math.max(1, byContext.size));
    const firstContext = page.rows[0]?.contextId;
    const found = new Map<string, Task>();
    const unread = new Set<string>();
    await Promise.all(
      [...byContext].map(async ([contextId, ids]) => {
        const { stub, scope } = this.context(contextId);
        const filter = { state: params.state };
        const within = budget
          ? contextId === firstContext
            ? { chars: budget, atLeastOne: true }
            : { chars: share, atLeastOne: false }
          : undefined;
        const { tasks, read } = await stub.getTasks(scope, ids, options, filter, within);
        for (const task of tasks) found.set(task.id, task);
        for (const id of ids.slice(read)) unread.add(id);
      }),
    );
    const cut = unread.size ? page.rows.findIndex((r) => unread.has(r.taskId)) : -1;
    const rows = cut < 0 ? page.rows : page.rows.slice(0, cut);
    return {
      tasks: rows.flatMap((r) => found.get(r.taskId) ?? []),
      nextPageToken: cut < 0 ? page.nextPageToken : page.tokenAfter(cut - 1),
      pageSize: params.pageSize,
      totalSize: page.totalSize,
    };
  }

  /** A page of a conversation's history. */
  async history(params: HistoryParams) {
    const { stub, scope } = this.context(await this.readContext(params.contextId));
    const page = unwrap(
      await stub.getHistory(scope, { after: params.after, limit: params.pageSize }),
    );
    return {
      items: page.rows.map((r) => r.item),
      nextPageToken: page.next === null ? "" : encodeHistoryToken(page.next),
      totalSize: page.total,
    };
  }

  /** Compacts a conversation's history (a control call, never a task part). */
  async compact(contextId: string, request: JsonObject) {
    const { stub, scope } = this.context(await this.readContext(contextId));
    return unwrap(await stub.compactHistory(scope, request));
  }

  /** A context a read names, verified by the route's guard (not found when not the caller's). */
  private async readContext(contextId: string): Promise<string> {
    return (await this.scope.contextId(contextId, "contextId", "read")) as string;
  }

  extendedCard() {
    if (!this.agent.extendedCard) {
      throw new A2AError(
        "UnsupportedOperation",
        "This agent does not offer an extended agent card (capabilities.extendedAgentCard is false)",
      );
    }
    return this.agent.extendedCard;
  }

  // ---- push notifications (§3.1.7–3.1.10) -------------------------------------------

  /**
   * `http://localhost` webhooks are for development: allowed when configured, or by
   * default when this agent is itself served from localhost (`wrangler dev`).
   */
  private get allowLocalhost(): boolean {
    const configured = this.agent.push?.allowLocalhost;
    if (configured !== undefined) return configured;
    try {
      return ["localhost", "127.0.0.1", "[::1]"].includes(new URL(this.origin).hostname);
    } catch {
      return false;
    }
  }

  private requirePush(): void {
    if (!this.agent.push) {
      throw new A2AError(
        "PushNotificationNotSupported",
        "This agent does not support push notifications (capabilities.pushNotifications is false)",
      );
    }
  }

  private inlinePush(raw: JsonObject | undefined, version: ProtocolVersion) {
    if (raw === undefined) return undefined;
    this.requirePush();
    const config = parsePushConfig(raw, {
      version,
      allowLocalhost: this.allowLocalhost,
      inline: true,
      prefix:
        version === "1.0"
          ? "params.configuration.taskPushNotificationConfig"
          : "params.configuration.pushNotificationConfig",
    });
    return { config, issuer: this.origin };
  }

  async createPushConfig(
    taskId: string,
    raw: unknown,
    version: ProtocolVersion,
    prefix: string,
  ): Promise<PushConfig> {
    this.requirePush();
    const input = parsePushConfig(raw, {
      version,
      allowLocalhost: this.allowLocalhost,
      taskId,
      prefix,
    });
    const { stub, scope } = await this.contextOfTask(taskId);
    return unwrap(await stub.createPushConfig(scope, taskId, input, this.origin));
  }

  async getPushConfig(taskId: string, id: string): Promise<PushConfig> {
    this.requirePush();
    const { stub, scope } = await this.contextOfTask(taskId);
    return unwrap(await stub.getPushConfig(scope, taskId, id));
  }

  async listPushConfigs(taskId: string, page: { pageSize: number; pageToken?: string }) {
    this.requirePush();
    const { stub, scope } = await this.contextOfTask(taskId);
    return unwrap(await stub.listPushConfigs(scope, taskId, page));
  }

  /** Dead-lettered deliveries of a task (the push outbox's give-ups). */
  async deadDeliveries(taskId: string) {
    this.requirePush();
    const { stub, scope } = await this.contextOfTask(taskId);
    return unwrap(await stub.deadDeliveries(scope, taskId));
  }

  async redeliver(taskId: string): Promise<number> {
    this.requirePush();
    const { stub, scope } = await this.contextOfTask(taskId);
    return unwrap(await stub.redeliver(scope, taskId));
  }

  async deletePushConfig(taskId: string, id: string): Promise<void> {
    this.requirePush();
    const { stub, scope } = await this.contextOfTask(taskId);
    unwrap(await stub.deletePushConfig(scope, taskId, id));
  }

  private requireStreaming(): void {
    if (!this.agent.streaming) {
      throw new A2AError(
        "UnsupportedOperation",
        "This agent does not support streaming (capabilities.streaming is false)",
      );
    }
  }
}
