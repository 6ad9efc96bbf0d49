import type { Item } from "../../src/history/items";

const T0 = Date.parse("2026-11-01T00:00:00.000Z");
const at = (i: number) => new Date(T0 + i * 1000).toISOString();
const message = (i: number, role: "system" | "user" | "assistant", text: string): Item => ({
  type: "message",
  id: `msg_${i}`,
  createdAt: at(i),
  role,
  content: [text],
  interrupted: false,
  extra: {},
});

/**
 * Item `i` of a conversation of turns: a system message first, then per turn a user
 * message, in every third turn a call and its output, and the assistant's answer.
 */
export function itemAt(i: number): Item {
  if (i === 0) return message(0, "system", "You answer questions about the weather.");
  const turn = Math.floor((i - 1) / 5);
  switch ((i - 1) % 5) {
    case 0:
      return message(i, "user", `question ${turn}: what is the weather like in town ${turn}?`);
    case 1:
      return turn % 3 === 0
        ? {
            type: "function_call",
            id: `fc_${i}`,
            createdAt: at(i),
            name: "weather",
            arguments: `{"town":${turn}}`,
            callId: `call_${turn}`,
          }
        : message(i, "assistant", `thinking about town ${turn}`);
    case 2:
      return turn % 3 === 0
        ? {
            type: "function_call_output",
            id: `fco_${i}`,
            createdAt: at(i),
            name: "weather",
            callId: `call_${turn}`,
            output: `sunny, ${turn % 30} degrees, light wind from the west`,
            isError: false,
          }
        : message(i, "assistant", `still thinking about town ${turn}`);
    case 3:
      return message(i, "assistant", `In town ${turn} it is sunny and ${turn % 30} degrees.`);
    default:
      return message(i, "user", `thanks for town ${turn}`);
  }
}
