/**
 * Which tenant, conversation and owner a conversation object holds (recorded by its first
 * call), its `meta` values, and where its tenant index rows go (its shard, and moving them
 * when the shard count changed).
 */
import type { Agent } from "../agent/definition";
import type { IndexRpc } from "../index/index-object";
import { indexShardFor } from "../index/index-shards";
import { A2AError } from "../protocol/errors";
import type { Scope } from "../storage/ids";
import type { LogFields } from "../telemetry/log";
import type { TaskStore } from "./tasks/task-store";

export type { Scope } from "../storage/ids";

export class ContextIdentity {
  constructor(
    private readonly storage: DurableObjectStorage,
    private readonly store: TaskStore,
    private readonly env: unknown,
    /** The agent, read at each call (a test may replace it). */
    private readonly agent: () => Pick<Agent<unknown>, "bindings" | "limits">,
    /** Plans an index flush within the window (`IndexOutbox.schedule`). */
    private readonly scheduleIndex: () => void,
  ) {}

  /** Set when this instance made the object's schema: a new conversation (see `claim`). */
  created = false;
  private claimed = false;
  /** The tenant, conversation and owner this object holds, once read (they never change). */
  private identity: { tenant: string; contextId: string; owner: string } | null = null;
  /** The index shard count this conversation's rows went to, once read (see `reshard`). */
  private sentShards: number | null = null;

  /**
   * Records which tenant and conversation this object holds (first call wins), and, for a
   * new conversation, the index shard count its rows go to (in the same statement).
   */
  claim(scope: Scope): void {
    if (this.claimed) return;
    this.claimed = true;
    const shards = this.created ? [String(this.agent().limits.indexShards)] : [];
    this.storage.sql.exec(
      `INSERT INTO meta (key, value) VALUES ('tenant', ?), ('context_id', ?), ('owner', ?)${shards.length ? ", ('index_shards', ?)" : ""} ON CONFLICT (key) DO NOTHING`,
      scope.tenant,
      scope.contextId,
      scope.owner ?? "",
      ...shards,
    );
    // A new conversation holds exactly what was just written: nothing to read back.
    if (this.created) {
      this.identity = {
        tenant: scope.tenant,
        contextId: scope.contextId,
        owner: scope.owner ?? "",
      };
      this.sentShards = Number(shards[0]);
    }
  }

  /**
   * Claims this conversation for the caller (see `claim`) once it exists: it does once it
   * has a task or a history item; ContextNotFound when it does not (or `vacant`).
   */
  requireContext(scope: Scope, vacant: boolean): void {
    const known =
      !vacant &&
      (this.storage.sql.exec("SELECT 1 FROM tasks LIMIT 1").toArray().length > 0 ||
        this.store.history.count() > 0);
    if (!known) {
      throw new A2AError("ContextNotFound", `Context ${scope.contextId} not found`, {
        contextId: scope.contextId,
      });
    }
    this.claim(scope);
  }

  /** A value of the object's `meta` table, or null. */
  meta(key: string): string | null {
    const row = this.storage.sql
      .exec<{ value: string }>("SELECT value FROM meta WHERE key = ?", key)
      .toArray()[0];
    return row ? row.value : null;
  }

  /** Where this conversation's index rows go (its shard), once the object knows its tenant. */
  indexTarget(): { index: IndexRpc; contextId: string } | null {
    this.identity ??= this.readIdentity();
    if (!this.identity) return null;
    const { tenant, contextId, owner } = this.identity;
    const agent = this.agent();
    const binding = (this.env as Record<string, unknown>)[agent.bindings.index] as
      | DurableObjectNamespace
      | undefined;
    if (!binding) throw new Error(`Missing Durable Object binding ${agent.bindings.index}`);
    const shards = agent.limits.indexShards;
    this.reshard(shards);
    return { index: indexShardFor(binding, { tenant, owner, shards }, contextId), contextId };
  }

  /**
   * Where a log line happened: this object's tenant and conversation, and the task. Only
   * on a failure's path, so reading the meta row then costs nothing that matters.
   */
  logIds(taskId: string | null): LogFields {
    try {
      this.identity ??= this.readIdentity();
    } catch {
      // No schema yet (a failure before the first write): no ids to tell.
    }
    return {
      tenant: this.identity?.tenant,
      contextId: this.identity?.contextId,
      taskId: taskId ?? undefined,
    };
  }

  /** The tenant, conversation and owner this object holds, or null before its first write. */
  held(): { tenant: string; contextId: string; owner: string } | null {
    this.identity ??= this.readIdentity();
    return this.identity;
  }

  private readIdentity(): { tenant: string; contextId: string; owner: string } | null {
    const tenant = this.meta("tenant");
    const contextId = this.meta("context_id");
    if (tenant === null || contextId === null) return null;
    return { tenant, contextId, owner: this.meta("owner") ?? "" };
  }

  /**
   * After `limits.indexShards` changed, this conversation's index rows sit in shards that
   * no listing reads (the count is part of their names): every task is marked to go
   * again, to its shard of the new count. A conversation from before shards sent its rows
   * to the one unsharded index. Runs when rows are sent, so a conversation heals with its
   * next state change; one that never changes again stays out of cross-context listings.
   */
  private reshard(shards: number): void {
    this.sentShards ??= Number(this.meta("index_shards") ?? "1");
    if (this.sentShards === shards) return;
    this.store.atomic(() => {
      this.store.index.resendAll();
      this.storage.sql.exec(
        "INSERT INTO meta (key, value) VALUES ('index_shards', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        String(shards),
      );
    });
    this.sentShards = shards;
    // The rows being sent now are among them; the rest go in the next window.
    this.scheduleIndex();
  }
}
