/**
 * Limits on what one conversation object keeps and serves. Every list, stream and queue
 * is bounded; these are the bounds an agent may change (`defineAgent({ limits })`).
 *
 * @example
 * defineAgent({ card, handler, limits: { maxSubscribersPerTask: 8 } });
 */
export interface LimitsConfig {
  /** Open SSE streams (SendStreamingMessage + SubscribeToTask) per task. Default 32. */
  maxSubscribersPerTask?: number;
  /**
   * Open SSE streams one conversation serves at once, across its tasks (SendStreamingMessage,
   * SubscribeToTask, the chat endpoint's). Each may hold `streamBufferBytes` for a client
   * that does not read, so this bounds what streams can take of the object's memory (128 MB
   * on Cloudflare): 64 MiB at the defaults, leaving the rest for its tasks. Default 64.
   */
  maxStreamsPerConversation?: number;
  /**
   * Bytes a stream may hold for a client that does not read. A subscriber this far behind
   * is dropped with a closing comment; it reconnects with Last-Event-ID. Default 1 MiB.
   */
  streamBufferBytes?: number;
  /** Events read from SQLite per page when a stream resumes from Last-Event-ID. Default 100. */
  backlogPageSize?: number;
  /** Webhook configs per task. Default 10. */
  maxPushConfigsPerTask?: number;
  /**
   * Finished tasks (completed, failed, canceled, rejected) a conversation keeps; older
   * ones are pruned by the object's alarm with their artifacts, events and webhook rows
   * (the conversation history stays). Default 1000.
   */
  retainFinishedTasks?: number;
  /** Finished tasks older than this (ms since their last update) are pruned too. Default 30 days. */
  retainFinishedMs?: number;
  /**
   * How long a conversation gathers its tasks' state changes before sending them to the
   * tenant index in one call (off the answer's path). A task shows in ListTasks across
   * conversations at most this long after it changes (plus the call's own time), or the
   * state filter drops it until then. Default 1000 ms.
   */
  indexFlushMs?: number;
  /**
   * Objects one owner's task index in a tenant is spread over, by a hash of the context
   * id: each takes a few hundred calls a second (one per busy conversation per
   * `indexFlushMs`), and a ListTasks across conversations asks every one in parallel.
   * Changing it on a live deployment starts an empty set of shards, which each
   * conversation fills again at its next state change: see docs/architecture.md, "Index shards".
   * At most 64. Default 4.
   */
  indexShards?: number;
  /**
   * The most messages a task carries when read (GetTask, ListTasks, SendMessage's answer,
   * `ctx.history`, a webhook's snapshot): its newest ones. A request's `historyLength`
   * above it gets this many; unset, it is the server's default (§3.2.4). The conversation
   * itself keeps every message. Default 100.
   */
  taskHistory?: number;
  /**
   * The most characters of stored JSON the messages of a task read carry together: older
   * messages past it are left out, newest first, though the newest one is always there.
   * Bounds each read and what the object keeps in memory of a recently written task.
   * At most 8 Mi (a webhook's task snapshot). Default 1 Mi.
   */
  taskHistoryChars?: number;
  /**
   * The most characters of stored JSON (history and artifacts) the object keeps in memory
   * across its recently written tasks (at most 32 of them); past it the least recently
   * used are dropped and read again from SQLite when next needed. The task being written
   * always stays. Default 8 Mi.
   */
  liveTaskChars?: number;
  /**
   * The most items a conversation's history holds. A new message to a full conversation
   * is refused (`ConversationFull`: HTTP 409, JSON-RPC -32051) until it is compacted
   * (`POST /contexts/{id}/history:compact`) or a new context is used; the items a turn
   * already started adds are not refused. Default 1,000,000 (a model turn reads only its
   * window, so a long conversation costs a turn what a short one does).
   */
  historyItems?: number;
  /**
   * The most characters of stored JSON a task's artifacts hold together (their headers
   * and parts). An artifact write past it fails the task's run with an error naming this
   * limit (what was written before stays), so a GetTask, a SendMessage answer or a
   * stream's first snapshot never carries more. Default 8 Mi.
   */
  taskArtifactChars?: number;
  /**
   * The most characters of artifacts one ListTasks page with `includeArtifacts` carries:
   * the page ends early at the task that reaches it (its token continues after that
   * task), and always holds at least one task. Default 16 Mi.
   */
  listArtifactChars?: number;
}

export type Limits = Required<LimitsConfig>;

export const DEFAULT_LIMITS: Limits = {
  maxSubscribersPerTask: 32,
  maxStreamsPerConversation: 64,
  streamBufferBytes: 1024 * 1024,
  backlogPageSize: 100,
  maxPushConfigsPerTask: 10,
  retainFinishedTasks: 1000,
  retainFinishedMs: 30 * 24 * 60 * 60 * 1000,
  indexFlushMs: 1000,
  indexShards: 4,
  taskHistory: 100,
  taskHistoryChars: 1024 * 1024,
  liveTaskChars: 8 * 1024 * 1024,
  historyItems: 1_000_000,
  taskArtifactChars: 8 * 1024 * 1024,
  listArtifactChars: 16 * 1024 * 1024,
};

/**
 * Upper bounds, where a limit has one: a ListTasks asks every index shard; a task's
 * history goes whole into its webhook snapshot, which holds at most 8 Mi characters.
 */
const MAX_LIMITS: Partial<Limits> = { indexShards: 64, taskHistoryChars: 8 * 1024 * 1024 };

/** Applies the defaults; a bad value is a definition error naming the field. */
export function resolveLimits(config: LimitsConfig = {}): Limits {
  const out = { ...DEFAULT_LIMITS };
  for (const key of Object.keys(DEFAULT_LIMITS) as (keyof Limits)[]) {
    const v = config[key];
    if (v === undefined) continue;
    if (!Number.isInteger(v) || v <= 0) {
      throw new TypeError(`limits.${key} must be a positive integer, got ${String(v)}`);
    }
    const max = MAX_LIMITS[key];
    if (max !== undefined && v > max) {
      throw new TypeError(`limits.${key} must be at most ${max}, got ${v}`);
    }
    out[key] = v;
  }
  return out;
}
