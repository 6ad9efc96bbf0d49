/**
 * An agent with long-term memory and its routes on, behind API keys, for the inspector's
 * memory panel in chromium (test/e2e/inspector-memory.test.ts). Its handler echoes; the
 * panel and the tests write the memory through the `/memory` routes.
 */
import { defineAgent, textOf } from "../../../src/index";
import { memory } from "../../../src/memory/index";

const worker = defineAgent({
  card: { name: "Memory e2e agent", description: "Remembers its users" },
  auth: { apiKeys: { secret: "AGENT_API_KEYS" } },
  memory: memory({ api: true }),
  handler: (ctx) => `Hello ${textOf(ctx.message.parts)}`,
});

export const { EdgelinkContext, EdgelinkIndex, EdgelinkMemory } = worker;
export default worker;
