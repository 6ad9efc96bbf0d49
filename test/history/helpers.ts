import { Conversation } from "../../src/history/conversation";
import { type Item, type ItemInput, Item as ItemSchema } from "../../src/history/items";
import type { Summarizer } from "../../src/history/summarize";

/** ISO time `n` seconds after a fixed origin, so ordering in tests is explicit. */
export function at(n: number): string {
  return new Date(Date.UTC(2025, 0, 1) + n * 1000).toISOString();
}

/** Terse item builders with explicit ids; ids double as labels in assertions. */
export const mk = {
  system: (id: string, text = `sys ${id}`, t = 0): Item =>
    ItemSchema.parse({ type: "message", id, role: "system", content: text, createdAt: at(t) }),
  developer: (id: string, text = `dev ${id}`, t = 0): Item =>
    ItemSchema.parse({ type: "message", id, role: "developer", content: text, createdAt: at(t) }),
  user: (id: string, text = `user ${id}`, t = 0): Item =>
    ItemSchema.parse({ type: "message", id, role: "user", content: text, createdAt: at(t) }),
  assistant: (id: string, text = `assistant ${id}`, t = 0): Item =>
    ItemSchema.parse({ type: "message", id, role: "assistant", content: text, createdAt: at(t) }),
  summary: (id: string, text = `summary ${id}`, t = 0): Item =>
    ItemSchema.parse({
      type: "message",
      id,
      role: "assistant",
      content: text,
      extra: { summary: true },
      createdAt: at(t),
    }),
  call: (id: string, callId: string, name = "tool", t = 0): Item =>
    ItemSchema.parse({
      type: "function_call",
      id,
      callId,
      name,
      arguments: "{}",
      createdAt: at(t),
    }),
  output: (id: string, callId: string, name = "tool", t = 0): Item =>
    ItemSchema.parse({
      type: "function_call_output",
      id,
      callId,
      name,
      output: "ok",
      createdAt: at(t),
    }),
  handoff: (id: string, t = 0): Item =>
    ItemSchema.parse({ type: "agent_handoff", id, toAgent: "other", createdAt: at(t) }),
  config: (id: string, fields: { instructions?: string; tools?: string[] } = {}, t = 0): Item =>
    ItemSchema.parse({ type: "agent_config_update", id, ...fields, createdAt: at(t) }),
};

/** A conversation from item inputs. */
export function conv(items: readonly ItemInput[]): Conversation {
  return new Conversation({ items });
}

/** The ids of a conversation's items, in order. */
export function ids(source: { readonly items: readonly Item[] } | readonly Item[]): string[] {
  const items = "items" in source ? source.items : source;
  return items.map((item) => item.id);
}

/** A summarizer that answers from a script and records every call. */
export function scripted(...answers: (string | Error)[]): Summarizer & {
  calls: { transcript: string; maxTokens: number; signal?: AbortSignal }[];
} {
  const calls: { transcript: string; maxTokens: number; signal?: AbortSignal }[] = [];
  const summarizer = async (
    transcript: string,
    options: { maxTokens: number; signal?: AbortSignal },
  ): Promise<string> => {
    calls.push({ transcript, ...options });
    const answer = answers.length > 1 ? answers.shift() : answers[0];
    if (answer instanceof Error) throw answer;
    return answer ?? "";
  };
  return Object.assign(summarizer, { calls });
}

/**
 * A chat of `turns` user turns after a system message: each turn is user, a tool call and
 * its output, then an assistant answer. Ids: s, u1, c1, o1, a1, u2, ...
 */
export function chat(turns: number): Item[] {
  const items: Item[] = [mk.system("s", "be helpful", 0)];
  let t = 1;
  for (let k = 1; k <= turns; k++) {
    items.push(mk.user(`u${k}`, `question number ${k}`, t++));
    items.push(mk.call(`c${k}`, `call-${k}`, "search", t++));
    items.push(mk.output(`o${k}`, `call-${k}`, "search", t++));
    items.push(mk.assistant(`a${k}`, `answer number ${k}`, t++));
  }
  return items;
}
