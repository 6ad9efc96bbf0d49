import type { z } from "zod";
import { ModelRequest } from "../../providers/base/types";
import { jsonSchemaOf } from "../../providers/tool-spec";
import type { Agent } from "../definition";
import type { Tools } from "../tool";

/** A model request without its messages: what an agent sends the same way every turn. */
export const RequestSettings = ModelRequest.omit({ messages: true });
export type RequestSettings = z.output<typeof RequestSettings>;

// An agent's tool schemas and settings are the same every turn: convert and validate
// them once per agent and instructions, not per task.
const settingsCache = new WeakMap<object, Map<string | null, RequestSettings>>();

/** The agent's settings and tool specs, with the system prompt, as a request sends them. */
export function requestSettings<Env>(agent: Agent<Env>, system: string | null): RequestSettings {
  let byInstructions = settingsCache.get(agent);
  if (!byInstructions) {
    byInstructions = new Map();
    settingsCache.set(agent, byInstructions);
  }
  let settings = byInstructions.get(system);
  if (!settings) {
    const tools = Object.entries(agent.tools).map(([name, tool]) => ({
      name,
      description: tool.description,
      parameters: tool.jsonSchema ?? jsonSchemaOf(tool.input),
    }));
    settings = RequestSettings.parse({
      ...agent.modelSettings,
      system: system ?? undefined,
      tools,
    });
    // Instructions built per task would grow the cache without bound; keep the static ones.
    if (typeof agent.instructions !== "function") byInstructions.set(system, settings);
  }
  return settings;
}

/** The settings with run-time tools (MCP) added after the agent's own. */
export function withTools(settings: RequestSettings, extra: Tools | undefined): RequestSettings {
  if (!extra || Object.keys(extra).length === 0) return settings;
  const specs = Object.entries(extra).map(([name, tool]) => {
    const { $schema: _, ...parameters } = tool.jsonSchema ?? jsonSchemaOf(tool.input);
    return { name, description: tool.description, parameters };
  });
  return RequestSettings.parse({ ...settings, tools: [...(settings.tools ?? []), ...specs] });
}
