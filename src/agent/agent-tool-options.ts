import * as z from "zod";
import { parsePeerCard } from "../protocol/card/peer-card";
import type { JsonObject } from "../protocol/json";
import type { Tools } from "./tool";

// The agents option (other agents as tools), checked when the agent is defined; the
// model turn makes them tools (tools/agent-tools.ts).

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
