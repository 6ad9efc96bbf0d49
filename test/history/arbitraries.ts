import fc from "fast-check";
import type { Item } from "../../src/history/items";
import { at } from "./helpers";

type Kind =
  | "system"
  | "developer"
  | "user"
  | "assistant"
  | "summary"
  | "call"
  | "output"
  | "handoff"
  | "config";

const kind = fc.constantFrom<Kind>(
  "system",
  "developer",
  "user",
  "user",
  "assistant",
  "assistant",
  "summary",
  "call",
  "call",
  "output",
  "output",
  "handoff",
  "config",
);

function build(k: Kind, i: number, callId: number, textLength: number): Item {
  const id = `i${i}`;
  const createdAt = at(i);
  const text = "x".repeat(textLength);
  const message = (role: "system" | "developer" | "user" | "assistant", extra = {}): Item => ({
    type: "message",
    id,
    createdAt,
    role,
    content: [text],
    interrupted: false,
    extra,
  });
  switch (k) {
    case "system":
    case "developer":
    case "user":
    case "assistant":
      return message(k);
    case "summary":
      return message("assistant", { summary: true });
    case "call":
      return {
        type: "function_call",
        id,
        createdAt,
        name: `t${callId % 2}`,
        arguments: text,
        callId: `k${callId}`,
      };
    case "output":
      return {
        type: "function_call_output",
        id,
        createdAt,
        name: `t${callId % 2}`,
        callId: `k${callId}`,
        output: text,
        isError: false,
      };
    case "handoff":
      return { type: "agent_handoff", id, createdAt, toAgent: "b" };
    case "config":
      return { type: "agent_config_update", id, createdAt, tools: [`t${callId % 2}`] };
  }
}

/** Any mix of item kinds, including malformed tool traffic (orphans, shared call ids). */
export const anyItems = fc
  .array(fc.tuple(kind, fc.nat(5), fc.nat(40)), { maxLength: 30 })
  .map((specs) => specs.map(([k, callId, len], i) => build(k, i, callId, len)));

/**
 * Well-formed conversations: user turns of messages and call/output pairs (outputs right
 * after calls or a little later within the turn), structural items sprinkled in, and
 * sometimes a trailing call still awaiting its output.
 */
export const wellFormedItems = fc
  .array(
    fc.tuple(
      fc.array(fc.constantFrom("assistant", "pair", "pair2", "handoff", "config", "summary"), {
        maxLength: 4,
      }),
      fc.nat(30),
    ),
    { maxLength: 8 },
  )
  .chain((turns) =>
    fc.tuple(fc.constant(turns), fc.boolean(), fc.boolean()).map(([t, withSystem, pending]) => {
      const items: Item[] = [];
      let i = 0;
      let call = 0;
      if (withSystem) items.push(build("system", i++, 0, 20));
      for (const [steps, len] of t) {
        items.push(build("user", i++, 0, len));
        for (const step of steps) {
          if (step === "pair") {
            items.push(build("call", i++, call, len));
            items.push(build("output", i++, call++, len));
          } else if (step === "pair2") {
            const first = call++;
            const second = call++;
            items.push(build("call", i++, first, len));
            items.push(build("call", i++, second, len));
            items.push(build("output", i++, second, len));
            items.push(build("output", i++, first, len));
          } else items.push(build(step as Kind, i++, 0, len));
        }
      }
      if (pending) items.push(build("call", i++, call++, 10));
      return items.map((item) =>
        item.type === "function_call" || item.type === "function_call_output"
          ? { ...item, callId: `w${item.callId}` }
          : item,
      );
    }),
  );
