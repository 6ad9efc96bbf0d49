import type { Context } from "@opentelemetry/api";
import type { z } from "zod";
import type { JsonObject, JsonValue } from "../protocol/json";
import type { ApprovalCaller } from "./access/approval-options";

/**
 * A tool the agent can run for a `tool_call` part. Arguments are validated with
 * the zod schema before `run` sees them.
 * @example
 * const add = tool({
 *   description: "Adds two numbers",
 *   input: z.object({ a: z.number(), b: z.number() }),
 *   run: ({ a, b }) => a + b,
 * });
 */
export interface Tool<S extends z.ZodType = z.ZodType> {
  description: string;
  input: S;
  /**
   * The JSON Schema shown to the model instead of one derived from `input`, for tools whose
   * schema comes from elsewhere (an MCP server's tools).
   */
  jsonSchema?: JsonObject;
  run: (
    args: z.output<S>,
    /**
     * `callId`: the model's id for this call, when a model made it. `traceContext`: the
     * OpenTelemetry context of the call's `execute_tool` span while tracing is on, to
     * parent spans or outbound calls of the tool's own.
     */
    options: { signal: AbortSignal; callId?: string; traceContext?: Context },
  ) => JsonValue | Promise<JsonValue>;
  /** This tool's time limit, over the agent's `toolTimeoutMs`. */
  timeoutMs?: number;
  /**
   * A person decides before a model's call of this tool runs: `true` for every call, or a
   * rule of the (validated) arguments and the task's caller answering `false` (runs at
   * once), `true` or a reason (asks). The task then waits `input-required` with the call;
   * see docs/guides/approvals.md.
   */
  approval?: boolean | ((args: z.output<S>, caller: ApprovalCaller) => boolean | string);
  /** How long a call waits for its decision, over the agent's `approvals.timeoutMs`. */
  approvalTimeoutMs?: number;
}

/**
 * Defines a tool, typing `run`'s arguments from the `input` schema. The tool's name is its
 * key in the agent's `tools`.
 * @example
 * ```ts
 * const tools = {
 *   add: tool({
 *     description: "Adds two numbers",
 *     input: z.object({ a: z.number(), b: z.number() }),
 *     run: ({ a, b }) => a + b,
 *   }),
 * };
 * defineAgent({ card, model, tools });
 * ```
 * A tool whose calls wait for a person's approval over some amount:
 * ```ts
 * const refund = tool({
 *   description: "Refunds an order",
 *   input: z.object({ order: z.string(), amount: z.number() }),
 *   approval: ({ amount }) => amount > 100 && "Refunds over 100 need approval",
 *   run: ({ order, amount }) => `Refunded ${amount} on ${order}`,
 * });
 * ```
 */
export function tool<S extends z.ZodType>(definition: Tool<S>): Tool<S> {
  return definition;
}

export type Tools = Record<string, Tool>;
