/**
 * Which conversation object a request reaches, decided in the Worker: task and context
 * ids opened or verified for this caller, then the object's stub and the call's scope.
 * `Operations` extends it, so the hot path's calls stay direct method calls.
 */
import { mayApprove } from "../../agent/approvers";
import type { Principal } from "../../agent/auth";
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
  LOCAL_ID_SECRET_OBJECT,
  type LocalSecretSource,
  looksIssued,
  MAX_CONTEXT_ID_LENGTH,
  sealedTaskId,
  verifiedContextOf,
  verifyContextId,
} from "../../storage/ids";
import {
  A2A_TASK_ID,
  A2A_TENANT,
  carrierOf,
  GEN_AI_CONVERSATION_ID,
  type Traced,
} from "../../telemetry";
import { inspectorEnabled } from "../inspector-on";

/** The routing of one request's operations: its agent, tenant, origin and caller. */
export class ContextRouting<Env> {
  constructor(
    protected readonly agent: Agent<Env>,
    protected readonly env: Env,
    protected readonly tenant: string,
    /** The request's origin: the issuer of push signatures, and how dev is recognized. */
    protected readonly origin = "",
    /** The caller's owner (`ownerOf`): owns what it creates, sees only that ("" = anonymous). */
    protected readonly owner = "",
    /** The request's server span, when tracing is on: its context goes with each object call. */
    readonly trace?: Traced,
    /** The caller, asked only when it names a task by an approver's id. */
    protected readonly principal?: Principal,
  ) {
    if (trace && tenant) trace.span.setAttribute(A2A_TENANT, tenant);
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
    const ns = this.namespace(this.agent.bindings.index);
    return ns.get(ns.idFromName(LOCAL_ID_SECRET_OBJECT)) as unknown as LocalSecretSource;
  }

  protected get ids(): IdScope {
    return { tenant: this.tenant, owner: this.owner };
  }

  protected context(contextId: string, owner = this.owner): { stub: ContextRpc; scope: Scope } {
    const ns = this.namespace(this.agent.bindings.context);
    const id = ns.idFromName(contextObjectName(this.tenant, contextId, owner));
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
    const keys = await idKeys(this.env, this.origin, this);
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
    const keys = await idKeys(this.env, this.origin, this);
    const named =
      contextId === undefined
        ? await issuedContextId(keys, this.ids)
        : await this.namedContext(contextId, field);
    if (named === null) {
      throw new A2AError(
        "InvalidParams",
        `${field} ${contextId} is not a context id this agent issued to this caller`,
        { contextId: contextId ?? "" },
        [{ field, description: "not issued by this agent to this caller" }],
      );
    }
    const target = this.context(named);
    const newTaskId = await sealedTaskId(keys, this.ids, named);
    target.scope.newTaskId = newTaskId;
    if (this.agent.approvals.approvers) {
      const owned = { owner: this.owner, contextId: named, taskId: newTaskId };
      const approverId = await sealApproverTaskId(keys, this.tenant, owned);
      if (approverId) target.scope.newApproverTaskId = approverId;
    }
    this.trace?.span.setAttribute(A2A_TASK_ID, newTaskId);
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

  /**
   * A context id a client names. One of the shape Edgelink issues must verify for this
   * caller (null when it does not: forged, or another caller's); any other is a
   * client-chosen id, refused unless the agent accepts those (a `filter` gets null: no
   * context of this caller has it). Checked here in the Worker, so a forged id reaches no
   * object.
   */
  protected async namedContext(
    contextId: string,
    field: string,
    use: "address" | "filter" = "address",
  ): Promise<string | null> {
    if (contextId.length > MAX_CONTEXT_ID_LENGTH) {
      throw new A2AError("InvalidParams", `${field} is too long`, {}, [
        { field, description: `at most ${MAX_CONTEXT_ID_LENGTH} characters` },
      ]);
    }
    if (looksIssued(contextId)) {
      const keys = await idKeys(this.env, this.origin, this);
      return (await verifyContextId(keys, this.ids, contextId)) ? contextId : null;
    }
    if (!this.agent.clientContextIds) {
      if (use === "filter") return null;
      throw new A2AError(
        "InvalidParams",
        `${field}: this agent does not accept client-chosen context ids`,
        { contextId },
        [
          {
            field,
            description: "omit it to start a conversation, or send a contextId this agent issued",
          },
        ],
      );
    }
    return contextId;
  }

  /** The object of a context a read names; not found, in the Worker, when not issued to us. */
  protected async readContext(contextId: string, field: string) {
    const named = await this.namedContext(contextId, field);
    if (named === null) {
      throw new A2AError(
        "ContextNotFound",
        `Context ${contextId} not found (${field} is not a context id this agent issued to this caller)`,
        { contextId },
      );
    }
    return this.context(named);
  }

  /**
   * A context id a client names outside A2A (the memory API's `?contextId=`), verified as
   * the A2A routes verify theirs: one not issued to this caller (and not an accepted
   * client-chosen id) is refused before any object is named, not found for a read and
   * invalid for a write, naming `field`.
   */
  async checkedContextId(contextId: string, field: string, use: "read" | "write"): Promise<string> {
    const named = await this.namedContext(contextId, field);
    if (named === null && use === "read") {
      throw new A2AError(
        "ContextNotFound",
        `Context ${contextId} not found (${field} is not a context id this agent issued to this caller)`,
        { contextId },
      );
    }
    if (named === null) {
      throw new A2AError(
        "InvalidParams",
        `${field} ${contextId} is not a context id this agent issued to this caller`,
        { contextId },
        [{ field, description: "not issued by this agent to this caller" }],
      );
    }
    return named;
  }
}
