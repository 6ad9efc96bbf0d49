import { compact } from "../protocol/json";
import {
  type CompactionRequestInput,
  type CompactionResult,
  type CutBoundary,
  compactHost,
  keepRecentItems,
} from "./compaction";
import { insertByTime, itemsOf, withLeadingSystem } from "./conversation-edits";
import {
  type ConfigUpdateInput,
  type ConversationInit,
  type FunctionCallInput,
  type FunctionOutputInput,
  functionCallItem,
  functionOutputItem,
  type HandoffInput,
  type MessageOptions,
  messageItem,
} from "./conversation-inputs";
import { ConversationReader } from "./conversation-reader";
import { type ContextWindowPolicy, type ContextWindowResult, fitContextWindow } from "./fit-window";
import {
  type CopyFilters,
  copyItems,
  forkBriefItems,
  forkFilteredItems,
  lastAssistantCopy,
  mergeItems,
} from "./fork-merge";
import { ItemList } from "./item-list";
import {
  assertUniqueIds,
  ConfigUpdateItem,
  type ContentPartInput,
  type ConversationJson,
  cloneItems,
  type FunctionCallItem,
  type FunctionOutputItem,
  HandoffItem,
  Item,
  type ItemInput,
  type ItemRole,
  type MessageItem,
  parseItems,
} from "./items";
import { fromLlmMessages, type LlmMessageInput } from "./llm-message";
import { type ReadonlyConversation, ReadonlyConversationError } from "./readonly";
import {
  mergeSummaryHost,
  type SummarizeOptions,
  type SummarizeResult,
  type Summarizer,
  summarizeHost,
} from "./summarize";
import { type TruncateLimits, truncateItems } from "./truncate";

/**
 * An ordered conversation history: messages, tool calls and outputs, handoffs and config
 * updates (E, F). Operations keep the ids of surviving items and give new items fresh ids,
 * so a store can persist a conversation as one row per item and write only the
 * difference. Items are plain JSON objects; treat the ones you get back as read-only.
 * @example
 * const conversation = new Conversation({ systemPrompt: "You are terse." });
 * conversation.addMessage("user", "What's 2 + 2?");
 * const call = conversation.addFunctionCall({ name: "add", arguments: { a: 2, b: 2 } });
 * conversation.addFunctionOutput({ name: "add", callId: call.callId, output: "4" });
 * conversation.addMessage("assistant", "4");
 * conversation.truncate({ maxTokens: 4000 });
 * await store.save(conversation.toJSON());
 */
export class Conversation extends ConversationReader {
  #list: ItemList;
  #readonly = false;

  constructor(init: ConversationInit = {}) {
    super();
    const items = (init.items ?? []).map((item) => Item.parse(item));
    assertUniqueIds(items);
    this.#list = new ItemList(items);
    if (init.systemPrompt) this.setSystem(init.systemPrompt);
  }

  /**
   * Wraps items a store wrote itself and reads back, without validating them again: on
   * a long history the check costs more time and memory than the load. Do not use it
   * for input from outside.
   * @example
   * const conversation = Conversation.fromStored(rows.map((r) => r.item));
   */
  static fromStored(items: Item[]): Conversation {
    return Conversation.#wrap(items);
  }

