import type { JsonObject } from "../../protocol/json";
import { newId } from "../../protocol/json";
import type { StreamEvent, ToolCall } from "./types";

/**
 * Assembles tool calls whose arguments arrive in fragments (OpenAI, Anthropic, Gemini
 * partial args), keyed by the provider's index. Emits `tool_call_start` once, a
 * `tool_call_delta` per fragment, and `tool_call_end` with the whole arguments.
 */
export class ToolCallAssembler {
  readonly #open = new Map<
    number,
    { id: string; name: string; args: string[]; metadata?: JsonObject }
  >();
  #order: number[] = [];
  #started = 0;

  /** Starts a call; a start for an index already open is ignored (some servers repeat it). */
  start(index: number, id: string | null | undefined, name: string, out: StreamEvent[]): void {
    if (this.#open.has(index)) return;
    const callId = id || newId("call_");
    this.#open.set(index, { id: callId, name, args: [] });
    this.#order.push(index);
    this.#started++;
    out.push({ type: "tool_call_start", index, id: callId, name });
  }

  has(index: number): boolean {
    return this.#open.has(index);
  }

  /** Provider data to replay with the call (a thought signature). */
  setMetadata(index: number, metadata: JsonObject): void {
    const call = this.#open.get(index);
    if (call) call.metadata = { ...call.metadata, ...metadata };
  }

  delta(index: number, fragment: string, out: StreamEvent[]): void {
    const call = this.#open.get(index);
    if (!call || fragment === "") return;
    call.args.push(fragment);
    out.push({ type: "tool_call_delta", index, id: call.id, argumentsDelta: fragment });
  }

  /** Ends one call (`index`) or, without one, every open call in start order. */
  end(out: StreamEvent[], index?: number): void {
    const indexes = index === undefined ? this.#order : [index];
    for (const i of indexes) {
      const call = this.#open.get(i);
      if (!call) continue;
      this.#open.delete(i);
      const args = call.args.join("");
      const toolCall: ToolCall = {
        id: call.id,
        name: call.name,
        arguments: args,
        input: parseArguments(args),
      };
      if (call.metadata) toolCall.metadata = call.metadata;
      out.push({ type: "tool_call_end", index: i, call: toolCall });
    }
    this.#order = this.#order.filter((i) => this.#open.has(i));
  }

  /** How many calls were started, open or ended: a turn that made any is a tool turn. */
  get startedCount(): number {
    return this.#started;
  }

  get openCount(): number {
    return this.#open.size;
  }
}

/**
 * Parses tool arguments. Empty arguments are `{}` (a no-argument call); anything that
 * is not a JSON object, e.g. arguments cut off by the token limit, is `null`.
 */
export function parseArguments(args: string): JsonObject | null {
  if (args.trim() === "") return {};
  try {
    const value: unknown = JSON.parse(args);
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? (value as JsonObject)
      : null;
  } catch {
    return null;
  }
}
