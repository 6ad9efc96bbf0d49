/**
 * The options an agent is defined with, as its author writes them (`defineAgent`);
 * definition.ts checks them and resolves the `Agent` every other part reads.
 */
import type { cors } from "hono/cors";
import type { Summarizer } from "../history/summarize";
import type { AgentCardInput } from "../protocol/card/agent-card";
import type { JsonObject } from "../protocol/json";
import type { InferPart } from "../protocol/part";
import type { Model, ModelSettings } from "../providers/base/types";
import type { ApprovalsConfig } from "./access/approval-options";
import type { AuthOptions } from "./access/auth";
import type { RateLimitOptions } from "./access/rate-limit";
import type { AgentTools } from "./agent-tool-options";
import type { ContextWindowOptions } from "./context-window-option";
import type { DeclaredEndpoint } from "./endpoints";
import type { LimitsConfig } from "./limits";
import type { McpToolSource } from "./mcp-source";
import type { MemorySource } from "./memory-source";
import type { PromptCompositionInput } from "./prompt";
import type { ReplyHook } from "./reply";
import type { AgentHandler, RunContext } from "./run-context";
import type { Tools } from "./tool";

/** Answers an `infer` part; the providers module plugs a model in here. */
export type InferFn<Env = unknown> = (
  part: InferPart,
  ctx: RunContext<Env>,
) => Promise<string | JsonObject> | string | JsonObject;

