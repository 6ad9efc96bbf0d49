import { type ActiveConfig, activeConfigAt, type ConfigTarget, providerItems } from "./config";
import {
  type ConversationJson,
  cloneItems,
  type Item,
  isUserMessage,
  type MessageItem,
} from "./items";
import { type LlmMessage, toLlmMessages } from "./llm-message";
import { estimateTokens } from "./tokens";

/**
 * What every conversation answers without changing: its messages, counts, lookups,
 * estimates and views for a model or a store. `Conversation` extends it with the edits;
 * a read-only view (`conversation.readonly()`) is a `Conversation` that refuses them.
 * @example
 * function lastAnswer(conversation: ConversationReader) {
 *   return conversation.messages().findLast((m) => m.role === "assistant") ?? null;
 * }
 */
export abstract class ConversationReader {
  /** The items in order (live: later changes show up in it). */
  abstract get items(): readonly Item[];

  /** The items by id, kept by the conversation so a lookup does not scan. */
  protected abstract itemIndex(): ReadonlyMap<string, Item>;

  /** How many items the conversation holds. */
  get length(): number {
    return this.items.length;
  }

  /**
   * Only the chat messages, without tool traffic or structural items.
   * @example
   * conversation.messages().filter((m) => m.role === "assistant");
   */
  messages(): MessageItem[] {
    return this.items.filter((item): item is MessageItem => item.type === "message");
  }

  /**
   * Number of user turns: user messages.
   * @example
   * if (conversation.turnCount() > 10) await conversation.summarize(summarizer);
   */
  turnCount(): number {
    let turns = 0;
    for (const item of this.items) if (isUserMessage(item)) turns++;
    return turns;
  }

  /**
   * The item with this id, or null.
   * @example
   * const call = conversation.getById(output.id);
   */
  getById(id: string): Item | null {
    return this.itemIndex().get(id) ?? null;
  }

  /**
   * Estimated tokens of the whole conversation (the same estimate as every budget).
   * @example
   * if (conversation.estimatedTokens() > 8000) conversation.truncate({ maxTokens: 8000 });
   */
  estimatedTokens(): number {
    return estimateTokens(this.items);
  }

  /**
   * Instructions and tools in force at a point: null = the end, a number = an
   * index, a string = an item id (unknown = the end).
   * @example
   * conversation.activeConfigAt(); // { instructions: "…", tools: ["search"] }
   */
  activeConfigAt(target: ConfigTarget = null): ActiveConfig {
    return activeConfigAt(this.items, target);
  }

  /**
   * The items a model should see: no handoffs or config updates, resolved instructions.
   * Provider converters start from this.
   * @example
   * const forModel = conversation.providerItems();
   */
  providerItems(): Item[] {
    return providerItems(this.items);
  }

  /**
   * `{ items }`, deep-copied and JSON-serializable; `fromJSON` reads it back.
   * @example
   * const stored = JSON.stringify(conversation); // calls toJSON
   */
  toJSON(): ConversationJson {
    return { items: cloneItems(this.items) };
  }

  /**
   * The LLM-message view; see `toLlmMessages`.
   * @example
   * const messages = conversation.toLlmMessages();
   */
  toLlmMessages(): LlmMessage[] {
    return toLlmMessages(this.items);
  }
}
