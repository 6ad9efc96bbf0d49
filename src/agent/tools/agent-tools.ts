import * as z from "zod";
import { answerOf } from "../../client/client";
import { parsePeerCard } from "../../protocol/card/peer-card";
import type { JsonObject } from "../../protocol/json";
import { textOf } from "../../protocol/part";
import type { TaskContext } from "../context";
import type { DelegateTarget } from "../delegation";
import type { Tool, Tools } from "./tools";

/**
 * Another agent offered to the model as a tool (`agents` of `defineAgent`): its URL, its
 * card, or `{ binding: "NAME" }` for a service binding to another Worker, with a
 * description that tells the model when to call it.
 */
export interface AgentToolConfig {
  url?: string;
  binding?: string;
  card?: JsonObject;
  /** What the agent is good for, as the model sees it. */
  description?: string;
  /** Headers for every call to it (auth, for example); sent only to its own origin. */
  headers?: Record<string, string>;
  /** Other origins the headers may go to (see `trustedOrigins` of `ctx.delegate`). */
  trustedOrigins?: readonly string[];
}

export type AgentTools = Record<string, AgentToolConfig>;

const NAME = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * Checks `agents` at definition: each needs exactly one of url, binding or card, and a
 * card must be one. (`cardPrompt(card)` makes a description of it for the model.)
 */
export function checkAgentTools(agents: AgentTools | undefined, tools: Tools): AgentTools {
  if (agents === undefined) return {};
  for (const [name, config] of Object.entries(agents)) {
    const fail = (why: string): never => {
      throw new TypeError(`agents.${name}: ${why}`);
    };
    if (!NAME.test(name)) fail("a tool name is 1-64 letters, digits, '_' or '-'");
    if (Object.hasOwn(tools, name)) fail("the name is already one of the agent's tools");
    const given = [config?.url, config?.binding, config?.card].filter((v) => v !== undefined);
    if (given.length !== 1) fail("give exactly one of url, binding or card");
    if (config.url !== undefined) {
      try {
        new URL(config.url);
      } catch {
        fail(`url is not a valid URL: ${config.url}`);
      }
    }
    if (config.card !== undefined) {
      try {
        parsePeerCard(config.card);
      } catch (error) {
        const why =
          error instanceof z.ZodError
            ? error.issues.map((i) => `card.${i.path.join(".")}: ${i.message}`).join("; ")
            : String(error);
        fail(`not an agent card: ${why}`);
      }
    }
  }
  return agents;
}

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
 * error result; one that needs input answers with its question.
 */
export function agentTools<Env>(agents: AgentTools, ctx: TaskContext<Env>): Tools {
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
        const task = await child.result();
        const state = task.status.state;
        if (state === "completed") return answerOf(task);
        const said = task.status.message ? textOf(task.status.message.parts) : "";
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
