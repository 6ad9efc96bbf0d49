import { describe, expect, it } from "vitest";
import { AgentCard, cardToV1 } from "../../../src/protocol/card/agent-card";
import {
  cardFacts,
  discoverQuery,
  encodeRegistryToken,
  REGISTRY_LIMITS,
  registryEntryId,
} from "../../../src/protocol/card/registry";
import { refusalOf } from "../../support/helpers";

const features = {
  baseUrl: "https://travel.example.com",
  streaming: true,
  pushNotifications: false,
  extendedAgentCard: false,
  hasLlm: false,
  toolCalling: false,
  delegation: false,
};

describe("registry card facts (A9)", () => {
  it("A9 reads a v1 card: its first interface URL, role and tags from the profile, skills' tags", () => {
    const card = AgentCard.parse({
      name: "Trips",
      description: "Books trips",
      role: "orchestrator",
      tags: ["Travel", "booking"],
      skills: [{ id: "fly", name: "Fly", tags: ["flights", "travel"] }],
    });
    const facts = cardFacts(cardToV1(card, features), REGISTRY_LIMITS);
    expect(facts).toStrictEqual({
      name: "Trips",
      url: "https://travel.example.com/",
      role: "orchestrator",
      tags: ["booking", "flights", "travel"],
    });
  });

  it("A9 reads a v0.3 or Edgelink-shaped card by its url; a card without a role is a worker", () => {
    expect(
      cardFacts(
        { name: " Echo ", description: "", url: "http://localhost:8787/" },
        REGISTRY_LIMITS,
      ),
    ).toStrictEqual({ name: "Echo", url: "http://localhost:8787/", role: "worker", tags: [] });
  });

  it.each([
    [{ description: "no name", url: "https://a.example" }, "card.name"],
    [{ name: "   ", url: "https://a.example" }, "card.name"],
    [{ name: "No url" }, "card.url"],
    [{ name: "Relative", url: "/agent" }, "card.url"],
    [{ name: "Scheme", url: "javascript:alert(1)" }, "card.url"],
    [{ name: "Role", url: "https://a.example", role: "king" }, "card.role"],
    [{ name: "Tags", url: "https://a.example", tags: "travel" }, "card.tags"],
    [{ name: "Tags", url: "https://a.example", tags: [""] }, "card.tags"],
    [{ name: "Skill", url: "https://a.example", skills: [{ tags: [7] }] }, "card.skills.0.tags"],
    [
      {
        name: "Many",
        url: "https://a.example",
        tags: Array.from({ length: 65 }, (_, i) => `t${i}`),
      },
      "card.tags",
    ],
  ])("A9 refuses a card it cannot list, naming the field (%#)", (card, field) => {
    const error = refusalOf(() => cardFacts(card, REGISTRY_LIMITS));
    expect(error.kind).toBe("InvalidParams");
    expect(error.fieldViolations.map((v) => v.field)).toStrictEqual([field]);
  });

  it("A9 a URL is read in its canonical form: one agent written two ways is one entry", () => {
    const facts = (url: string) => cardFacts({ name: "A", url }, REGISTRY_LIMITS).url;
    expect(facts("HTTPS://Agent.Example")).toBe("https://agent.example/");
    expect(facts("https://agent.example:443/a/../b")).toBe("https://agent.example/b");
  });

  it("A9 an entry's id is stable for its URL and differs between URLs", async () => {
    const a = await registryEntryId("https://a.example/");
    expect(a).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(await registryEntryId("https://a.example/")).toBe(a);
    expect(await registryEntryId("https://b.example/")).not.toBe(a);
  });
});

describe("registry discovery query (A9)", () => {
  const query = (q: string) => discoverQuery(new URLSearchParams(q), REGISTRY_LIMITS);

  it("A9 reads name, role, tags (lowercase, once each), page size and token", () => {
    const token = encodeRegistryToken({ name: "trips", id: "x".repeat(22) });
    expect(
      query(`name=Trips&role=worker&tag=Travel&tag=travel&tag=b&pageSize=7&pageToken=${token}`),
    ).toStrictEqual({
      name: "trips",
      role: "worker",
      tags: ["travel", "b"],
      pageSize: 7,
      after: { name: "trips", id: "x".repeat(22) },
    });
    expect(query("")).toStrictEqual({ tags: [], pageSize: 100, after: null });
  });

  it.each([
    ["color=red", "color"],
    ["name=", "name"],
    ["name=a&name=b", "name"],
    ["role=king", "role"],
    [Array.from({ length: 17 }, (_, i) => `tag=t${i}`).join("&"), "tag"],
    ["pageSize=0", "pageSize"],
    ["pageSize=101", "pageSize"],
    ["pageSize=1.5", "pageSize"],
    ["pageToken=%%%", "pageToken"],
    ["pageToken=bm90LWpzb24", "pageToken"],
  ])("A9 refuses %s naming %s", (q, field) => {
    const error = refusalOf(() => query(q));
    expect(error.kind).toBe("InvalidParams");
    expect(error.fieldViolations.map((v) => v.field)).toStrictEqual([field]);
  });
});
