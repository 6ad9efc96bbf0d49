import { ID_PREFIX, type Item } from "../history/items";
import { A2AError } from "../protocol/errors";
import type { Message } from "../protocol/message";
import type { HistoryStore } from "./history/history-store";
import { messageFromItem } from "./tasks/conversation-bridge";

/**
 * The history item id a client's message is stored under: derived from its `messageId`,
 * so a retry finds the message by the primary key the history already has (no new index,
 * no new table, nothing more to write per message). It keeps the prefix of message items;
 * `a2a_` after it keeps these ids apart from the random ones (`msg_` and a UUID). Joined,
 * not concatenated: the stored item holds it, and JSON.stringify's fast path takes no
 * concatenated string.
 */
export const sentItemId = (messageId: string): string =>
  [ID_PREFIX.message, "a2a_", messageId].join("");

/**
 * What a message's `messageId` says: a retry of a message this conversation already took
 * (`retryOf`: the task it went to), or a new message, to store under `itemId`.
 */
export type Sent = { retryOf: string } | { itemId: string };

/** The fields that make a message what it is; ids, routing and timestamp aside. */
const content = (m: Message) => [
  m.role,
  m.parts,
  m.metadata ?? null,
  m.extensions ?? [],
  m.referenceTaskIds ?? [],
];

/** JSON with object keys sorted, so two parses of one message compare equal. */
const sorted = (value: unknown): string =>
  JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );

const reused = (messageId: string, why: string) =>
  new A2AError(
    "InvalidParams",
    `params.message.messageId ${messageId} was already used in this conversation for ${why}; a retry must resend the same message, a new message needs a new messageId`,
    { messageId },
    [{ field: "params.message.messageId", description: `already used for ${why}` }],
  );

/**
 * Looks `input` up by its messageId in this conversation's history (one primary-key
 * read). A retry must name the same task, if it names one, and carry the same content:
 * a different message under a used id is refused (InvalidParams), since answering it
 * with the first message's task would silently drop what it says. So is any message
 * under the id of one whose task retention has removed.
 *
 * @example
 * const sent = findSent(store.history, message, (id) => store.state(id) !== null);
 * if ("retryOf" in sent) return read(sent.retryOf);
 */
export function findSent(
  history: HistoryStore<Item>,
  input: Message,
  taskExists: (taskId: string) => boolean,
): Sent {
  const itemId = sentItemId(input.messageId);
  const row = history.byId(itemId);
  if (!row) return { itemId };
  const taskId = row.taskId;
  // The id stays taken while the history holds its message: after retention removed the
  // task there is nothing to answer a retry with, and a second task is what this prevents.
  if (taskId === null || row.item.type !== "message") {
    throw reused(input.messageId, "a message that is no task's");
  }
  if (!taskExists(taskId)) {
    throw reused(input.messageId, `task ${taskId}, which retention has since removed`);
  }
  if (input.taskId !== undefined && input.taskId !== taskId) {
    throw reused(input.messageId, `a message to another task (${taskId})`);
  }
  const first = messageFromItem(row.item, taskId);
  if (sorted(content(first)) !== sorted(content(input))) {
    throw reused(input.messageId, "a message with different content");
  }
  return { retryOf: taskId };
}
