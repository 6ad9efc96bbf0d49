/**
 * A model-backed agent whose tool waits for a person, for the inspector's approval
 * controls in chromium (test/e2e/inspector-approvals.test.ts): its OpenAI calls go to the
 * fake provider (OPENAI_BASE_URL), which replays a recorded turn calling `get_capital`.
 * The tool's result counts its runs, so the model's next request shows how often it ran.
 */
import * as z from "zod";
import { defineAgent, tool } from "../../../src/index";
import { openai } from "../../../src/providers/index";

let runs = 0;

const worker = defineAgent({
  card: { name: "Approval e2e agent", description: "Asks before it looks up a capital" },
  model: openai({ model: "gpt-4o-mini" }),
  instructions: "Answer briefly.",
  tools: {
    get_capital: tool({
      description: "The capital of a country",
      input: z.object({ country: z.string() }),
      approval: () => "Looking up capitals needs approval",
      run: ({ country }) => `${country === "UK" ? "London" : "Paris"} (run ${++runs})`,
    }),
  },
});

export const { EdgelinkContext, EdgelinkIndex } = worker;
export default worker;
