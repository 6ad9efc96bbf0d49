import type { JsonObject, JsonValue } from "../protocol/json";
import type {
  MemoryApplyResult,
  MemoryBundle,
  MemoryItem,
  MemoryKind,
  MemoryPage,
} from "../protocol/memory";
import type { RestCall } from "./operations";
import type { Transport } from "./transport";

/** The header carrying the operator's memory key (as the agent's `/memory` routes read it). */
export const MEMORY_OPERATOR_HEADER = "X-Edgelink-Memory-Operator";

/** What `memory.list` takes. */
export interface MemoryListOptions {
  kind?: MemoryKind;
  /** Full-text filter. */
  query?: string;
  pageSize?: number;
  pageToken?: string;
  /** Superseded facts too (never recalled, kept for the record). */
  includeSuperseded?: boolean;
  signal?: AbortSignal;
}

/** A fact as a user or the operator states it. */
export interface MemoryFactInput {
  claim: string;
  confidence?: number;
  entities?: string[];
  validFrom?: string;
  validTo?: string;
}

/**
 * An entity as a user or the operator names or describes it: one entity per name or
 * alias (case-insensitive), so naming a known one updates it; its `properties` merge
 * key by key into those it has (a JSON object of at most 4 KiB, 4 levels deep).
 */
export interface MemoryEntityInput {
  name: string;
  type?: string;
  aliases?: string[];
  description?: string;
  properties?: JsonObject;
  salience?: number;
}

/** A goal as a user or the operator sets it. */
export interface MemoryGoalInput {
  title: string;
  description?: string;
  priority?: number;
  parentId?: string;
  deadline?: string;
}

type Signal = { signal?: AbortSignal };

const seg = (s: string) => encodeURIComponent(s);

/**
 * The long-term memory of an Edgelink agent that serves it (`memory({ api: true })`): the
 * caller's own, or, with `asOperator`, any scope of the tenant. Errors are the client's
 * typed errors (`MemoryNotFoundError`, `MemoryFullError`, `PermissionDeniedError`, ...).
 * @example
 * ```ts
 * import { connect } from "edgelink/client";
 *
 * const agent = await connect("https://agent.example.com", { auth: { bearer: token } });
 * await agent.memory.add({ claim: "The user prefers window seats." });
 * const { items } = await agent.memory.list({ kind: "fact" });
 * await agent.memory.erase(); // everything about me
 * ```
 */
export class MemoryClient {
  constructor(
    private readonly transport: Transport,
    private readonly extra: { headers: Record<string, string>; query: JsonObject } = {
      headers: {},
      query: {},
    },
  ) {}

  /**
   * The same calls as the operator, on the memory of `scope` (a scope key: by default
   * the user's owner id), with the key the agent's `operatorSecret` holds.
   * @example
   * const theirs = agent.memory.asOperator(env.MEMORY_OPERATOR_KEY, ownerId);
   * await theirs.erase();
   */
  asOperator(key: string, scope: string): MemoryClient {
    return new MemoryClient(this.transport, {
      headers: { [MEMORY_OPERATOR_HEADER]: key },
      query: { scope },
    });
  }

  private call(call: RestCall, signal?: AbortSignal): Promise<JsonValue> {
    return this.transport.route(
      {
        ...call,
        query: { ...call.query, ...this.extra.query },
        headers: this.extra.headers,
      },
      signal,
    );
  }

  /** One page of remembered items of one kind (facts by default). */
  async list(options: MemoryListOptions = {}): Promise<MemoryPage> {
    const { signal, ...rest } = options;
    const query: JsonObject = { kind: rest.kind ?? "fact" };
    if (rest.query !== undefined) query.query = rest.query;
    if (rest.pageSize !== undefined) query.pageSize = rest.pageSize;
    if (rest.pageToken !== undefined) query.pageToken = rest.pageToken;
    if (rest.includeSuperseded !== undefined) query.includeSuperseded = rest.includeSuperseded;
    return (await this.call(
      { method: "GET", path: "/memory", query },
      signal,
    )) as unknown as MemoryPage;
  }

  /** What the agent would recall for `text`: the bundle its model would get. */
  async search(
    text: string,
    options: Signal & { tokenBudget?: number } = {},
  ): Promise<MemoryBundle> {
    const body: JsonObject = { text };
    if (options.tokenBudget !== undefined) body.tokenBudget = options.tokenBudget;
    return (await this.call(
      { method: "POST", path: "/memory/search", body },
      options.signal,
    )) as unknown as MemoryBundle;
  }

  /** Adds a fact (stored as stated by the user); a duplicate claim is not stored twice. */
  async add(fact: MemoryFactInput, options: Signal = {}): Promise<MemoryApplyResult> {
    return (await this.call(
      { method: "POST", path: "/memory/facts", body: { ...fact } as JsonObject },
      options.signal,
    )) as unknown as MemoryApplyResult;
  }

  /** Corrects a fact: the new one supersedes it, and the old one is never recalled again. */
  async correct(
    id: string,
    fact: MemoryFactInput,
    options: Signal = {},
  ): Promise<MemoryApplyResult> {
    return (await this.call(
      { method: "PUT", path: `/memory/facts/${seg(id)}`, body: { ...fact } as JsonObject },
      options.signal,
    )) as unknown as MemoryApplyResult;
  }

  /**
   * Names or describes an entity: added, or merged into the one holding its name or an
   * alias (a new description replaces the old, properties merge key by key).
   * @example
   * await agent.memory.upsertEntity({ name: "Lisbon", type: "Place", properties: { country: "PT" } });
   */
  async upsertEntity(entity: MemoryEntityInput, options: Signal = {}): Promise<MemoryApplyResult> {
    return (await this.call(
      { method: "POST", path: "/memory/entities", body: { ...entity } as JsonObject },
      options.signal,
    )) as unknown as MemoryApplyResult;
  }

  /** Sets a goal. */
  async addGoal(goal: MemoryGoalInput, options: Signal = {}): Promise<MemoryApplyResult> {
    return (await this.call(
      { method: "POST", path: "/memory/goals", body: { ...goal } as JsonObject },
      options.signal,
    )) as unknown as MemoryApplyResult;
  }

  /** One item; `MemoryNotFoundError` when this memory has none by that id. */
  async get(kind: MemoryKind, id: string, options: Signal = {}): Promise<MemoryItem> {
    return (await this.call(
      { method: "GET", path: `/memory/${seg(kind)}/${seg(id)}` },
      options.signal,
    )) as unknown as MemoryItem;
  }

  /** Deletes one item; `MemoryNotFoundError` when this memory has none by that id. */
  async delete(kind: MemoryKind, id: string, options: Signal = {}): Promise<void> {
    await this.call({ method: "DELETE", path: `/memory/${seg(kind)}/${seg(id)}` }, options.signal);
  }

  /** Deletes everything in this memory; answers how many items were erased. */
  async erase(options: Signal = {}): Promise<number> {
    const result = (await this.call({ method: "DELETE", path: "/memory" }, options.signal)) as {
      erased?: number;
    };
    return result.erased ?? 0;
  }
}