  /** Wraps items that are already valid and owned by nobody else. */
  static #wrap(items: Item[]): Conversation {
    const conversation = new Conversation();
    conversation.#list = new ItemList(items);
    return conversation;
  }

  /**
   * Loads `{ items: [...] }` as written by `toJSON`. Items of unknown types are
   * skipped; a malformed item or a duplicate id throws.
   * @example
   * const conversation = Conversation.fromJSON(JSON.parse(stored));
   */
  static fromJSON(json: unknown): Conversation {
    return Conversation.#wrap(parseItems(itemsOf(json)));
  }

  /**
   * Builds a conversation from LLM messages; see `fromLlmMessages`.
   * @example
   * Conversation.fromLlmMessages([{ role: "user", content: "Hi" }]);
   */
  static fromLlmMessages(messages: readonly LlmMessageInput[]): Conversation {
    const items = fromLlmMessages(messages);
    assertUniqueIds(items);
    return Conversation.#wrap(items);
  }

  // ---------------------------------------------------------------- reading

  /**
   * The items in order. Live: appends show up in it, so copy it (`[...conversation.items]`)
   * to keep a snapshot, e.g. as the `before` of `diffItems`.
   */
  get items(): readonly Item[] {
    return this.#list.items;
  }

  /** True for a view from `readonly()`. */
  get isReadonly(): boolean {
    return this.#readonly;
  }

  /** The items by id, kept with the list (the readers' `getById`). */
  protected override itemIndex(): ReadonlyMap<string, Item> {
    return this.#list.index();
  }

  /**
   * An editable deep copy keeping the items that pass the filters.
   * @example
   * conversation.copy({ excludeInstructions: true, tools: [] }); // chat only
   */
  copy(filters: CopyFilters = {}): Conversation {
    return Conversation.#wrap(copyItems(this.#list.items, filters));
  }

  /**
   * An editable deep copy; changes to either never reach the other.
   * @example
   * const sub = conversation.fork();
   */
  fork(): Conversation {
    return Conversation.#wrap(cloneItems(this.#list.items));
  }

  /**
   * A copy with the instructions and the `recentTurns` newest user turns (default 3),
   * optionally keeping only some tools' calls and outputs.
   * @example
   * const sub = conversation.forkFiltered({ recentTurns: 1, tools: ["search"] });
   */
  forkFiltered(
    options: { recentTurns?: number; tools?: readonly string[] | null } = {},
  ): Conversation {
    return Conversation.#wrap(forkFilteredItems(this.#list.items, options));
  }

  /**
   * A fresh conversation for a sub-agent: a system message with its instructions and an
   * optional user brief, stamped with `agentId`. Nothing of this history is copied.
   * @example
   * const sub = conversation.forkBrief({
   *   instructions: "Research X",
   *   brief: "Focus on 2024",
   *   agentId: "researcher",
   * });
   */
  forkBrief(options: { instructions: string; brief?: string; agentId?: string }): Conversation {
    return Conversation.#wrap(forkBriefItems(options));
  }

  /**
   * A live read-only view of this conversation.
   * @example
   * await subAgent.run(conversation.readonly());
   */
  readonly(): ReadonlyConversation {
    const view = new Conversation();
    view.#list = this.#list;
    view.#readonly = true;
    return view;
  }

  // ---------------------------------------------------------------- adding

  /**
   * Appends a message; a string content becomes `[string]`. With `replace: true` and
   * role "system", every earlier system message (not developer ones) is removed first.
   * @example
   * conversation.addMessage("user", ["What is in this picture?", { type: "image", url }]);
   */
  addMessage(
    role: ItemRole,
    content: string | readonly ContentPartInput[],
    options: MessageOptions = {},
  ): MessageItem {
    this.#writable("addMessage");
    const { replace, ...fields } = options;
    const message = messageItem(role, content, fields);
    if (replace && role === "system") {
      this.#list.checkFree(message.id);
      const kept = this.#list.items.filter(
        (item) => !(item.type === "message" && item.role === "system"),
      );
      kept.push(message);
      this.#list.replaceItems(kept);
      return message;
    }
    return this.#list.append(message);
  }

  /**
   * Appends a system message; an empty prompt adds nothing.
   * @example
   * conversation.addSystem("The user is on the free plan.");
   */
  addSystem(text: string): MessageItem | null {
    this.#writable("addSystem");
    return text ? this.addMessage("system", text) : null;
  }

  /**
   * Replaces the content of a leading system message (same id), or puts a new one first;
   * an empty prompt removes the leading system message. Later turns are untouched.
   * @example
   * conversation.setSystem("You are a pirate.");
   */
  setSystem(text: string): MessageItem | null {
    this.#writable("setSystem");
    const edit = withLeadingSystem(this.#list.items, text);
    if (!edit) return null;
    this.#list.replaceItems(edit.items);
    return edit.message;
  }

  /**
   * Clears everything and starts over with this system prompt; empty adds nothing.
   * @example
   * conversation.resetToSystem("New session.");
   */
  resetToSystem(text: string): MessageItem | null {
    this.#writable("resetToSystem");
    this.#list.replaceItems([]);
    return this.addSystem(text);
  }

  /**
   * Appends a function call; `callId` is generated when absent.
   * @example
   * const call = conversation.addFunctionCall({ name: "search", arguments: { q: "zod" } });
   */
  addFunctionCall(input: FunctionCallInput): FunctionCallItem {
    this.#writable("addFunctionCall");
    return this.#list.append(functionCallItem(input));
  }

  /**
   * Appends the output of a call.
   * @example
   * conversation.addFunctionOutput({ name: "search", callId: call.callId, output: { hits: 3 } });
   */
  addFunctionOutput(input: FunctionOutputInput): FunctionOutputItem {
    this.#writable("addFunctionOutput");
    return this.#list.append(functionOutputItem(input));
  }

  /**
   * Records that control passed to another agent.
   * @example
   * conversation.addHandoff({ fromAgent: "triage", toAgent: "billing", reason: "refund" });
   */
  addHandoff(input: HandoffInput): HandoffItem {
    this.#writable("addHandoff");
    return this.#list.append(HandoffItem.parse(compact({ ...input, type: "agent_handoff" })));
  }

  /**
   * Records a change of instructions and/or tools from here on.
   * @example
   * conversation.addConfigUpdate({ instructions: "Be brief.", tools: ["search"] });
   */
  addConfigUpdate(input: ConfigUpdateInput = {}): ConfigUpdateItem {
    this.#writable("addConfigUpdate");
    return this.#list.append(
      ConfigUpdateItem.parse(compact({ ...input, type: "agent_config_update" })),
    );
  }

  /**
   * Inserts an item before the first item with a strictly later createdAt; equal times
   * go after.
   * @example
   * conversation.insert({ type: "message", role: "user", content: "late", createdAt });
   */
  insert(item: ItemInput): Item {
    this.#writable("insert");
    return this.insertMany([item])[0] as Item;
  }

  /**
   * Inserts items by createdAt, sorting them first. Same result as inserting them
   * one by one in time order, in O(n + m log m).
   * @example
   * conversation.insertMany(itemsFromAnotherDevice);
   */
  insertMany(inputs: readonly ItemInput[]): Item[] {
    this.#writable("insertMany");
    const incoming = inputs.map((input) => Item.parse(input));
    for (const item of incoming) this.#list.checkFree(item.id);
    assertUniqueIds(incoming);
    this.#list.replaceItems(insertByTime(this.#list.items, incoming));
    return incoming;
  }

  /**
   * Replaces every item with validated ones, keeping this object. Atomic: invalid
   * input throws and changes nothing. Accepts `{ items }` or a plain array.
   * @example
   * conversation.replace(JSON.parse(stored));
   */
  replace(json: ConversationJson | { items: readonly unknown[] } | readonly unknown[]): void {
    this.#writable("replace");
    this.#list.replaceItems(parseItems(itemsOf(json)));
  }

  /**
   * Removes every item.
   * @example
   * conversation.clear();
   */
  clear(): void {
    this.#writable("clear");
    this.#list.replaceItems([]);
  }

  // ---------------------------------------------------------------- shrinking

  /**
   * Removes the oldest unprotected items until at most `maxItems` items and `maxTokens`
   * estimated tokens remain. Protected: the first system/developer message, the
   * first summary, the last user message, handoffs, config updates and calls awaiting
   * their output. Calls and outputs leave together; orphans are dropped. No limits, no
   * change. Returns the removed items.
   * @example
   * conversation.truncate({ maxItems: 100, maxTokens: 8000 });
   */
  truncate(limits: TruncateLimits = {}): Item[] {
    this.#writable("truncate");
    const { kept, removed } = truncateItems(this.#list.items, limits);
    if (removed.length > 0) this.#list.replaceItems(kept);
    return removed;
  }

  /**
   * Keeps the first item plus the newest `maxMessages - 1` (throws below 2), cutting
   * only between user turns unless `boundary: "item"`. Returns the removed items.
   * @example
   * conversation.keepRecent(20);
   */
  keepRecent(maxMessages: number, options: { boundary?: CutBoundary } = {}): Item[] {
    this.#writable("keepRecent");
    const { kept, removed } = keepRecentItems(this.#list.items, maxMessages, options);
    if (removed.length > 0) this.#list.replaceItems(kept);
    return removed;
  }

  /**
   * Folds everything before the `keepRecentTurns` newest user turns into one summary
   * message. No change when there are no more turns than that, nothing to
   * summarize, or the summary is empty; a summarizer error is rethrown, nothing changed.
   * @example
   * await conversation.summarize(summarizer, { keepRecentTurns: 2 });
   */
  async summarize(
    summarizer: Summarizer,
    options: SummarizeOptions = {},
  ): Promise<SummarizeResult> {
    this.#writable("summarize");
    return summarizeHost(this.#list, summarizer, options);
  }

  /**
   * Runs a compaction request: "recent" (default), "tokens" or "summary"
   * (needs a summarizer). Bad request values throw before anything changes.
   * @example
   * const result = await conversation.compact({ strategy: "tokens", maxTokens: 2000 });
   */
  async compact(
    request: CompactionRequestInput = {},
    options: { summarizer?: Summarizer; signal?: AbortSignal } = {},
  ): Promise<CompactionResult> {
    this.#writable("compact");
    return compactHost(this.#list, request, options);
  }

  /**
   * Summarize-then-truncate to fit a context window.
   * @example
   * await conversation.fitContextWindow({ maxTokens: 8000, summarizer });
   */
  async fitContextWindow(policy: ContextWindowPolicy): Promise<ContextWindowResult> {
    this.#writable("fitContextWindow");
    return fitContextWindow(this, policy);
  }

  // ---------------------------------------------------------------- merging

  /**
   * Adds copies of the other conversation's items whose ids are not here yet, then
   * stably sorts everything by createdAt. Merging again changes nothing. Returns
   * the added items.
   * @example
   * const sub = conversation.fork(); await runSubAgent(sub); conversation.merge(sub);
   */
  merge(other: { readonly items: readonly Item[] }): Item[] {
    this.#writable("merge");
    const before = this.#list.items;
    const merged = mergeItems(before, other.items);
    if (merged.length === before.length && merged.every((item, i) => item === before[i])) return [];
    const known = this.#list.index();
    this.#list.replaceItems(merged);
    return merged.filter((item) => !known.has(item.id));
  }

  /**
   * Appends a copy of the other conversation's last assistant message, attributed to
   * `agentId` when given; null when it has none. The copy keeps its id unless that
   * id is already used here.
   * @example
   * conversation.mergeResult(sub, { agentId: "researcher" });
   */
  mergeResult(
    other: { readonly items: readonly Item[] },
    options: { agentId?: string } = {},
  ): MessageItem | null {
    this.#writable("mergeResult");
    const index = this.#list.index();
    const copy = lastAssistantCopy(other.items, (id) => index.has(id), options.agentId);
    return copy ? this.#list.append(copy) : null;
  }

  /**
   * Appends a flagged summary of the other conversation, written by one summarizer call;
   * null and no change when there is nothing to summarize or the summary is empty.
   * @example
   * await conversation.mergeWithSummary(sub, { summarizer, agentId: "researcher" });
   */
  async mergeWithSummary(
    other: { readonly items: readonly Item[] },
    options: { summarizer: Summarizer; agentId?: string; maxTokens?: number; signal?: AbortSignal },
  ): Promise<MessageItem | null> {
    this.#writable("mergeWithSummary");
    const { summarizer, ...rest } = options;
    return mergeSummaryHost(this.#list, other.items, summarizer, rest);
  }

  // ---------------------------------------------------------------- internals

  #writable(method: string): void {
    if (this.#readonly) throw new ReadonlyConversationError(method);
  }
}
