/**
 * Which conversation object a request reaches, decided in the Worker: task and context
 * ids opened or verified for this caller, then the object's stub and the call's scope.
 * `Operations` extends it, so the hot path's calls stay direct method calls.
 */
import { mayApprove } from "../../agent/access/approvers";
import type { Principal } from "../../agent/access/auth";
import type { Agent } from "../../agent/definition";
import type { ContextRpc, Scope } from "../../conversation/context-object";
import { A2AError } from "../../protocol/errors";
import type { SendParams } from "../../protocol/wire/requests";
import { openApproverTaskId, sealApproverTaskId } from "../../storage/approver-ids";
import {
  contextObjectName,
  type IdScope,
  idKeys,
  issuedContextId,
  type LocalSecretSource,
  readyIdKeys,
  sealedTaskId,
  verifiedContextOf,
} from "../../storage/ids";
import {
  A2A_TASK_ID,
  A2A_TENANT,
  carrierOf,
  GEN_AI_CONVERSATION_ID,
  type Traced,
} from "../../telemetry";
import { localSecretHolder } from "../context-ids";
import { inspectorEnabled } from "../inspector-on";
import type { CallerScope } from "../route-scope";

/** Conversation objects' ids by name, per namespace, kept for the isolate (see `objectId`). */
const objectIds = new WeakMap<DurableObjectNamespace, Map<string, DurableObjectId>>();
/** Object ids an isolate keeps per namespace; the oldest goes first. */
export const OBJECT_IDS_KEPT = 512;

/**
 * The object id of a name: `idFromName` hashes the name anew on every call (a SHA-256
 * HMAC, about a sixtieth of a blocking message's instructions), and a conversation's
 * messages name the same object one after another. An id is a value, valid for any
 * request of the isolate.
 */
export function objectId(ns: DurableObjectNamespace, name: string): DurableObjectId {
  let ids = objectIds.get(ns);
  if (!ids) {
    ids = new Map();
    objectIds.set(ns, ids);
  }
  let id = ids.get(name);
  if (!id) {
    id = ns.idFromName(name);
    if (ids.size >= OBJECT_IDS_KEPT) ids.delete(ids.keys().next().value as string);
    ids.set(name, id);
  }
  return id;
}

/**
 * The routing of one request's operations: its agent, its caller's scope (resolved by the
 * route table's guards, which also verify the context ids it names), its origin.
 */
export class ContextRouting<Env> {
  protected readonly tenant: string;
  /** The caller's owner (`ownerOf`): owns what it creates, sees only that ("" = anonymous). */
  protected readonly owner: string;

  constructor(
    protected readonly agent: Agent<Env>,
    protected readonly env: Env,
    protected readonly scope: CallerScope,
    /** The request's origin: the issuer of push signatures, and how dev is recognized. */
    protected readonly origin = "",
    /** The request's server span, when tracing is on: its context goes with each object call. */
    readonly trace?: Traced,
    /** The caller, asked only when it names a task by an approver's id. */
    protected readonly principal?: Principal,
  ) {
    this.tenant = scope.tenant;
    this.owner = scope.owner;
    if (trace && scope.tenant) trace.span.setAttribute(A2A_TENANT, scope.tenant);
  }

  protected namespace(name: string): DurableObjectNamespace {
    const ns = (this.env as Record<string, unknown>)[name];
    if (!ns || typeof (ns as DurableObjectNamespace).idFromName !== "function") {
      throw new A2AError(
        "Internal",
        `Durable Object binding ${name} is missing; declare it in wrangler.toml`,
      );
    }
    return ns as DurableObjectNamespace;
  }

  /** Under wrangler dev without EDGELINK_ID_KEY: the object that keeps the generated secret. */
  localSecretSource(): LocalSecretSource {
    return localSecretHolder(this.env, this.agent.bindings.index).localSecretSource();
  }

  /** The id keys without a wait, once this isolate has them. */
  private readyKeys() {
    return readyIdKeys(this.env, this.origin);
  }

  protected get ids(): IdScope {
    return { tenant: this.tenant, owner: this.owner };
  }

