import * as z from "zod";
import { answerOf } from "../../client/convert";
import type { JsonObject } from "../../protocol/json";
import { textOf } from "../../protocol/part";
import type { AgentTools } from "../agent-tool-options";
import type { ChildRelay, DelegateTarget } from "../delegation";
import type { RunContext } from "../run-context";
import type { Tool, Tools } from "../tool";

export { type AgentToolConfig, type AgentTools, checkAgentTools } from "../agent-tool-options";

/** What the model sends an agent tool. */
const AgentInput = z.looseObject({
  message: z.string().optional().describe("What to ask the agent, in plain language"),
});

const SHOWN_SCHEMA: JsonObject = {
  type: "object",
  properties: { message: { type: "string", description: "What to ask the agent" } },
  required: ["message"],
};

/**
 * The agents as tools for one turn. A call delegates the message to the agent, keyed by
 * the model's call id, so a turn resumed after a restart re-attaches to the same child;
 * the child's answer is the result. A child that fails, is rejected or canceled is an
 * error result. One that needs input has its request relayed to this task's caller when
 * `relay` is given (the call then waits for the caller's decision, sent back to the child
 * when the turn resumes); otherwise, or when its request cannot be relayed, it answers
 * with its question.
 */
export function agentTools<Env>(
  agents: AgentTools,
  ctx: RunContext<Env>,
  relay?: ChildRelay,
): Tools {
  const out: Tools = {};
  for (const [name, config] of Object.entries(agents)) {
    const target: DelegateTarget =
      config.binding !== undefined
        ? { binding: config.binding }
        : config.url !== undefined
          ? config.url
          : (config.card as JsonObject);
    const tool: Tool = {
      description: config.description ?? `Asks the agent "${name}"; its answer is the result`,
      input: AgentInput,
      jsonSchema: SHOWN_SCHEMA,
      run: async (args, { signal, callId }) => {
        const input = args as z.output<typeof AgentInput>;
        // Models sometimes name the argument otherwise: the agent still gets the request.
        const { message, ...rest } = input;
        const text = typeof message === "string" ? message : JSON.stringify(rest);
        const child = ctx.delegate(target, text, {
          key: callId ? `tool:${callId}` : undefined,
          headers: config.headers,
          trustedOrigins: config.trustedOrigins,
          signal,
        });
        const reply = relay && callId ? relay.replyFor(callId) : undefined;
        if (reply) child.reply({ messageId: reply.messageId, parts: reply.parts });
        const task = await child.result();
        if (reply && callId) relay?.replied(callId);
        const state = task.status.state;
        if (state === "completed") return answerOf(task);
        const said = task.status.message ? textOf(task.status.message.parts) : "";
        // The call waits for the caller: its result is the child's, once it has one.
        if (state === "input-required" && callId && relay?.ask(callId, name, task)) return said;
        if (state === "input-required" || state === "auth-required") {
          return `The agent ${name} asks: ${said}`;
        }
        throw new Error(`The agent ${name} ended ${state}${said ? `: ${said}` : ""}`);
      },
    };
    out[name] = tool;
  }
  return out;
}
