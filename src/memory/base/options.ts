import type { Model } from "../../providers/base/types";
import type { Embedder } from "./embedder";
import { type MemoryLimits, resolveMemoryLimits } from "./limits";
import type { MemoryScope } from "./scope-key";

/** The default secret holding the operator's key to every scope's memory (`api.operatorSecret`). */
export const OPERATOR_SECRET = "EDGELINK_MEMORY_OPERATOR_KEY";
/** Tokens of memory a turn's prompt carries at most, by default. */
export const DEFAULT_RECALL_TOKENS = 1_000;

/** What `memory({...})` takes. Only what is turned on costs anything. */
export interface MemoryOptions {
  /** Whose memory a turn reads and writes; default `"owner"` (see `MemoryScope`). */
  scope?: MemoryScope;
  /**
   * Recall before each model turn: a prompt section after the instructions, within
   * `tokenBudget` estimated tokens (default 1,000). Default on; `false` turns it off.
   */
  recall?: boolean | { tokenBudget?: number };
  /**
   * After each completed turn, a model call (the agent's model, or `model`) reads the
   * user's message and decides what to add, correct or delete, off the answer's path.
   * Costs one model call per turn (bounded by `limits.extractionCallsPerHour`); default off.
   */
  extract?: boolean | { model?: Model };
  /** Offer the model `remember`, `forget`, `set_goal` and `update_goal` tools. Default off. */
  tools?: boolean;
  /**
   * Record each completed turn of a model-backed agent (the user's message and the
   * answer, and with `tools: true` each tool call's result) in memory, off the answer's
   * path, so later conversations recall what was said. Kept within `limits` (the item
   * limit, `maxItemBytes`, `turnRetentionDays`); with an embedder, each turn is embedded
   * too. Default off: `true` or `{ record: true }` records, without tool turns unless
   * `tools: true`.
   */
  turns?: boolean | { record?: boolean; tools?: boolean };
  /**
   * Serve the `/memory` routes: each user lists, searches, adds, corrects and deletes their
   * own memory and erases all of it. The operator reaches any scope with the key in the
   * `operatorSecret` secret (default `EDGELINK_MEMORY_OPERATOR_KEY`; unset: no operator
   * access). Default off.
   */
  api?: boolean | { operatorSecret?: string };
  /** Vector search beside text search (see `Embedder`). */
  embedder?: Embedder;
  /** A Vectorize index binding's name, for memories past the object's own vector search. */
  vectorize?: string;
  /** Bounds of each memory over the defaults (see `MemoryLimits`). */
  limits?: Partial<MemoryLimits>;
  /** The Durable Object binding of the memory objects; default `EDGELINK_MEMORY`. */
  binding?: string;
}

/** The options validated, every default applied. */
export interface ResolvedMemoryOptions {
  scope: MemoryScope;
  recall: { tokenBudget: number } | null;
  extract: { model: Model | null } | null;
  tools: boolean;
  /** Turns are recorded (null: not), tool turns too when `tools`. */
  turns: { tools: boolean } | null;
  api: { operatorSecret: string } | null;
  embedder: Embedder | null;
  vectorize: string | null;
  limits: MemoryLimits;
  binding: string;
}

const BINDING_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

function flag(name: string, value: unknown): void {
  if (
    value !== undefined &&
    typeof value !== "boolean" &&
    (typeof value !== "object" || value === null)
  ) {
    throw new TypeError(`memory.${name} must be true, false or an options object`);
  }
}

/** Validates `memory({...})`, naming each bad option as `memory.<field>`. */
export function resolveMemoryOptions(options: MemoryOptions = {}): ResolvedMemoryOptions {
  if (typeof options !== "object" || options === null) {
    throw new TypeError("memory options must be an object");
  }
  const known = new Set([
    "scope",
    "recall",
    "extract",
    "tools",
    "turns",
    "api",
    "embedder",
    "vectorize",
    "limits",
    "binding",
  ]);
  const unknown = Object.keys(options).filter((k) => !known.has(k));
  if (unknown.length) throw new TypeError(`memory: unknown option ${unknown.join(", ")}`);
  const scope = options.scope ?? "owner";
  if (scope !== "owner" && scope !== "context" && typeof scope !== "function") {
    throw new TypeError('memory.scope must be "owner", "context" or a function returning a key');
  }
  flag("recall", options.recall);
  flag("extract", options.extract);
  flag("api", options.api);
  flag("turns", options.turns);
  if (options.tools !== undefined && typeof options.tools !== "boolean") {
    throw new TypeError("memory.tools must be true or false");
  }
  let recall: ResolvedMemoryOptions["recall"] = { tokenBudget: DEFAULT_RECALL_TOKENS };
  if (options.recall === false) recall = null;
  else if (typeof options.recall === "object") {
    const budget = options.recall.tokenBudget ?? DEFAULT_RECALL_TOKENS;
    if (!Number.isInteger(budget) || budget < 1 || budget > 32_000) {
      throw new TypeError("memory.recall.tokenBudget must be a whole number from 1 to 32000");
    }
    recall = { tokenBudget: budget };
  }
  let extract: ResolvedMemoryOptions["extract"] = null;
  if (options.extract === true) extract = { model: null };
  else if (typeof options.extract === "object") {
    const model = options.extract.model;
    if (model !== undefined && typeof model?.streamBatches !== "function") {
      throw new TypeError(
        "memory.extract.model must be a model (openai(...), anthropic(...), ...)",
      );
    }
    extract = { model: model ?? null };
  }
  let turns: ResolvedMemoryOptions["turns"] = null;
  if (options.turns === true) turns = { tools: false };
  else if (typeof options.turns === "object") {
    const { record, tools, ...rest } = options.turns;
    const extra = Object.keys(rest);
    if (extra.length) throw new TypeError(`memory.turns: unknown option ${extra.join(", ")}`);
    for (const [name, value] of [
      ["record", record],
      ["tools", tools],
    ] as const) {
      if (value !== undefined && typeof value !== "boolean") {
        throw new TypeError(`memory.turns.${name} must be true or false`);
      }
    }
    if (record === true) turns = { tools: tools ?? false };
  }
  let api: ResolvedMemoryOptions["api"] = null;
  if (options.api === true) api = { operatorSecret: OPERATOR_SECRET };
  else if (typeof options.api === "object") {
    const secret = options.api.operatorSecret ?? OPERATOR_SECRET;
    if (!BINDING_NAME.test(secret)) {
      throw new TypeError("memory.api.operatorSecret must be the name of a secret");
    }
    api = { operatorSecret: secret };
  }
  const embedder = options.embedder ?? null;
  if (
    embedder !== null &&
    (typeof embedder.embed !== "function" || typeof embedder.id !== "string")
  ) {
    throw new TypeError(
      "memory.embedder must be an Embedder (workersAiEmbedder(...), openAiEmbedder(...))",
    );
  }
  for (const [name, value] of [
    ["vectorize", options.vectorize],
    ["binding", options.binding],
  ] as const) {
    if (value !== undefined && (typeof value !== "string" || !BINDING_NAME.test(value))) {
      throw new TypeError(`memory.${name} must be the name of a binding`);
    }
  }
  return {
    scope,
    recall,
    extract,
    tools: options.tools ?? false,
    turns,
    api,
    embedder,
    vectorize: options.vectorize ?? null,
    limits: resolveMemoryLimits(options.limits),
    binding: options.binding ?? "EDGELINK_MEMORY",
  };
}
