/**
 * A handler-written agent with long-term memory on, for the `memory` test project: its
 * handler uses `ctx.memory` as a message asks ("recall ...", "remember ...", "ops [...]",
 * "has memory?"), answering JSON. It shares the memory objects (EDGELINK_MEMORY) with the
 * model agent of worker.ts, with its own conversations (HANDLER_CONTEXT, HANDLER_INDEX);
 * the test worker sends it requests carrying `X-Agent: handler`.
 */
import { defineAgent, textOf } from "../../../src/index";
import { memory } from "../../../src/memory/index";
import type { MemoryOp } from "../../../src/protocol/memory";

const handlerAgent = defineAgent({
  card: {
    name: "Memory handler test agent",
    description: "Remembers through its own handler.",
    url: "http://agent.test/",
    skills: [{ id: "remember", name: "Remember", description: "Remembers", tags: ["memory"] }],
  },
  bindings: { context: "HANDLER_CONTEXT", index: "HANDLER_INDEX" },
  // Callers are who the X-User header says, in the X-Tenant header's tenant.
  auth: {
    authenticate: (request) => {
      const user = request.headers.get("X-User");
      return user ? { subject: user, tenant: request.headers.get("X-Tenant") ?? "" } : null;
    },
  },
  memory: memory({ recall: { tokenBudget: 200 } }),
  handler: async (ctx) => {
    const text = textOf(ctx.message.parts);
    if (text === "has memory?") return JSON.stringify({ memory: ctx.memory !== undefined });
    if (!ctx.memory) return JSON.stringify({ memory: false });
    if (text.startsWith("recall ")) {
      return JSON.stringify(await ctx.memory.recall(text.slice("recall ".length)));
    }
    if (text.startsWith("remember ")) {
      return JSON.stringify(await ctx.memory.remember(text.slice("remember ".length)));
    }
    if (text.startsWith("ops ")) {
      return JSON.stringify(await ctx.memory.remember(JSON.parse(text.slice(4)) as MemoryOp[]));
    }
    return JSON.stringify({ unknown: text });
  },
});

export { handlerAgent };
export const { EdgelinkContext: HandlerContext, EdgelinkIndex: HandlerIndex } = handlerAgent;
