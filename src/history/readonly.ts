import type { Conversation } from "./conversation";

/**
 * Every method that changes a conversation. A read-only view refuses each of them;
 * a test checks that every method of `Conversation` is either listed here or only reads.
 * @example
 * MUTATORS.includes("truncate"); // true
 */
export const MUTATORS = [
  "addMessage",
  "addSystem",
  "setSystem",
  "resetToSystem",
  "addFunctionCall",
  "addFunctionOutput",
  "addHandoff",
  "addConfigUpdate",
  "insert",
  "insertMany",
  "replace",
  "clear",
  "truncate",
  "keepRecent",
  "summarize",
  "compact",
  "merge",
  "mergeResult",
  "mergeWithSummary",
  "fitContextWindow",
] as const satisfies readonly (keyof Conversation)[];
export type Mutator = (typeof MUTATORS)[number];

/**
 * A live, read-only view of a conversation: it sees every later change of the
 * conversation it came from, but has no mutators. `copy` and `fork*` give editable
 * conversations. Mutators reached anyway (from JavaScript, or through a cast) throw a
 * `ReadonlyConversationError`; the async ones reject with it.
 * @example
 * const view = conversation.readonly();
 * subAgent.run(view); // can read, fork and copy, but not change the parent's history
 */
export type ReadonlyConversation = Omit<Conversation, Mutator>;

/**
 * Thrown by a mutator called on a read-only view.
 * @example
 * try { view.truncate({}) } catch (e) { if (e instanceof ReadonlyConversationError) … }
 */
export class ReadonlyConversationError extends Error {
  override readonly name = "ReadonlyConversationError";
  constructor(readonly method: string) {
    super(
      `${method}() cannot change a read-only conversation view; ` +
        "fork() or copy() it to get an editable conversation",
    );
  }
}
