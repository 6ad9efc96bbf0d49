import type { JsonObject } from "../protocol/json";
import { isFirstToken } from "./base/collect";
import { AllProvidersFailedError, asProviderError, ProviderError } from "./base/errors";
import { membersProblems } from "./base/http";
import type { CallOptions, FailoverStore, Model, ModelRequest, StreamEvent } from "./base/types";
import { type AttemptResult, attempt, recoveredEvent } from "./opening";

/** When a fallback stops using a member, and for how long. */
export interface FallbackOptions {
  /** Key of the bookkeeping in a `FailoverStore`; default built from the members. */
  name?: string;
  /** A failed member is skipped for this long, then tried again. Default 60 s. */
  temporaryDisableMs?: number;
  /**
   * After this many failures in a row (a success starts the count again), a member is
   * disabled for `permanentDisableMs`. Default 3.
   */
  permanentFailures?: number;
  /**
   * How long a disabled member stays out; then one call tries it again: a success restores
   * it, a failure disables it for as long again. `Infinity` disables for good (until
   * `reset`). Default 1 h.
   */
  permanentDisableMs?: number;
  /** Time to first token above this counts as slow; no latency failover when unset. */
  latencyThresholdMs?: number;
  /** Consecutive slow turns that move the fallback off a member. Default 2. */
  latencyHits?: number;
  /** The clock, for tests. */
  now?: () => number;
  /** Where the bookkeeping lives when a call brings no `failoverStore`. Default: in memory. */
  store?: FailoverStore;
}

/** What a fallback remembers about one member; plain JSON so a Durable Object can keep it. */
export type MemberState = {
  /** Failures since its last success. */
  failures: number;
  /** When it last failed or was moved off for being slow, epoch ms. */
  lastFailureAt: number | null;
  /** Consecutive slow turns. */
  slowHits: number;
};

/** A fallback's bookkeeping as stored: members by id (`provider/model`), and the member in use. */
export type FailoverState = {
  active: number;
  members: { [id: string]: MemberState };
};

/** A fallback model; `reset` forgets every failure and disable, e.g. after fixing a key. */
export interface FallbackModel extends Model {
  reset(store?: FailoverStore): Promise<void>;
}

/**
 * Tries models in priority order. Each call starts at the highest-priority member
 * that is neither cooling down after a failure (`temporaryDisableMs`) nor disabled
 * after `permanentFailures` failures in a row (for `permanentDisableMs`); when every
 * enabled member is cooling down they are tried anyway, in order, rather than failing
 * without a try. A call a member answers to the end resets its failure count. A member that fails before its
 * stream opened is recorded, and the same request goes to the next member; the stream
 * then starts with an `error` event (`recovered: true`) per failure. When the last member
 * fails too, an `AllProvidersFailedError` is thrown: it takes the last failure's kind,
 * status and code and lists every failure. A failure after the stream opened is
 * recorded and rethrown as it came: no member is asked again once content reached the
 * consumer. A cancellation is never recorded nor passed on.
 *
 * The bookkeeping is plain JSON under `name`, in `CallOptions.failoverStore` when the
 * call brings one, else in `options.store`, else in memory: one fallback's health is then
 * shared by every call (every conversation of an agent) in the isolate. The fallback
 * reports the capabilities of its first member: the one it uses while all is well.
 * @example
 * const model = fallback([withRetry(openai({ model: "gpt-4o-mini" })), anthropic({ model: "claude-haiku-4-5" })], {
 *   latencyThresholdMs: 5_000,
 * });
 */
