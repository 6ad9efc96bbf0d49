/**
 * A conversation's push notification calls (webhook configs of its tasks, dead letters,
 * redelivery), beside the dispatcher that delivers them from the alarm.
 */
import type { Limits } from "../../agent/limits";
import { A2AError } from "../../protocol/errors";
import type { Task } from "../../protocol/task";
import { type PushConfig, type PushConfigInput, resolvePushConfig } from "../../push/config";
import type { TaskStore } from "../tasks/task-store";
import type { DeliveryRow } from "./push-deliveries";
import { MAX_SNAPSHOT_CHARS } from "./push-snapshots";
import type { PushStore } from "./push-store";

/** Refuses a push call on an agent that has push off. */
export function pushNotSupported(): A2AError {
  return new A2AError(
    "PushNotificationNotSupported",
    "This agent does not send push notifications",
  );
}

/**
 * The push calls of one conversation object whose agent sends push notifications; the
 * object checks the caller and the task first.
 */
/** A task's webhook health as its owner reads it (see `PushRpc.health`). */
export interface PushHealth {
  unhealthyConfigs: string[];
  skippedEvents: number;
  deadLetters: number;
}

/** The object's alarm, as the push calls use it (the object's `ObjectAlarm`). */
export interface PushWakeups {
  wakeAt(at: number, reason: "push"): Promise<void>;
}

export class PushRpc {
  constructor(
    private readonly storage: DurableObjectStorage,
    private readonly push: PushStore,
    private readonly store: TaskStore,
    private readonly alarm: PushWakeups,
    /** The agent's limits, read at each call. */
    private readonly limits: () => Limits,
    /** A task as it is now (TaskNotFound when it is not there). */
    private readonly read: (taskId: string) => Task,
  ) {}

  /** Registers a webhook for a task; its first delivery is the task as it is now. */
  async create(taskId: string, input: PushConfigInput, issuer: string): Promise<PushConfig> {
    const config = this.store.atomic(() => this.register(taskId, input, issuer, this.read(taskId)));
    await this.alarm.wakeAt(Date.now(), "push");
    return config;
  }

  get(taskId: string, id: string): PushConfig {
    const config = this.push.config(taskId, id);
    if (!config) {
      throw new A2AError("TaskNotFound", `Push notification config ${id} not found`, {
        taskId,
        configId: id,
      });
    }
    return config;
  }

  list(
    taskId: string,
    page: { pageSize: number; pageToken?: string },
  ): { configs: PushConfig[]; nextPageToken: string } {
    const rows = this.push.configs(taskId, { after: page.pageToken, limit: page.pageSize + 1 });
    const configs = rows.slice(0, page.pageSize);
    const more = rows.length > page.pageSize;
    return { configs, nextPageToken: more ? (configs.at(-1)?.id ?? "") : "" };
  }

  /** Idempotent: deleting a config that is not there succeeds. */
  delete(taskId: string, id: string): null {
    this.push.deleteConfig(taskId, id);
    return null;
  }

  /** A task's dead-lettered webhook deliveries, a page at a time (`after`: last seq seen). */
  dead(taskId: string, page: { after?: number; limit?: number }): DeliveryRow[] {
    return this.push.dead(taskId, page);
  }

  /**
   * A task's webhook health, for its owner (the task's steps): the configs whose events
   * coalesce, the events coalesced for them, and the deliveries dead-lettered.
   */
  health(taskId: string): PushHealth {
    const { unhealthy, skipped } = this.push.health(taskId);
    return {
      unhealthyConfigs: unhealthy,
      skippedEvents: skipped,
      deadLetters: this.push.deadCount(taskId),
    };
  }

  /** Queues a task's dead-lettered deliveries again; answers how many. */
  async redeliver(taskId: string): Promise<number> {
    const count = this.push.redeliver(taskId, Date.now());
    if (count > 0) await this.alarm.wakeAt(Date.now(), "push");
    return count;
  }

  /** A config sent inside SendMessage: saved before the run starts, so no event is missed. */
  registerInline(taskId: string, input: PushConfigInput, issuer: string, snapshot: Task): void {
    this.register(taskId, input, issuer, snapshot);
    this.store.pushQueued = true;
  }

  /**
   * Saves a config and queues the task snapshot as its first delivery. The snapshot is
   * written now, so every retry of that delivery sends the same body.
   */
  private register(
    taskId: string,
    input: PushConfigInput,
    issuer: string,
    snapshot: Task,
  ): PushConfig {
    const push = this.push;
    const config = resolvePushConfig(input, { taskId });
    const max = this.limits().maxPushConfigsPerTask;
    if (!push.config(taskId, config.id) && push.configCount(taskId) >= max) {
      throw new A2AError(
        "InvalidParams",
        `Task ${taskId} already has ${max} push notification configs, the limit; delete one first`,
        { taskId, limit: String(max) },
      );
    }
    push.saveConfig(config);
    const body = JSON.stringify(snapshot);
    if (body.length > MAX_SNAPSHOT_CHARS) {
      throw new A2AError(
        "InvalidParams",
        `Task ${taskId} is ${body.length} characters of JSON, over the ${MAX_SNAPSHOT_CHARS} a webhook's first delivery keeps`,
        { taskId, limit: String(MAX_SNAPSHOT_CHARS) },
      );
    }
    push.enqueue(taskId, null, Date.now(), config.id, body);
    this.storage.sql.exec(
      "INSERT INTO meta (key, value) VALUES ('push_issuer', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
      issuer,
    );
    return config;
  }
}
