/**
 * A deterministic, realistic conversation for the history benchmark (bench/history.mjs):
 * a system message, then user turns. Each turn is a user message, in 30% of turns one or
 * two tool rounds (a function call and its output), then an assistant message. Texts are
 * words from a small vocabulary; lengths are drawn per kind (characters):
 *
 *   system 600, user 20-200, assistant 40-400, call arguments 20-120, call output 50-600
 *
 * which is about 320 bytes of JSON per item on average (printed by the run). The items
 * are complete (every field the zod schemas default is present), so they pass
 * `parseItems` unchanged and can be handed straight to the pure history functions. The
 * list never ends on a call waiting for its output, so truncation has nothing "in flight".
 */
import type { Item } from "../src/history/items";

const WORDS =
  "the a to of and in is it you that for on with as this was are be at or have from not by we can but they your what all were when there an which their if will about how up out them then she many some so these would other into has more her two like him see time could no make than first been its who now people my made over did down only way find use may water long little very after words called just where most know get through back much go good new write our me man too any day same right look think also around another came come work three word must because does part".split(
    " ",
  );

/** Mulberry32: a small seeded PRNG, so every run and every runtime builds the same list. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const START = Date.parse("2026-11-01T00:00:00.000Z");

/**
 * `n` items: the system message (unless `system: false`), then turns as described above,
 * cut to exactly `n`. Ids are `<prefix><offset + index>`, so two lists of the same n share
 * ids, and batches made with growing offsets (and `system: false`) never collide.
 */
export function makeItems(
  n: number,
  {
    seed = 42,
    offset = 0,
    system = true,
  }: { seed?: number; offset?: number; system?: boolean } = {},
): Item[] {
  const random = prng(seed);
  const between = (lo: number, hi: number) => lo + Math.floor(random() * (hi - lo + 1));
  const text = (lo: number, hi: number) => {
    const target = between(lo, hi);
    let out = "";
    while (out.length < target) out += (out ? " " : "") + WORDS[between(0, WORDS.length - 1)];
    return out.slice(0, target);
  };
  const items: Item[] = [];
  const at = (i: number) => new Date(START + i * 1000).toISOString();
  const message = (role: "system" | "user" | "assistant", content: string): Item => {
    const i = offset + items.length;
    return {
      type: "message",
      id: `msg_${i}`,
      createdAt: at(i),
      role,
      content: [content],
      interrupted: false,
      extra: {},
    };
  };
  if (system) items.push(message("system", `You are a helpful support agent. ${text(600, 600)}`));
  while (items.length < n) {
    items.push(message("user", text(20, 200)));
    const rounds = random() < 0.3 ? between(1, 2) : 0;
    // A call needs room for its output and the closing assistant message.
    for (let r = 0; r < rounds && items.length + 3 <= n; r++) {
      const i = offset + items.length;
      const name = ["search_orders", "lookup_customer", "get_weather", "create_ticket"][
        between(0, 3)
      ] as string;
      items.push({
        type: "function_call",
        id: `fc_${i}`,
        createdAt: at(i),
        name,
        arguments: JSON.stringify({ query: text(10, 100) }),
        callId: `call_${i}`,
      });
      items.push({
        type: "function_call_output",
        id: `fco_${i + 1}`,
        createdAt: at(i + 1),
        name,
        callId: `call_${i}`,
        output: JSON.stringify({ ok: true, result: text(40, 590) }),
        isError: false,
      });
    }
    if (items.length < n) items.push(message("assistant", text(40, 400)));
  }
  return items;
}
