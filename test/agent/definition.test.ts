import { describe, expect, it } from "vitest";
import { z } from "zod";
import { resolveAgent } from "../../src/agent/definition";
import { tool } from "../../src/agent/tool";
import { mcpServers } from "../../src/mcp/index";

const noop = (name: string) => tool({ description: name, input: z.object({}), run: () => name });
const tools = { search: noop("search"), add: noop("add"), shell: noop("shell") };
const card = { name: "T", description: "d" };

describe("tool filters and limits (H16)", () => {
  it("H16: the catalogue's defaults: 10 tool rounds, 20 iterations, a 300 s turn, stopOnError off", () => {
    const agent = resolveAgent({ card });
    expect(agent).toMatchObject({
      maxToolRounds: 10,
      maxIterations: 20,
      turnTimeoutMs: 300_000,
      toolTimeoutMs: 60_000,
      stopOnError: false,
      streamReasoning: false,
    });
  });

  it("H16: unset or empty allowedTools means all; blockedTools wins over allowedTools", () => {
    expect(Object.keys(resolveAgent({ card, tools }).tools)).toEqual(["search", "add", "shell"]);
    expect(Object.keys(resolveAgent({ card, tools, allowedTools: [] }).tools)).toEqual([
      "search",
      "add",
      "shell",
    ]);
    expect(
      Object.keys(resolveAgent({ card, tools, allowedTools: ["search", "shell"] }).tools),
    ).toEqual(["search", "shell"]);
    expect(
      Object.keys(
        resolveAgent({ card, tools, allowedTools: ["search", "shell"], blockedTools: ["shell"] })
          .tools,
      ),
    ).toEqual(["search"]);
  });

  it("H16: the filters apply to agents-as-tools too; with MCP servers a name may be an MCP tool", () => {
    const agents = { helper: { url: "https://helper.example.com" } };
    expect(
      Object.keys(resolveAgent({ card, tools, agents, blockedTools: ["helper"] }).agents),
    ).toEqual([]);
    expect(
      Object.keys(resolveAgent({ card, tools, agents, allowedTools: ["add"] }).agents),
    ).toEqual([]);
    expect(
      Object.keys(resolveAgent({ card, tools, agents, allowedTools: ["helper"] }).tools),
    ).toEqual([]);
    const withMcp = resolveAgent({
      card,
      tools,
      mcp: mcpServers({ docs: { url: "https://mcp.example.com/mcp" } }),
      allowedTools: ["add", "docs_search"],
    });
    expect(Object.keys(withMcp.tools)).toEqual(["add"]);
    expect(withMcp.toolAllowed("docs_search")).toBe(true);
    expect(withMcp.toolAllowed("docs_delete")).toBe(false);
  });

  it("H16: a filter naming no tool, or a limit that is not positive, is a definition error naming it", () => {
    expect(() => resolveAgent({ card, tools, blockedTools: ["rm"] })).toThrow(
      "blockedTools: no tool named rm",
    );
    expect(() => resolveAgent({ card, maxToolRounds: 0 })).toThrow(/maxToolRounds/);
    expect(() => resolveAgent({ card, turnTimeoutMs: -1 })).toThrow(/turnTimeoutMs/);
  });
});
