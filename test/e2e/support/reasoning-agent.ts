/**
 * A model-backed agent with one tool and `streamReasoning` on, for the inspector's browser
 * test: its Anthropic calls go to the fake provider (ANTHROPIC_BASE_URL), which replays a
 * recorded turn that thinks, calls `fixed_version`, then answers.
 */
import * as z from "zod";
import { defineAgent, tool } from "../../../src/index";
import { anthropic } from "../../../src/providers/index";

const worker = defineAgent({
  card: { name: "Thinking e2e agent", description: "Thinks aloud and calls a tool" },
  model: anthropic({ model: "claude-sonnet-4-5" }),
  instructions: "Answer briefly.",
  streamReasoning: true,
  tools: {
    fixed_version: tool({
      description: "The version of this agent",
      input: z.object({}),
      run: () => "0.32a0",
    }),
  },
});

export const { EdgelinkContext, EdgelinkIndex } = worker;
export default worker;
