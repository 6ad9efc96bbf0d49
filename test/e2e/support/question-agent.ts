/**
 * A handler agent that asks two questions in turn, for the inspector's answer controls in
 * chromium (test/e2e/inspector-approvals.test.ts): one with choices, then one answered in
 * words.
 */
import { defineAgent } from "../../../src/index";

const worker = defineAgent({
  card: { name: "Question e2e agent", description: "Asks a size, then a note" },
  handler(ctx) {
    const size = ctx.ask({ id: "size", question: "Which size?", choices: ["S", "M", "L"] });
    if (!size) return;
    const note = ctx.ask({ id: "note", question: "Any note for the order?" });
    if (!note) return;
    const text = (a: typeof size) => (a.answered ? a.answer : `(${a.decision})`);
    return `Size ${text(size)}, note: ${text(note)}`;
  },
});

export const { EdgelinkContext, EdgelinkIndex } = worker;
export default worker;
