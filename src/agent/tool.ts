import type { Context } from "@opentelemetry/api";
import type { z } from "zod";
import type { JsonObject, JsonValue } from "../protocol/json";

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
 */
export function tool<S extends z.ZodType>(definition: Tool<S>): Tool<S> {
  return definition;
}

export type Tools = Record<string, Tool>;
