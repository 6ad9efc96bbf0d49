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
   * Bytes a stream may hold for a client that does not read. A subscriber this far behind
   * is dropped with a closing comment; it reconnects with Last-Event-ID. Default 1 MiB.
   */
  streamBufferBytes?: number;
  /** Events read from SQLite per page when a stream resumes from Last-Event-ID. Default 100. */
  backlogPageSize?: number;
  /** Webhook configs per task. Default 10. */
  maxPushConfigsPerTask?: number;
}

export type Limits = Required<LimitsConfig>;

export const DEFAULT_LIMITS: Limits = {
  maxSubscribersPerTask: 32,
  streamBufferBytes: 1024 * 1024,
  backlogPageSize: 100,
  maxPushConfigsPerTask: 10,
};

/** Applies the defaults; a bad value is a definition error naming the field. */
export function resolveLimits(config: LimitsConfig = {}): Limits {
  const out = { ...DEFAULT_LIMITS };
  for (const key of Object.keys(DEFAULT_LIMITS) as (keyof Limits)[]) {
    const v = config[key];
    if (v === undefined) continue;
    if (!Number.isInteger(v) || v <= 0) {
      throw new TypeError(`limits.${key} must be a positive integer, got ${String(v)}`);
    }
    out[key] = v;
  }
  return out;
}
