/**
 * Builds the parts a conversation object owns and wires them to each other: the task
 * store, the index outbox, push, the alarm, handler runs, admission, streams, the task
 * calls, compaction, the task steps and the delegations.
 */

import type { Agent } from "../agent/definition";
import { type MemoryTurnScope, withHandlerMemory } from "../agent/memory-source";
import type { Item } from "../history/items";
import { IndexOutbox } from "../index/index-outbox";
import type { Task } from "../protocol/task";
import { logEvent } from "../telemetry/log";
import { Admission } from "./admission";
import { ObjectAlarm } from "./alarm";
import { ContextIdentity } from "./context-identity";
import { HistoryStore } from "./history/history-store";
import { HistoryCompaction } from "./history-compaction";
import { PushDispatcher } from "./push/push-dispatcher";
import { PushRpc } from "./push/push-rpc";
import { PushStore } from "./push/push-store";
import { ChildStore } from "./runs/children";
import { EventHub } from "./runs/event-hub";
import { HandlerRuns } from "./runs/handler-runs";
import { HeldExpiry } from "./runs/held-expiry";
import { storedTrace } from "./runs/run-trace";
import { TaskStreams } from "./runs/task-stream";
import { TaskRpc } from "./task-rpc";
import { ApprovalRows } from "./tasks/approval-rows";
import { inspectorSetting, TaskSteps } from "./tasks/task-steps";
import { type ReadOptions, TaskStore } from "./tasks/task-store";

/** What the parts ask of their object, at call time. */
export interface PartsHost<Env> {
  /** The agent (a test may replace it on a live object). */
  agent(): Agent<Env>;
  /** True until the first write: the object holds nothing and has no schema. */
  vacant(): boolean;
  /** Makes a vacant object a new conversation (its schema), before its first message. */
  create(): void;
  /** A task as it is now (TaskNotFound when it is not there). */
  read(taskId: string, options?: ReadOptions): Task;
}

/** A conversation object's parts. */
export interface ConversationParts<Env> {
  store: TaskStore;
  hub: EventHub;
  outbox: IndexOutbox;
  pushStore: PushStore | null;
  dispatcher: PushDispatcher | null;
  pushRpc: PushRpc | null;
  alarms: ObjectAlarm;
  identity: ContextIdentity;
  runs: HandlerRuns<Env>;
  admission: Admission<Env>;
  streams: TaskStreams;
  tasks: TaskRpc<Env>;
  compaction: HistoryCompaction<Env>;
  steps: TaskSteps;
  approvals: ApprovalRows;
  expiry: HeldExpiry<Env>;
}

/**
 * The parts of a conversation object serving `agent` (as it is when the object starts),
 * built once its schema is opened (some read it).
 */
export function buildParts<Env>(
  ctx: DurableObjectState,
  env: Env,
  agent: Agent<Env>,
  host: PartsHost<Env>,
): ConversationParts<Env> {
  // Delegations and webhook attempts of its tasks, for the inspector only.
  const steps = new TaskSteps(ctx.storage.sql, () =>
    inspectorSetting(host.agent() as Agent<unknown>, env),
  );
  // Delegations of this context's tasks to other agents.
  const children = new ChildStore(ctx.storage.sql, (taskId, change) =>
    steps.noteDelegation(taskId, change),
  );
  const current = () => host.agent();
  const limits = () => host.agent().limits;
  const read = (taskId: string) => host.read(taskId);
  const pushStore = agent.push
    ? new PushStore(ctx.storage.sql, { artifactChunks: agent.push.artifactChunks })
    : null;
  const store = new TaskStore(
    ctx.storage,
    new HistoryStore<Item>(ctx.storage, agent.maxHistoryItemBytes),
    pushStore,
    agent.limits,
  );
  steps.beforeWrite = () => store.settle();
  const hub = new EventHub();
  store.readBy(hub);
  // The outbox and the identity call each other, and the alarm: `parts` is read at call time.
  const outbox = new IndexOutbox(
    store.index,
    {
      target: () => parts.identity.indexTarget(),
      keepAlive: (work) => ctx.waitUntil(work),
      wakeAt: (at) => parts.alarms.wakeAt(at, "index"),
      settled: () =>
        parts.alarms
          .settle("index")
          .catch((error) => logEvent("error", "edgelink: could not move the alarm", { error })),
    },
    () => host.agent().limits.indexFlushMs,
  );
  store.index.onPending = () => outbox.schedule();
  const identity = new ContextIdentity(ctx.storage, store, env, current, () => {
    // The rows go to another shard now: a mark in the old one covers nothing there.
    outbox.forgetMark();
    outbox.schedule();
  });
  const dispatcher = pushStore
    ? new PushDispatcher(
        pushStore,
        store,
        agent as Agent<unknown>,
        env,
        () => identity.meta("push_issuer") ?? agent.card.url ?? "edgelink",
        read,
      )
    : null;
  // Deliveries join the trace of the run that queued them, however late they go.
  if (dispatcher) dispatcher.traceOf = (id) => storedTrace(ctx.storage.sql, id);
  if (dispatcher) dispatcher.steps = steps;
  const approvals = new ApprovalRows(ctx.storage.sql);
  const alarms = new ObjectAlarm(ctx.storage, {
    store,
    outbox,
    dispatcher,
    limits,
    expireHeld: () => parts.expiry.expire(),
  });
  const pushRpc = pushStore
    ? new PushRpc(ctx.storage, pushStore, store, alarms, limits, read)
    : null;
  const memoryScope = (): MemoryTurnScope => {
    const held = identity.held();
    return {
      tenant: held?.tenant ?? "",
      owner: held?.owner ?? "",
      background: (work) => ctx.waitUntil(work),
      mergeMetadata: (taskId, patch) => {
        const task = store.read(taskId);
        if (task) store.mergeMetadata(taskId, patch(task.metadata ?? {}));
      },
    };
  };
  const runs = new HandlerRuns(
    store,
    hub,
    alarms,
    children,
    env,
    withHandlerMemory(current, memoryScope),
    (work) => ctx.waitUntil(work),
    (taskId) => identity.logIds(taskId),
    memoryScope,
    approvals,
    () => {
      const held = identity.held();
      return { tenant: held?.tenant ?? "", owner: held?.owner ?? "" };
    },
  );
  const streams = new TaskStreams(store, hub, current, read);
  const parts: ConversationParts<Env> = {
    store,
    hub,
    outbox,
    pushStore,
    dispatcher,
    pushRpc,
    alarms,
    identity,
    runs,
    admission: new Admission<Env>({
      store,
      identity,
      runs,
      pushRpc,
      env,
      agent: current,
      vacant: () => host.vacant(),
      create: () => host.create(),
      read,
      approvals,
      steps,
    }),
    streams,
    tasks: new TaskRpc<Env>(
      store,
      identity,
      runs,
      streams,
      children,
      steps,
      pushRpc,
      ctx,
      env,
      host,
    ),
    compaction: new HistoryCompaction(store, current),
    steps,
    approvals,
    expiry: new HeldExpiry(approvals, store, runs, steps, (work) => ctx.waitUntil(work)),
  };
  return parts;
}
