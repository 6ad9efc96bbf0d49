import { type ContentPart, isBuiltItem, type MessageItem } from "../../history/items";
import { type JsonValue, newId } from "../../protocol/json";
import { Message } from "../../protocol/message";
import { isKnownPart, Parts } from "../../protocol/part";

/**
 * A2A messages and conversation items are one history: each task message is stored as a
 * message item (what a model needs: role, text, images) that also carries the A2A message
 * itself in `extra.a2a`, so GetTask gives back exactly what was sent.
 */
export function itemFromMessage(message: Message, id: string = newId("msg_")): MessageItem {
  const content: ContentPart[] = [];
  for (const part of message.parts) {
    if (!isKnownPart(part)) continue;
    if (part.type === "text") content.push(part.content);
    else if (part.type === "file" && part.content.mediaType?.startsWith("image/")) {
      const { url, bytes, mediaType } = part.content;
      content.push(
        url !== undefined
          ? { type: "image", url, mediaType, detail: "auto" }
          : { type: "image", bytes, mediaType, detail: "auto" },
      );
    }
  }
  return {
    type: "message",
    id,
    createdAt: message.timestamp,
    role: message.role === "agent" ? "assistant" : message.role,
    content,
    interrupted: false,
    // The message itself, not a copy: the item is written as JSON and not kept, and a
    // message is plain JSON data (parsed from a request or built by the framework).
    extra: { a2a: message as unknown as JsonValue },
  };
}

/** The A2A message an item stands for: the one it carries, or one built from its text. */
export function messageFromItem(item: MessageItem, taskId?: string): Message {
  // An item the framework built carries the message it built (a model's answer).
  if (isBuiltItem(item) && item.extra.a2a !== undefined)
    return item.extra.a2a as unknown as Message;
  const carried = Message.safeParse(item.extra.a2a);
  if (carried.success) return carried.data;
  return {
    messageId: item.id,
    role: item.role === "developer" ? "system" : item.role,
    parts: item.content.flatMap((c) => (typeof c === "string" ? [Parts.text(c)] : [])),
    taskId,
    timestamp: item.createdAt,
  };
}
