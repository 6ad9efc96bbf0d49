/**
 * The webhook configs of a conversation's tasks and their health (failed attempts in a
 * row, unhealthy, events skipped), with what is known in memory of which tasks have none
 * and which have an unhealthy one. The deliveries (push-deliveries.ts) and their outbox
 * (push-store.ts) build on it.
 */
import type { PushConfig } from "../../push/config";
import { sqlLimit } from "../../storage/sql-limit";

/** A config with its health: failed attempts in a row, and whether its events coalesce. */
export interface ConfigHealth {
  config: PushConfig;
  failures: number;
  unhealthy: boolean;
}

/** Push configs of one conversation's tasks, and their health. */
export class PushConfigs {
  constructor(protected readonly sql: SqlStorage) {}

  /**
   * Tasks known to have no config (most tasks), so their events queue nothing without a
   * statement. Bounded: a task not remembered is looked up in SQLite as before.
   */
  protected readonly without = new Set<string>();

  /** Records that a task just created has no config yet. */
  noConfigs(taskId: string): void {
    this.without.add(taskId);
    if (this.without.size > 256) {
      const oldest = this.without.values().next().value as string;
      this.without.delete(oldest);
    }
  }

  /**
   * Tasks with an unhealthy config, loaded on first use: their events take the
   * coalescing path. Bounded by the configs kept (per task and by retention).
   */
  protected sick: Set<string> | null = null;

  /** Whether a task has an unhealthy config (its events take the coalescing path). */
  protected hasUnhealthy(taskId: string): boolean {
    if (this.sick === null) {
      this.sick = new Set(
        this.sql
          .exec<{ task_id: string }>(
            "SELECT DISTINCT task_id FROM push_configs WHERE unhealthy = 1",
          )
          .toArray()
          .map((r) => r.task_id),
      );
    }
    return this.sick.has(taskId);
  }

  /** Re-reads whether a task still has an unhealthy config (after a change to its configs). */
  protected recheck(taskId: string): void {
    if (this.sick === null) return;
    const any = this.sql
      .exec("SELECT 1 FROM push_configs WHERE task_id = ? AND unhealthy = 1 LIMIT 1", taskId)
      .toArray().length;
    if (any) this.sick.add(taskId);
    else this.sick.delete(taskId);
  }

  /** Saves a config; saving one again (a new URL, say) starts its health afresh. */
  saveConfig(config: PushConfig): void {
    this.without.delete(config.taskId);
    this.sql.exec(
      `INSERT INTO push_configs (task_id, id, body, created_at) VALUES (?, ?, ?, ?)
       ON CONFLICT (task_id, id) DO UPDATE SET body = excluded.body, failures = 0, unhealthy = 0`,
      config.taskId,
      config.id,
      JSON.stringify(config),
      new Date().toISOString(),
    );
    this.recheck(config.taskId);
  }

  config(taskId: string, id: string): PushConfig | null {
    const row = this.sql
      .exec<{ body: string }>(
        "SELECT body FROM push_configs WHERE task_id = ? AND id = ?",
        taskId,
        id,
      )
      .toArray()[0];
    return row ? (JSON.parse(row.body) as PushConfig) : null;
  }

  /** A config and its health, in one read. */
  configHealth(taskId: string, id: string): ConfigHealth | null {
    const row = this.sql
      .exec<{ body: string; failures: number; unhealthy: number }>(
        "SELECT body, failures, unhealthy FROM push_configs WHERE task_id = ? AND id = ?",
        taskId,
        id,
      )
      .toArray()[0];
    return row
      ? {
          config: JSON.parse(row.body) as PushConfig,
          failures: row.failures,
          unhealthy: row.unhealthy === 1,
        }
      : null;
  }

  /** Counts one more failed attempt of a config; returns its failures in a row. */
  recordFailure(taskId: string, id: string): number {
    return (
      this.sql
        .exec<{ failures: number }>(
          "UPDATE push_configs SET failures = failures + 1 WHERE task_id = ? AND id = ? RETURNING failures",
          taskId,
          id,
        )
        .toArray()[0]?.failures ?? 0
    );
  }

  /** A delivered attempt: the config is healthy again and its events queue one by one. */
  recordSuccess(taskId: string, id: string): void {
    this.sql.exec(
      "UPDATE push_configs SET failures = 0, unhealthy = 0 WHERE task_id = ? AND id = ?",
      taskId,
      id,
    );
    this.recheck(taskId);
  }

  /** The task's webhook health as its metadata shows it. */
  health(taskId: string): { unhealthy: string[]; skipped: number } {
    const rows = this.sql
      .exec<{ id: string; unhealthy: number; skipped: number }>(
        "SELECT id, unhealthy, skipped FROM push_configs WHERE task_id = ? ORDER BY id",
        taskId,
      )
      .toArray();
    return {
      unhealthy: rows.filter((r) => r.unhealthy === 1).map((r) => r.id),
      skipped: rows.reduce((n, r) => n + r.skipped, 0),
    };
  }

  /** A task's configs, oldest first; `after` is the last id of the previous page. */
  configs(taskId: string, options: { after?: string; limit?: number } = {}): PushConfig[] {
    return this.sql
      .exec<{ body: string }>(
        `SELECT body FROM push_configs WHERE task_id = ? AND id > ? ORDER BY id LIMIT ${sqlLimit(options.limit ?? -1)}`,
        taskId,
        options.after ?? "",
      )
      .toArray()
      .map((r) => JSON.parse(r.body) as PushConfig);
  }

  configCount(taskId: string): number {
    return this.sql
      .exec<{ n: number }>("SELECT COUNT(*) AS n FROM push_configs WHERE task_id = ?", taskId)
      .one().n;
  }
}
