import * as z from "zod";
import { newId, nowIso } from "../protocol/json";
import type { Message } from "../protocol/message";
import { Part, Parts } from "../protocol/part";

/** What a `reply` hook sees: the incoming message, before any task exists. */
export interface ReplyContext<Env = unknown> {
  /** The client's message (it names no task: a message to an existing task goes to it). */
  readonly message: Message;
  readonly contextId: string;
  /** The worker's bindings and secrets. */
  readonly env: Env;
}

/**
 * Answers a new message directly with a message (A2A §3.1.1), or declines with `undefined`
 * so a task is created and the handler runs. Runs before the task would be created: a task
 * that already exists has its row, its event log entries and its index entry written, and
 * a stream has already sent it, so withdrawing it could only leave something half-undone.
 * A direct reply therefore writes nothing at all (no task, no history, no push).
 * @example
 * defineAgent({
 *   card,
 *   reply: ({ message }) => (textOf(message.parts) === "ping" ? "pong" : undefined),
 *   handler: async (ctx) => "a tracked answer",
 * });
 */
export type ReplyHook<Env = unknown> = (
  ctx: ReplyContext<Env>,
) => ReplyResult | Promise<ReplyResult>;

// `void` so that a hook with no return statement on some path type-checks.
// biome-ignore lint/suspicious/noConfusingVoidType: see above
export type ReplyResult = string | Part[] | undefined | void;

/**
 * The agent message a direct reply sends; it carries the context but no task. Parts are
 * checked like any stored part (a plain-JS hook may return anything); throws when invalid.
 */
export function replyMessage(result: string | Part[], contextId: string): Message {
  return {
    messageId: newId(),
    role: "agent",
    parts: typeof result === "string" ? [Parts.text(result)] : z.array(Part).parse(result),
    contextId,
    timestamp: nowIso(),
  };
}
