/**
 * A real model-backed agent: OpenAI, Anthropic, Gemini or Workers AI, whichever has a
 * key, in that order (a fallback skips a provider whose key is missing, and moves on when
 * one fails before its answer started). Answers stream to A2A clients token by token.
 *
 * Run it locally with keys in `.dev.vars` (see docs/guides/model-agents.md):
 *   npx wrangler dev -c examples/llm.wrangler.toml
 * Deploy it with secrets:
 *   npx wrangler secret put OPENAI_API_KEY -c examples/llm.wrangler.toml
 *   npx wrangler deploy -c examples/llm.wrangler.toml
 */
import * as z from "zod";
import { defineAgent, tool } from "../src/index";
import { anthropic, fallback, gemini, openai, withRetry, workersAI } from "../src/providers/index";

const model = fallback(
  [
    withRetry(openai({ model: "gpt-4o-mini" })),
    withRetry(anthropic({ model: "claude-haiku-4-5" })),
    withRetry(gemini({ model: "gemini-2.5-flash" })),
    workersAI({ model: "@cf/meta/llama-3.3-70b-instruct-fp8-fast" }),
  ],
  { name: "example" },
);

const worker = defineAgent({
  card: {
    name: "Edgelink assistant",
    description: "A helpful assistant that can do arithmetic and tell the time.",
    skills: [{ id: "chat", description: "Answers questions", tags: ["chat"] }],
  },
  model,
  instructions: "You are a concise, helpful assistant. Use the tools when they help.",
  modelSettings: { temperature: 0.2, maxTokens: 1024 },
  tools: {
    add: tool({
      description: "Adds two numbers",
      input: z.object({ a: z.number(), b: z.number() }),
      run: ({ a, b }) => a + b,
    }),
    current_time: tool({
      description: "The current date and time in UTC, ISO 8601",
      input: z.object({}),
      run: () => new Date().toISOString(),
    }),
  },
});

export const { EdgelinkContext, EdgelinkIndex } = worker;
export default worker;
