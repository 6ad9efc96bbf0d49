import { DurableObject } from "cloudflare:workers";
import type { Embedder, VectorIndex } from "../memory/embedder";
import { type MemoryLimits, resolveMemoryLimits } from "../memory/limits";
import type {
  MemoryApplyResult,
  MemoryBundle,
  MemoryFact,
  MemoryItem,
  MemoryKind,
  MemoryListQuery,
  MemoryOp,
  MemoryOrigin,
  MemoryPage,
  MemoryStats,
  RememberQuery,
} from "../models/memory";
import { attempt, type Result } from "./result";

/** What a memory object is configured with; supplied by the subclass `defineAgent` builds. */
export interface MemoryObjectOptions {
  limits?: Partial<MemoryLimits>;
  embedder?: Embedder;
  /** Name of a Vectorize index binding in the Worker's env, for memories past the local size. */
  vectorize?: string;
}

/**
 * The object's RPC surface as the Worker calls it. Each method answers a Result: protocol
 * errors (InvalidParams naming the field, MemoryFull) cross the boundary as data.
 */
export type MemoryRpc = Pick<
  MemoryObject,
  "apply" | "remember" | "neighbours" | "list" | "get" | "remove" | "erase" | "stats"
>;

/**
 * One memory (a user's, by default, within a tenant): facts, entities, goals, strategies
 * and turns as SQLite rows with full-text indexes. A read on a memory never written
 * creates nothing and answers empty.
 */
export class MemoryObject<Env = unknown> extends DurableObject<Env> {
  /** The memory's configuration; a subclass overrides this getter (on its prototype). */
  protected get memoryOptions(): MemoryObjectOptions {
    return {};
  }

  protected readonly limits: MemoryLimits;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.limits = resolveMemoryLimits(this.memoryOptions.limits);
  }

  /** Applies operations in order, all or nothing. */
  apply(ops: MemoryOp[], origin?: MemoryOrigin): Promise<Result<MemoryApplyResult>> {
    return attempt("memory object", () => notYet<MemoryApplyResult>(ops, origin));
  }

  /** The memories relevant to a query, within its token budget; counts each one recalled. */
  remember(query: RememberQuery): Promise<Result<MemoryBundle>> {
    return attempt("memory object", () => notYet<MemoryBundle>(query));
  }

  /** The closest live facts to each claim (no access counted): for extraction's decisions. */
  neighbours(claims: string[], k: number): Promise<Result<MemoryFact[][]>> {
    return attempt("memory object", () => notYet<MemoryFact[][]>(claims, k));
  }

  list(query: MemoryListQuery): Promise<Result<MemoryPage>> {
    return attempt("memory object", () => notYet<MemoryPage>(query));
  }

  get(kind: MemoryKind, id: string): Promise<Result<MemoryItem | null>> {
    return attempt("memory object", () => notYet<MemoryItem | null>(kind, id));
  }

  remove(kind: MemoryKind, id: string): Promise<Result<boolean>> {
    return attempt("memory object", () => notYet<boolean>(kind, id));
  }

  /** Deletes everything, storage included: nothing is recallable afterwards. */
  erase(): Promise<Result<{ erased: number }>> {
    return attempt("memory object", () => notYet<{ erased: number }>());
  }

  stats(): Promise<Result<MemoryStats>> {
    return attempt("memory object", () => notYet<MemoryStats>());
  }
}

function notYet<T>(..._args: unknown[]): T {
  throw new Error("not yet");
}

export type { VectorIndex };
