import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { resolveAgent } from "../../../src/agent/definition";
import {
  decisionsToOps,
  type Extracted,
  extractAfterTurn,
  usagePatch,
} from "../../../src/memory/agent/extract";
import { resolveMemoryOptions } from "../../../src/memory/base/options";
import { scopeKeyOf } from "../../../src/memory/base/scope-key";
import { memory } from "../../../src/memory/index";
import type { MemoryStore } from "../../../src/memory/object/memory-store";
import type { MemoryFact } from "../../../src/protocol/memory";
import type { Model } from "../../../src/providers/base/types";
import { configurationProblems } from "../../../src/worker/startup";

const card = { name: "M", description: "memory options" };

describe("the memory option", () => {
  it("K8: memory is off unless given; each bad option is named when the Worker loads", () => {
    expect(resolveAgent({ card }).memory).toBeNull();
    const bad: [unknown, string][] = [
      [{ scope: "team" }, "memory.scope"],
      [{ recall: { tokenBudget: 0 } }, "memory.recall.tokenBudget"],
      [{ extract: "yes" }, "memory.extract"],
      [{ extract: { model: {} } }, "memory.extract.model"],
      [{ tools: 1 }, "memory.tools"],
      [{ api: { operatorSecret: "not a name" } }, "memory.api.operatorSecret"],
      [{ binding: "1x" }, "memory.binding"],
      [{ vectorize: "" }, "memory.vectorize"],
      [{ limits: { maxItems: -1 } }, "memory.limits.maxItems"],
      [{ embedder: { id: 1 } }, "memory.embedder"],
      [{ remember: true }, "memory: unknown option remember"],
    ];
    for (const [options, field] of bad) {
      expect(() => memory(options as never), JSON.stringify(options)).toThrow(field);
    }
    expect(() => resolveAgent({ card, memory: { scope: "owner" } as never })).toThrow(
      'memory must be memory({ scope, extract, tools, ... }) from "edgelink/memory"',
    );
  });

  it("K1: turn recording is off unless turned on; its options are checked, naming each", () => {
    expect(resolveMemoryOptions({}).turns).toBeNull();
    expect(resolveMemoryOptions({ turns: false }).turns).toBeNull();
    expect(resolveMemoryOptions({ turns: { tools: true } }).turns).toBeNull();
    expect(resolveMemoryOptions({ turns: true }).turns).toEqual({ tools: false });
    expect(resolveMemoryOptions({ turns: { record: true, tools: true } }).turns).toEqual({
      tools: true,
    });
    const bad: [unknown, string][] = [
      [{ turns: "yes" }, "memory.turns"],
      [{ turns: { record: "yes" } }, "memory.turns.record"],
      [{ turns: { record: true, tools: 1 } }, "memory.turns.tools"],
      [{ turns: { record: true, keep: 3 } }, "memory.turns: unknown option keep"],
      [{ limits: { turnRetentionDays: -1 } }, "memory.limits.turnRetentionDays"],
    ];
    for (const [options, field] of bad) {
      expect(() => resolveMemoryOptions(options as never), JSON.stringify(options)).toThrow(field);
    }
  });

  it("K8: anonymous callers have no memory; the context scope keeps owners apart; a custom key is used as given", () => {
    expect(scopeKeyOf("owner", { tenant: "", owner: "" })).toBe("");
    expect(scopeKeyOf("context", { tenant: "", owner: "", contextId: "c1" })).toBe("");
    expect(scopeKeyOf("owner", { tenant: "", owner: "o1" })).toBe("o1");
    const a = scopeKeyOf("context", { tenant: "", owner: "o1", contextId: "c1" });
    const b = scopeKeyOf("context", { tenant: "", owner: "o2", contextId: "c1" });
    expect(a).not.toBe(b);
    expect(scopeKeyOf(({ tenant }) => `team:${tenant}`, { tenant: "acme", owner: "" })).toBe(
      "team:acme",
    );
  });

  it("K8: with memory on, a missing EDGELINK_MEMORY binding is named at start-up", async () => {
    const agent = resolveAgent({ card, memory: memory() });
    const { EDGELINK_MEMORY: _, ...without } = env as unknown as Record<string, unknown>;
    const problems = await configurationProblems(agent, without, true);
    expect(problems).toEqual([expect.stringContaining("EDGELINK_MEMORY is not bound")]);
    expect(await configurationProblems(agent, env, true)).toEqual([]);
  });
});

