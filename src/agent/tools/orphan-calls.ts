/** Tool calls a turn left without a result, answered before the history goes to a model. */
import type { FunctionCallItem, Item } from "../../history/items";
import { REQUEST_KIND } from "../../protocol/approval";

/**
 * Marks the history item of a message that decided calls held for a person: the model
 * sees those decisions as the calls' results, so the message itself is not sent (it would
 * stand between the calls and their results).
 */
export const ANSWERS_HELD = "answersHeld";

/**
 * The request for decisions a task sent and the message that answered it: framework
 * messages between a model's calls and their results, which the model gets as results.
 */
function heldExchange(item: Item & { type: "message" }): boolean {
  if (item.extra?.[ANSWERS_HELD] === true) return true;
  if (item.role !== "assistant") return false;
  const parts = (item.extra?.a2a as { parts?: unknown } | undefined)?.parts;
  return (
    Array.isArray(parts) &&
    parts.some(
      (p: { type?: unknown; content?: { kind?: unknown } }) =>
        p?.type === "data" && p.content?.kind === REQUEST_KIND,
    )
  );
}

/** What a model is told about a call whose turn ended before it had a result. */
export const INTERRUPTED_CALL_OUTPUT = "No result: the call was interrupted before it finished";

/**
 * Providers refuse a conversation in which a tool call has no result, so one canceled
 * mid-tool would break every later turn. Such calls get an error result, right after
 * their turn, in what is sent (the stored history is left as it happened).
 */
export function answerOrphanCalls(items: readonly Item[]): Item[] {
  const answered = new Set<string>();
  for (const item of items) if (item.type === "function_call_output") answered.add(item.callId);
  const out: Item[] = [];
  let pending: FunctionCallItem[] = [];
  const flush = () => {
    for (const call of pending) {
      out.push({
        type: "function_call_output",
        id: `${call.id}:interrupted`,
        createdAt: call.createdAt,
        name: call.name,
        callId: call.callId,
        output: INTERRUPTED_CALL_OUTPUT,
        isError: true,
      });
    }
    pending = [];
  };
  for (const item of items) {
    if (item.type === "message" && heldExchange(item)) continue;
    if (item.type === "function_call") {
      out.push(item);
      if (!answered.has(item.callId)) pending.push(item);
      continue;
    }
    // The turn's calls end at the first item that is neither a call nor a result.
    if (item.type !== "function_call_output") flush();
    out.push(item);
  }
  flush();
  return out;
}
