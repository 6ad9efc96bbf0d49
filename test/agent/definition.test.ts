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

describe("unknown options are refused at start, naming the nearest known one", () => {
  const refused = (config: Record<string, unknown>) => {
    try {
      resolveAgent({ card, ...config } as Parameters<typeof resolveAgent>[0]);
    } catch (error) {
      return (error as Error).message;
    }
    return "accepted";
  };

  it("a misspelt option at the top level and inside each fixed-shape option", () => {
    expect(refused({ maxIteration: 3 })).toMatch(
      /^defineAgent: unknown option maxIteration \(did you mean maxIterations\?\)/,
    );
    expect(refused({ modelSettings: { temprature: 0.2 } })).toMatch(
      /unknown option modelSettings\.temprature \(did you mean temperature\?\)/,
    );
    expect(refused({ modelSettings: { reasoning: { efort: "low" } } })).toMatch(
      /unknown option modelSettings\.reasoning\.efort \(did you mean effort\?\)/,
    );
    expect(refused({ push: { maxAttempt: 3 } })).toMatch(
      /push\.maxAttempt \(did you mean maxAttempts\?\)/,
    );
    expect(refused({ limits: { indexShard: 2 } })).toMatch(
      /limits\.indexShard \(did you mean indexShards\?\)/,
    );
    expect(refused({ contextWindow: { maxItem: 2 } })).toMatch(
      /contextWindow\.maxItem \(did you mean maxItems\?\)/,
    );
    expect(refused({ bindings: { contxt: "X" } })).toMatch(
      /bindings\.contxt \(did you mean context\?\)/,
    );
    expect(refused({ rateLimit: { perTenent: false } })).toMatch(
      /rateLimit\.perTenent \(did you mean perTenant\?\)/,
    );
    expect(refused({ auth: { apikeys: {} } })).toMatch(/auth\.apikeys \(did you mean apiKeys\?\)/);
  });

  it("a name near none is still refused, with the list of known names", () => {
    const message = refused({ modelSettings: { frobnicate: 1 } });
    expect(message).toContain("unknown option modelSettings.frobnicate; known: ");
    expect(message).toContain("temperature");
    expect(message).not.toContain("did you mean");
  });

  it("every documented option is accepted (the lists follow the types)", () => {
    expect(
      refused({
        modelSettings: { temperature: 0.2, maxTokens: 10, reasoning: { effort: "low" } },
        push: { maxAttempts: 3 },
        limits: { indexShards: 2 },
        contextWindow: { maxItems: 50 },
        bindings: { context: "C", index: "I" },
        rateLimit: false,
        maxIterations: 3,
      }),
    ).toBe("accepted");
  });
});
