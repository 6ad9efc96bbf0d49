/**
 * A task's messages and items in the context's conversation, as the task store appends
 * them: tagged with their task, kept in the store's memory copy, and taken into a finished
 * task's history bounds. Runs in the store's transaction, as its methods do.
 */
import { ANSWERS_HELD } from "../../agent/tools/orphan-calls";
import type { Item } from "../../history/items";
import type { Message } from "../../protocol/message";
import { isTerminal } from "../../protocol/task-state";
import { itemFromMessage, messageFromItem } from "./conversation-bridge";
import type { TaskStore } from "./task-store";

/** Appends conversation items under a task, in one transaction. */
export function recordTaskItems(store: TaskStore, taskId: string, items: readonly Item[]): void {
  const task = store.cache.use(taskId);
  store.atomic(() => {
    for (const item of items) {
      store.history.append(item, taskId);
      if (item.type === "message") {
        store.cache.keep(task, messageFromItem(item, taskId), store.history.lastWrittenChars);
      }
    }
    if (isTerminal(task.status.state)) store.widenHistory(taskId, store.history.nextSeq() - 1);
  });
}

/**
 * A task message joins the context's conversation history, tagged with its task;
 * `itemId` names its row (a client's message: see `sentItemId`); `inBounds`: the task's
 * history ceiling already counts it (its final status message); `answers`: it decides
 * held calls (see ApprovalRows).
 */
export function appendTaskMessage(
  store: TaskStore,
  taskId: string,
  message: Message,
  itemId?: string,
  inBounds = false,
  answers = false,
): void {
  const task = store.cache.use(taskId);
  const item = itemFromMessage(message, itemId);
  // Decisions on held calls reach the model as those calls' results, not as a message.
  if (answers) item.extra[ANSWERS_HELD] = true;
  store.atomic(() => {
    store.history.append(item, taskId);
    store.cache.keep(task, message, store.history.lastWrittenChars);
    if (!inBounds && isTerminal(task.status.state)) {
      store.widenHistory(taskId, store.history.nextSeq() - 1);
    }
  });
  if (message.role === "user") {
    store.cache.asked(task, message.messageId, item.id);
  }
}
