/**
 * An agent with `auth` (API keys from the AGENT_API_KEYS secret) for the e2e tests: the
 * official SDK must reach it with credentials and be refused without.
 */
import { defineAgent, textOf } from "../../../src/index";

const worker = defineAgent({
  card: { name: "Guarded e2e agent", description: "Answers signed-in callers only" },
  auth: { apiKeys: { secret: "AGENT_API_KEYS" } },
  handler: (ctx) => `Hello ${textOf(ctx.message.parts)}`,
});

export const { EdgelinkContext, EdgelinkIndex } = worker;
export default worker;
