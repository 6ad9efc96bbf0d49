import { describe, expect, it } from "vitest";
import { z } from "zod";
import { resolveAgent } from "../../../src/agent/definition";
import { requestSettings, withTools } from "../../../src/agent/model/request-settings";
import { tool } from "../../../src/agent/tool";

const card = { name: "T", description: "d" };
const search = tool({
  description: "search",
  input: z.object({ q: z.string() }),
  run: () => "hits",
});

describe("a model request's settings", () => {
  it("G3 are built once per agent and instructions, with the agent's tools", () => {
    const agent = resolveAgent({ card, tools: { search }, modelSettings: { temperature: 0 } });
    const first = requestSettings(agent, "Be brief.");
    expect(first).toMatchObject({ system: "Be brief.", temperature: 0 });
    expect(first.tools?.map((t) => t.name)).toEqual(["search"]);
    expect(requestSettings(agent, "Be brief.")).toBe(first);
    expect(requestSettings(agent, "Be long.")).not.toBe(first);
    expect(requestSettings(agent, null).system).toBeUndefined();
  });

  it("G3 instructions built per task are not kept: the cache would grow with every task", () => {
    const agent = resolveAgent({ card, instructions: () => "Per task." });
    const first = requestSettings(agent, "Per task.");
    expect(requestSettings(agent, "Per task.")).not.toBe(first);
    expect(requestSettings(agent, "Per task.")).toEqual(first);
  });

  it("G8 run-time tools go after the agent's own, their schema without $schema", () => {
    const agent = resolveAgent({ card, tools: { search } });
    const settings = requestSettings(agent, null);
    expect(withTools(settings, undefined)).toBe(settings);
    expect(withTools(settings, {})).toBe(settings);
    const lookup = tool({
      description: "lookup",
      input: z.object({ id: z.string() }),
      jsonSchema: {
        $schema: "https://json-schema.org/draft/2020-12/schema",
        type: "object",
        properties: { id: { type: "string" } },
      },
      run: () => "found",
    });
    const extended = withTools(settings, { lookup });
    expect(extended.tools?.map((t) => t.name)).toEqual(["search", "lookup"]);
    expect(extended.tools?.[1]?.parameters).toEqual({
      type: "object",
      properties: { id: { type: "string" } },
    });
    expect(settings.tools).toHaveLength(1);
  });
});