  protected context(contextId: string, owner = this.owner): { stub: ContextRpc; scope: Scope } {
    const ns = this.namespace(this.agent.bindings.context);
    const id = objectId(ns, contextObjectName(this.tenant, contextId, owner));
    const stub = ns.get(id) as unknown as ContextRpc;
    const scope: Scope = { tenant: this.tenant, contextId, owner };
    // The object records task steps for the inspector only while it is on (see TaskSteps).
    if (inspectorEnabled(this.agent as Agent<unknown>, this.env, this.origin)) {
      scope.inspector = true;
    }
    if (this.trace) {
      // The platform carries no trace context over RPC: the span goes with the scope.
      scope.trace = carrierOf(this.trace.ctx);
      this.trace.span.setAttribute(GEN_AI_CONVERSATION_ID, contextId);
    }
    return { stub, scope };
  }

  /** The context of a task id issued to this caller; not found for any other id. */
  protected async verifiedContext(taskId: string): Promise<string> {
    const keys = this.readyKeys() ?? (await idKeys(this.env, this.origin, this));
    const contextId = await verifiedContextOf(keys, this.ids, taskId);
    if (contextId === null)
      throw new A2AError("TaskNotFound", `Task ${taskId} not found`, { taskId });
    return contextId;
  }

  /** The conversation object holding a task; the id itself says which (no lookup). */
  protected async contextOfTask(taskId: string) {
    this.trace?.span.setAttribute(A2A_TASK_ID, taskId);
    return this.context(await this.verifiedContext(taskId));
  }

  /**
   * Where a new message goes: its task's conversation, its own, or a new one. `field` is
   * how the request named the context id, for errors (the chat endpoint's `sessionId`).
   */
  protected async route(params: SendParams, field = "params.message.contextId") {
    const { taskId, contextId } = params.message;
    if (taskId) {
      const owner = await this.verifiedContext(taskId);
      if (contextId && contextId !== owner) {
        throw new A2AError(
          "InvalidParams",
          `${field} ${contextId} does not match the context of task ${taskId}`,
          { taskId, contextId },
          [{ field, description: "does not match the task's context" }],
        );
      }
      return this.context(owner);
    }
    const keys = this.readyKeys() ?? (await idKeys(this.env, this.origin, this));
    // A named one is verified by the route's context-id guard (a write: refused, never null).
    const named =
      contextId === undefined
        ? await issuedContextId(keys, this.ids)
        : ((await this.scope.contextId(contextId, field, "write")) as string);
    const target = this.context(named);
    const newTaskId = await sealedTaskId(keys, this.ids, named);
    target.scope.newTaskId = newTaskId;
    if (this.agent.approvals.approvers) {
      const owned = { owner: this.owner, contextId: named, taskId: newTaskId };
      const approverId = await sealApproverTaskId(keys, this.tenant, owned);
      if (approverId) target.scope.newApproverTaskId = approverId;
    }
    // The object adds the task's key to the id: the span names it once it answers.
    return target;
  }

  /**
   * The owner's conversation holding the task an approver's id names, for a caller the
   * agent's approver rule accepts; not found, exactly as an unknown task, for anyone else
   * (and for every caller when the agent names no approvers).
   */
  protected async approverContext(approverId: string) {
    const rule = this.agent.approvals.approvers;
    const notFound = new A2AError("TaskNotFound", `Task ${approverId} not found`, {
      taskId: approverId,
    });
    if (!rule || !this.principal) throw notFound;
    const keys = await idKeys(this.env, this.origin, this);
    const target = await openApproverTaskId(keys, this.tenant, approverId);
    if (!target) throw notFound;
    const allowed = await mayApprove(rule, this.principal, {
      tenant: this.tenant,
      owner: target.owner,
    });
    if (!allowed) throw notFound;
    this.trace?.span.setAttribute(A2A_TASK_ID, target.taskId);
    const { stub, scope } = this.context(target.contextId, target.owner);
    scope.approver = this.owner;
    return { stub, scope, taskId: target.taskId };
  }
}