/** Everything you configure about an agent. Only `card` is required. */
export interface AgentConfig<Env = unknown> {
  /** Identity, skills and capability flags, served as the agent card. */
  card: AgentCardInput;
  /**
   * Runs each turn of a task. Without one, an agent with a `model` runs the model (see
   * `model`); otherwise the default execution runs the latest message's `tool_call` and
   * `infer` parts.
   */
  handler?: AgentHandler<Env>;
  /**
   * Answers a new message with a message instead of a task (A2A §3.1.1), for quick replies
   * that need no tracking; return `undefined` to create a task as usual. See `ReplyHook`.
   */
  reply?: ReplyHook<Env>;
  /**
   * Tools the model may call. A client's `tool_call` parts run them directly only where
   * `acceptToolCalls` is on (always, for agents without a `model`).
   */
  tools?: Tools;
  /**
   * MCP servers whose tools the model may call beside `tools`, from
   * `mcpServers` of `edgelink/mcp` (opt-in, so Workers without MCP do not bundle its client):
   * `mcpServers({ docs: { url: "https://mcp.example.com/mcp", headers: { Authorization: "Bearer ${DOCS_TOKEN}" } } })`.
   * `${VAR}` in the url and header values comes from the Worker's env and secrets.
   */
  mcp?: McpToolSource;
  /**
   * Long-term memory of each user across conversations, from `memory` of
   * `edgelink/memory`: recalled into every model turn, written by extraction after each
   * turn and, when turned on, by the model's own tools; served to users and the operator
   * on `/memory` routes. Off unless given: it spends model calls and keeps what users say.
   * `memory({ scope: "owner", extract: true, tools: true })`.
   */
  memory?: MemorySource;
  /**
   * Other agents the model may call as tools, by tool name: each takes a message and
   * answers with the agent's answer. `{ writer: { binding: "WRITER", description: "..." } }`
   * (a service binding), `{ url: "https://..." }` or `{ card: {...} }`. Calls are
   * delegations (see `ctx.delegate`): durable across restarts, canceled with the task.
   */
  agents?: AgentTools;
  /**
   * Routes of your own beside the A2A ones, behind the same authentication, CORS
   * and body limit, each declared with `endpoint()`.
   */
  endpoints?: readonly DeclaredEndpoint<Env>[];
  /**
   * The model that answers: a provider (`openai(...)`, `anthropic(...)`, `gemini(...)`,
   * `workersAI(...)`, `openaiCompatible(...)`), a `fallback` or a `router`. With a model and
   * no handler, each turn sends the conversation to it, streams its answer into a
   * `response` artifact, runs the tools it calls and records every step in the history.
   */
  model?: Model;
  /**
   * System instructions for the model: a string, a composition (global prompt, generated
   * tools prompt, profile sections, additional context, or a verbatim `systemOverride`;
   * see `PromptComposition`), or a function building them per task.
   */
  instructions?:
    | string
    | PromptCompositionInput
    | ((ctx: RunContext<Env>) => string | Promise<string>);
  /** Request settings for every model call: temperature, maxTokens, reasoning, ... */
  modelSettings?: ModelSettings;
  /**
   * Take `<think>`, `<thinking>` and `<reasoning>` blocks out of the model's visible text,
   * for models that think inline (DeepSeek R1, QwQ, ...). Default true.
   */
  stripThinkTags?: boolean;
  /** Most model calls in one turn, counting each tool round. Default 20. */
  maxIterations?: number;
  /** Most tool rounds (model turns whose tool calls ran) in one turn. Default 10. */
  maxToolRounds?: number;
  /** A model-backed turn still running after this long fails. Default 300 s. */
  turnTimeoutMs?: number;
  /**
   * A tool call still running after this long gets a timeout error result; a tool's
   * own `timeoutMs` wins. Default 60 s.
   */
  toolTimeoutMs?: number;
  /**
   * A tool that throws or times out ends the turn with a tool error instead of giving the
   * model an error result. Unknown tools and bad arguments stay error results. Default false.
   */
  stopOnError?: boolean;
  /**
   * Only these tools are offered and run; unset or empty means all. Applies to the
   * agent's own tools, its `agents` and its MCP servers' tools (by the name the model sees).
   */
  allowedTools?: readonly string[];
  /** These tools are never offered or run; wins over `allowedTools`. Same scope. */
  blockedTools?: readonly string[];
  /**
   * Stream the model's reasoning deltas to A2A clients as transient status updates (a data
   * part marked `reasoning`). Off by default: some clients show every status message.
   */
  streamReasoning?: boolean;
  /** Add a trace of every model and tool call to the turn's result. Default false. */
  trace?: boolean;
  /** Calls beyond this many in one model turn get error results. Default 16. */
  maxToolCallsPerTurn?: number;
  /** Run one turn's tool calls concurrently; results keep call order. Default true. */
  parallelToolCalls?: boolean;
  /** Model call for `infer` parts in the default execution. */
  infer?: InferFn<Env>;
  /**
   * Accept `infer` parts from clients. Default: false for an agent with a `model` (its
   * model, paid by the operator, answers only turns the agent runs), true without one.
   * A refused part is answered with invalid params before anything is stored. When
   * accepted, the model gets the agent's `instructions` as its system prompt; the part's
   * `prompt` and `user` go as the user's message and never replace them.
   * @example
   * defineAgent({ card, model, instructions: "Classify support tickets.", acceptInfer: true });
   */
  acceptInfer?: boolean;
  /**
   * Accept `tool_call` parts from clients, which run a tool with the client's arguments
   * without asking the model. Default: false for an agent with a `model`, true without
   * one. `allowedTools` and `blockedTools` still apply to what such a part may run.
   * @example
   * defineAgent({ card, model, tools: { lookup }, acceptToolCalls: true });
   */
  acceptToolCalls?: boolean;
  /**
   * When the object restarts while a task is working, run the handler again instead of
   * failing the task. Only for handlers that are safe to repeat. Default false.
   */
  resumeOnRestart?: boolean;
  /**
   * How tool calls that need approval (a tool's `approval`) wait: their deadline, what
   * expiry does, and the built-in `ask_user` question tool (off by default).
   * @example
   * defineAgent({ card, model, tools: { refund }, approvals: { timeoutMs: 3_600_000, askUser: true } });
   */
  approvals?: ApprovalsConfig;
  /** Request bodies above this many bytes are refused before parsing. Default 1 MiB. */
  maxBodyBytes?: number;
  /** `Cache-Control: max-age` of the agent card, in seconds. Default 300. */
  cardMaxAgeSeconds?: number;
  /** Serve SendStreamingMessage and SubscribeToTask. Default true. */
  streaming?: boolean;
  /** The card returned by GetExtendedAgentCard; unset means the operation is unsupported. */
  extendedCard?: AgentCardInput;
  /** SSE keep-alive comment interval in milliseconds. Default 15000. */
  keepAliveMs?: number;
  /** Durable Object binding names in wrangler.toml. */
  bindings?: { context?: string; index?: string };
  /** Model call that writes summaries, for `summary` compaction of a conversation. */
  summarizer?: Summarizer;
  /** Largest single conversation item, in UTF-8 bytes; bigger ones are refused. Default 4 MiB. */
  maxHistoryItemBytes?: number;
  /**
   * How much history a model turn sends, read as a window from the end of the
   * conversation (never all of it): see `ContextWindowOptions` for the defaults.
   */
  contextWindow?: ContextWindowOptions;
  /**
   * Webhook push notifications. Set (even to `{}`) to serve them; the card then says
   * `pushNotifications: true`. Deliveries are signed with the private JWK(s) in the
   * `PUSH_SIGNING_KEYS` secret.
   */
  push?: PushOptions;
  /** Bounds on streams, subscribers and webhook configs (see `LimitsConfig`). */
  limits?: LimitsConfig;
  /**
   * Authentication, enforced on every route but the public card and JWKS, before any
   * Durable Object is touched. Without it the agent is public: anyone who can reach it
   * can send messages and read every task. See {@link AuthOptions}.
   */
  auth?: AuthOptions<Env>;
  /**
   * Rate limits per caller and per tenant, counted by Workers Rate Limiting bindings
   * (`[[ratelimits]]` in wrangler.toml); a refused request gets a 429 with `Retry-After`.
   * Unset: the bindings named `EDGELINK_PRINCIPAL_RATE_LIMIT` and
   * `EDGELINK_TENANT_RATE_LIMIT` are used when the Worker declares them, and a Worker
   * served on a public host without either logs a warning. See {@link RateLimitOptions}.
   */
  rateLimit?: RateLimitOptions | false;
  /**
   * Cross-origin access for browser clients (Hono's `cors` options), with a preflight on
   * every route. Off by default; the card is always readable cross-origin.
   */
  cors?: CorsOptions;
  /**
   * Accept context ids chosen by clients (A2A §3.4.1: an agent MAY). Default false: a
   * message naming a contextId this agent did not issue is refused (400,
   * `params.message.contextId`), and so is every read naming one, so no context id the
   * Worker cannot verify ever reaches an object. True is for clients that name their own
   * conversations; a read of an unknown one then reaches an object that writes nothing.
   */
  clientContextIds?: boolean;
  /**
   * Serve the inspector page at `/inspector` (a browser UI to chat with the agent and
   * look at its tasks, history and webhooks). Default: on under `wrangler dev` (served
   * from localhost), off when deployed, unless the `EDGELINK_INSPECTOR` variable says
   * "true" or "false".
   */
  inspector?: boolean;
}

