import type { ModelSettings, ReasoningOptions } from "../providers/base/types";
import type { ApprovalsConfig } from "./access/approval-options";
import type { ApproversRule } from "./access/approvers";
import type { AuthOptions } from "./access/auth";
import type { RateLimitOptions } from "./access/rate-limit";
import type { AgentConfig, PushOptions } from "./agent-config";
import type { ContextWindowOptions } from "./context-window-option";
import type { LimitsConfig } from "./limits";

/**
 * The option names of `defineAgent` at each level whose shape is fixed. Each list is checked
 * against its type by `satisfies`: a new option that is not listed here fails the
 * type-check, so the lists cannot fall behind the types.
 */
const AGENT = {
  card: 1,
  handler: 1,
  reply: 1,
  tools: 1,
  mcp: 1,
  memory: 1,
  agents: 1,
  endpoints: 1,
  model: 1,
  instructions: 1,
  modelSettings: 1,
  stripThinkTags: 1,
  maxIterations: 1,
  maxToolRounds: 1,
  turnTimeoutMs: 1,
  toolTimeoutMs: 1,
  stopOnError: 1,
  allowedTools: 1,
  blockedTools: 1,
  streamReasoning: 1,
  trace: 1,
  maxToolCallsPerTurn: 1,
  parallelToolCalls: 1,
  infer: 1,
  acceptInfer: 1,
  acceptToolCalls: 1,
  resumeOnRestart: 1,
  maxBodyBytes: 1,
  cardMaxAgeSeconds: 1,
  streaming: 1,
  extendedCard: 1,
  keepAliveMs: 1,
  bindings: 1,
  summarizer: 1,
  maxHistoryItemBytes: 1,
  contextWindow: 1,
  push: 1,
  approvals: 1,
  limits: 1,
  auth: 1,
  rateLimit: 1,
  cors: 1,
  clientContextIds: 1,
  inspector: 1,
} satisfies Record<keyof AgentConfig<unknown>, 1>;

const MODEL_SETTINGS = {
  toolChoice: 1,
  outputSchema: 1,
  outputName: 1,
  temperature: 1,
  maxTokens: 1,
  topP: 1,
  stop: 1,
  reasoning: 1,
  metadata: 1,
  providerOptions: 1,
} satisfies Record<keyof ModelSettings, 1>;

const REASONING = { effort: 1, budgetTokens: 1, include: 1 } satisfies Record<
  keyof ReasoningOptions,
  1
>;

const PUSH = {
  allowLocalhost: 1,
  horizonMs: 1,
  maxAttempts: 1,
  unhealthyAfter: 1,
  artifactChunks: 1,
} satisfies Record<keyof PushOptions, 1>;

const BINDINGS = { context: 1, index: 1 } satisfies Record<
  keyof NonNullable<AgentConfig<unknown>["bindings"]>,
  1
>;

const LIMITS = {
  maxSubscribersPerTask: 1,
  maxStreamsPerConversation: 1,
  streamBufferBytes: 1,
  backlogPageSize: 1,
  maxPushConfigsPerTask: 1,
  retainFinishedTasks: 1,
  retainFinishedMs: 1,
  indexFlushMs: 1,
  indexShards: 1,
  taskHistory: 1,
  taskHistoryChars: 1,
  liveTaskChars: 1,
  historyItems: 1,
  taskArtifactChars: 1,
  listArtifactChars: 1,
} satisfies Record<keyof LimitsConfig, 1>;

const CONTEXT_WINDOW = {
  maxTokens: 1,
  maxItems: 1,
  fallbackContextWindow: 1,
  reserveOutputTokens: 1,
  keepRecentTurns: 1,
  summaryMaxTokens: 1,
  summarize: 1,
  pageSize: 1,
} satisfies Record<keyof ContextWindowOptions, 1>;

const RATE_LIMIT = { perPrincipal: 1, perTenant: 1 } satisfies Record<keyof RateLimitOptions, 1>;

const AUTH = { bearer: 1, apiKeys: 1, authenticate: 1, customScheme: 1 } satisfies Record<
  keyof AuthOptions<unknown>,
  1
>;

const APPROVALS = { timeoutMs: 1, onTimeout: 1, askUser: 1, approvers: 1 } satisfies Record<
  keyof ApprovalsConfig,
  1
>;

const APPROVERS = { scopes: 1, claims: 1, apiKeys: 1, allow: 1 } satisfies Record<
  keyof ApproversRule,
  1
>;

/** The levels below the top one: where each is found, and its names. */
const NESTED: readonly [
  path: string,
  read: (c: Record<string, unknown>) => unknown,
  names: object,
][] = [
  ["modelSettings", (c) => c.modelSettings, MODEL_SETTINGS],
  ["modelSettings.reasoning", (c) => field(c.modelSettings, "reasoning"), REASONING],
  ["push", (c) => c.push, PUSH],
  ["bindings", (c) => c.bindings, BINDINGS],
  ["limits", (c) => c.limits, LIMITS],
  ["contextWindow", (c) => c.contextWindow, CONTEXT_WINDOW],
  ["rateLimit", (c) => c.rateLimit, RATE_LIMIT],
  ["auth", (c) => c.auth, AUTH],
  ["approvals", (c) => c.approvals, APPROVALS],
  ["approvals.approvers", (c) => field(c.approvals, "approvers"), APPROVERS],
];

const isPlain = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

const field = (v: unknown, name: string): unknown => (isPlain(v) ? v[name] : undefined);

/**
 * Refuses an option `defineAgent` does not know, at any level of fixed shape, naming it
 * and the nearest known name: a misspelt option (`temprature`) would otherwise be dropped
 * without a word, and the agent run with the default.
 */
export function refuseUnknownOptions(config: unknown): void {
  if (!isPlain(config)) return;
  check("", config, AGENT);
  for (const [path, read, names] of NESTED) {
    const value = read(config);
    if (isPlain(value)) check(`${path}.`, value, names);
  }
}

function check(prefix: string, value: Record<string, unknown>, names: object): void {
  const known = Object.keys(names);
  for (const key of Object.keys(value)) {
    if (Object.hasOwn(names, key)) continue;
    const near = nearest(key, known);
    throw new TypeError(
      `defineAgent: unknown option ${prefix}${key}${near ? ` (did you mean ${near}?)` : ""}; known: ${known.join(", ")}`,
    );
  }
}

/** The known name closest to `key`, if it is close enough to be a slip of the keyboard. */
export function nearest(key: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const name of known) {
    const d = distance(key.toLowerCase(), name.toLowerCase());
    if (d < bestDistance) {
      best = name;
      bestDistance = d;
    }
  }
  // A third of the name may be wrong (at least one letter, at most three).
  return bestDistance <= Math.min(3, Math.max(1, Math.floor(key.length / 3))) ? best : undefined;
}

/** Edit distance with adjacent transpositions (optimal string alignment). */
function distance(a: string, b: string): number {
  const rows: number[][] = [];
  for (let i = 0; i <= a.length; i++) rows.push([i]);
  for (let j = 1; j <= b.length; j++) (rows[0] as number[])[j] = j;
  for (let i = 1; i <= a.length; i++) {
    const row = rows[i] as number[];
    const up = rows[i - 1] as number[];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(
        (up[j] as number) + 1,
        (row[j - 1] as number) + 1,
        (up[j - 1] as number) + cost,
      );
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        d = Math.min(d, ((rows[i - 2] as number[])[j - 2] as number) + 1);
      }
      row[j] = d;
    }
  }
  return (rows[a.length] as number[])[b.length] as number;
}