const fact = (id: string, claim: string): MemoryFact => ({
  id,
  claim,
  claimHash: "",
  confidence: 0.8,
  source: "extraction",
  channel: "_global",
  entityIds: [],
  createdAt: "",
  updatedAt: "",
  accessCount: 0,
});
const decision = (claim: string, action: string, target = "") => ({
  claim,
  confidence: 0.9,
  action: action as "add",
  target,
  entities: [],
  validFrom: "",
  validTo: "",
});

describe("extraction's decisions", () => {
  it("K4: add, update (supersede), delete and nothing become store operations against the facts shown only", () => {
    const shown = [fact("mf_1", "The user likes tea."), fact("mf_2", "The user has a cat.")];
    const extracted: Extracted = {
      facts: [
        decision("The user likes coffee.", "update", "mf_1"),
        decision("", "delete", "mf_2"),
        decision("The user lives in Porto.", "add"),
        decision("The user likes tea.", "none"),
        decision("Not shown.", "delete", "mf_999"),
        decision("The user likes tea.", "update", "mf_1"),
      ],
      entities: [{ name: "Porto", kind: "Place", aliases: ["Oporto"] }],
    };
    expect(decisionsToOps(extracted, shown)).toEqual([
      { op: "upsert_entity", name: "Porto", aliases: ["Oporto"], type: "Place" },
      expect.objectContaining({
        op: "supersede_fact",
        id: "mf_1",
        claim: "The user likes coffee.",
      }),
      { op: "delete_fact", id: "mf_2" },
      expect.objectContaining({
        op: "add_fact",
        claim: "The user lives in Porto.",
        source: "extraction",
      }),
    ]);
  });

  it("K3: past extractionCallsPerHour, no model call is made", async () => {
    let calls = 0;
    const model = {
      provider: "x",
      model: "x",
      capabilities: {},
      streamBatches: () => {
        calls++;
        throw new Error("must not be called");
      },
    } as unknown as Model;
    const store = { reserveExtraction: async () => false } as unknown as MemoryStore;
    const report = await extractAfterTurn({
      model,
      stub: store,
      env: {},
      userText: "I like tea",
      answer: "ok",
      origin: {},
      recordUsage: () => {},
    });
    expect(report.skipped).toBe("limit");
    expect(calls).toBe(0);
  });

  it("K3: extraction's usage adds to the task's totals and is itemized", () => {
    const usage = { promptTokens: 10, completionTokens: 5, totalTokens: 15 };
    const patch = usagePatch({ usage, cost: 0.01 }, usage, 0.002);
    expect(patch).toMatchObject({
      usage: { totalTokens: 30 },
      cost: 0.012,
      memory: { extraction: { calls: 1, usage: { totalTokens: 15 }, cost: 0.002 } },
    });
  });
});

describe("memory tools in allowedTools and blockedTools", () => {
  it("the tool filter may name the memory tools when memory offers them, and only then", () => {
    const offered = resolveAgent({
      card,
      memory: memory({ tools: true }),
      blockedTools: ["forget"],
    });
    expect(offered.toolAllowed("forget")).toBe(false);
    expect(offered.toolAllowed("remember")).toBe(true);
    expect(() => resolveAgent({ card, memory: memory(), blockedTools: ["forget"] })).toThrow(
      "blockedTools: no tool named forget",
    );
  });
});