/** Hono's `cors` middleware options. */
export type CorsOptions = NonNullable<Parameters<typeof cors>[0]>;

/** Push notification settings. */
export interface PushOptions {
  /**
   * Accept `http://localhost` and `127.0.0.1` webhooks (for local development and
   * conformance suites). Default: on when the agent itself is served from localhost
   * (`wrangler dev`), off when deployed.
   */
  allowLocalhost?: boolean;
  /** Give up on a delivery after this long (ms). Default 24 h. */
  horizonMs?: number;
  /** Give up on a delivery after this many attempts. Default 12. */
  maxAttempts?: number;
  /**
   * A config whose receiver failed this many attempts in a row is unhealthy: its
   * undelivered events coalesce into one task snapshot until a delivery succeeds.
   * Default 5.
   */
  unhealthyAfter?: number;
  /**
   * How a streamed artifact reaches a webhook. `"coalesced"` (default): the appends to an
   * artifact still waiting to be sent go in one delivery with all their parts in order
   * (a chunk not marked `lastChunk` waits up to a second for the rest; status updates and
   * the last chunk are sent at once and never reordered), so a receiver applying the
   * deliveries in order builds the same artifact with far fewer POSTs. `"each"`: one POST
   * per chunk.
   * @example
   * defineAgent({ card, handler, push: { artifactChunks: "each" } });
   */
  artifactChunks?: "coalesced" | "each";
}