export function fallback(models: readonly Model[], options: FallbackOptions = {}): FallbackModel {
  const first = models[0];
  if (!first) throw new TypeError("a fallback needs at least one model");
  const ids = memberIds(models);
  const name = options.name ?? `fallback(${ids.join(",")})`;
  const temporaryDisableMs = options.temporaryDisableMs ?? 60_000;
  const permanentFailures = options.permanentFailures ?? 3;
  const permanentDisableMs = options.permanentDisableMs ?? 60 * 60_000;
  const latencyHits = options.latencyHits ?? 2;
  const threshold = options.latencyThresholdMs;
  const now = options.now ?? Date.now;
  const memory = options.store ?? memoryStore();

  const load = async (store: FailoverStore) => readState(await store.load(name), ids);
  const save = async (store: FailoverStore, state: FailoverState) =>
    store.save(name, state as unknown as JsonObject);
  /** Read-modify-write under the store's lock, so concurrent calls never lose an update. */
  const update = (store: FailoverStore, change: (state: FailoverState) => boolean) =>
    exclusive(store, name, async () => {
      const state = await load(store);
      if (change(state)) await save(store, state);
    });

  /** Disabled after too many failures in a row, until the disable has run out. */
  const enabled = (m: MemberState, t: number) =>
    m.failures < permanentFailures ||
    (m.lastFailureAt !== null && t - m.lastFailureAt >= permanentDisableMs);
  const availableAt = (state: FailoverState, t: number) =>
    ids.flatMap((id, i) => {
      const m = state.members[id] as MemberState;
      const cooled = m.lastFailureAt === null || t - m.lastFailureAt >= temporaryDisableMs;
      return enabled(m, t) && cooled ? [i] : [];
    });
  const usable = (state: FailoverState, t: number) =>
    ids.flatMap((id, i) => (enabled(state.members[id] as MemberState, t) ? [i] : []));

  /** A failure someone else already recorded while we used the member is not counted again. */
  const recordFailure = (store: FailoverStore, index: number, seen: MemberState) =>
    update(store, (state) => {
      const member = state.members[ids[index] as string] as MemberState;
      if (member.failures !== seen.failures || member.lastFailureAt !== seen.lastFailureAt)
        return false;
      const t = now();
      member.failures++;
      member.lastFailureAt = t;
      member.slowHits = 0;
      state.active = availableAt(state, t)[0] ?? state.active;
      return true;
    });

  /** A member that answered to the end starts its failure count again (no write when at 0). */
  const recordSuccess = (store: FailoverStore, index: number) =>
    update(store, (state) => {
      const member = state.members[ids[index] as string] as MemberState;
      if (member.failures === 0) return false;
      member.failures = 0;
      return true;
    });

  /** Counts slow first tokens; tool turns say nothing about the member's speed. */
  const recordLatency = (store: FailoverStore, index: number, ttftMs: number) =>
    update(store, (state) => {
      if (threshold === undefined) return false;
      const member = state.members[ids[index] as string] as MemberState;
      if (ttftMs <= threshold) {
        if (member.slowHits === 0) return false;
        member.slowHits = 0;
      } else if (++member.slowHits >= latencyHits) {
        const t = now();
        member.slowHits = 0;
        member.lastFailureAt = t;
        state.active = availableAt(state, t)[0] ?? state.active;
      }
      return true;
    });

  async function* timed(
    store: FailoverStore,
    index: number,
    stream: AsyncIterable<StreamEvent[]>,
  ): AsyncGenerator<StreamEvent[]> {
    const started = now();
    let measured = false;
    for await (const batch of stream) {
      const token = measured ? undefined : batch.find(isFirstToken);
      if (token) {
        measured = true;
        if (token.type !== "tool_call_start") await recordLatency(store, index, now() - started);
      }
      yield batch;
    }
    await recordSuccess(store, index);
  }

  return {
    provider: "fallback",
    model: name,
    capabilities: first.capabilities,
    configProblems: (env) => membersProblems(models, env),
    async reset(store = memory) {
      await store.save(name, {});
    },
    async *streamBatches(
      request: ModelRequest,
      call: CallOptions = {},
    ): AsyncGenerator<StreamEvent[]> {
      const store = call.failoverStore ?? memory;
      const state = await load(store);
      const t = now();
      const available = availableAt(state, t);
      const order = available.length ? available : usable(state, t);
      const start = order[0];
      if (start === undefined) {
        throw new ProviderError({
          provider: "fallback",
          kind: "config",
          message: `every member of ${name} failed ${permanentFailures} times in a row and is disabled`,
          retryable: false,
        });
      }
      if (state.active !== start) {
        await update(store, (latest) => {
          latest.active = start;
          return true;
        });
      }
      const failures: ProviderError[] = [];
      const recovered: StreamEvent[] = [];
      for (const index of order) {
        const member = models[index] as Model;
        const seen = (await load(store)).members[ids[index] as string] as MemberState;
        let result: AttemptResult;
        try {
          result = yield* attempt(
            () => timed(store, index, member.streamBatches(request, call)),
            recovered,
          );
        } catch (error) {
          if (!isCancel(error, call)) await recordFailure(store, index, seen);
          throw error;
        }
        if (result.opened) return;
        const { error } = result;
        if (isCancel(error, call)) throw error;
        const failure = asProviderError(member.provider, error, call.signal);
        await recordFailure(store, index, seen);
        failures.push(failure);
        recovered.push(recoveredEvent(failure, member.model));
      }
      throw new AllProvidersFailedError("fallback", failures);
    },
  };
}

function isCancel(error: unknown, call: CallOptions): boolean {
  return (
    call.signal?.aborted === true || (error instanceof ProviderError && error.kind === "aborted")
  );
}

/** `provider/model` per member, numbered when the same one appears twice. */
function memberIds(models: readonly Model[]): string[] {
  const seen = new Map<string, number>();
  return models.map((m) => {
    const id = `${m.provider}/${m.model}`;
    const count = (seen.get(id) ?? 0) + 1;
    seen.set(id, count);
    return count === 1 ? id : `${id}#${count}`;
  });
}

/** Reads stored bookkeeping, tolerating a missing or older shape (members added or removed). */
function readState(stored: JsonObject | null, ids: readonly string[]): FailoverState {
  const members: { [id: string]: MemberState } = {};
  const raw = stored?.members;
  const source = raw && typeof raw === "object" && !Array.isArray(raw) ? raw : {};
  for (const id of ids) {
    const entry = (source as Record<string, unknown>)[id] as Partial<MemberState> | undefined;
    members[id] = {
      failures: typeof entry?.failures === "number" ? entry.failures : 0,
      lastFailureAt: typeof entry?.lastFailureAt === "number" ? entry.lastFailureAt : null,
      slowHits: typeof entry?.slowHits === "number" ? entry.slowHits : 0,
    };
  }
  const active = typeof stored?.active === "number" ? stored.active : 0;
  return { active, members };
}

const locks = new WeakMap<FailoverStore, Map<string, Promise<void>>>();

/**
 * Runs `task` after every earlier task on the same store and key. Calls share a store
 * (one Durable Object, or one fallback's memory), and a load-change-save that awaits in
 * between must not interleave with another, or one of the two changes is lost.
 */
function exclusive(store: FailoverStore, key: string, task: () => Promise<void>): Promise<void> {
  let queues = locks.get(store);
  if (!queues) {
    queues = new Map();
    locks.set(store, queues);
  }
  const previous = queues.get(key) ?? Promise.resolve();
  const run = previous.then(task);
  const tail = run.catch(() => {});
  queues.set(key, tail);
  void tail.then(() => {
    if (queues.get(key) === tail) queues.delete(key);
  });
  return run;
}

/** The default store: bookkeeping shared by every call of one fallback in this isolate. */
function memoryStore(): FailoverStore {
  const states = new Map<string, JsonObject>();
  return {
    load: (key) => states.get(key) ?? null,
    save: (key, state) => {
      states.set(key, structuredClone(state));
    },
  };
}
